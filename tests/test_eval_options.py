"""eval and batch eval take compact's summariser options (issue 25 item 5): the run settings reach the real
openai client, --dump-dir writes every call's dump where replay verifies it, and a --set applies to the
chains it fits."""

from __future__ import annotations

import orjson
import pytest
from claude_lines import SID
from needed_sessions import claude_session
from openai_server import FakeOpenAI, error
from typer.testing import CliRunner

from tcompact.app import app


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as s:
        yield s


def _eval(path, url, *args):
    return CliRunner(env={"OPENAI_API_KEY": "sk-test"}).invoke(
        app, ["eval", str(path), "-c", "full", "--summarizer", "openai", "--model", "m", "--base-url", url, "--json",
              *args])


def test_max_retries_and_the_request_mode_reach_the_summariser(server, tmp_path):
    path = claude_session(tmp_path / "s.jsonl")
    server.clear()
    server.enqueue(error(503, "busy"), error(503, "busy"), error(503, "busy"))
    result = _eval(path, server.base_url, "--max-retries", "1")
    assert result.exit_code == 1 and len(server.requests) == 2  # one attempt and one retry
    assert orjson.loads(result.stdout)["files"][0]["results"][0]["status"] == "failed"
    server.clear()
    assert _eval(path, server.base_url, "--max-retries", "0", "--request-mode", "serialized").exit_code in (0, 1)
    serialized = server.requests[0].body["messages"]
    server.clear()
    _eval(path, server.base_url, "--max-retries", "0")
    conversation = server.requests[0].body["messages"]
    assert (len(serialized), [m["role"] for m in serialized]) == (2, ["system", "user"])
    assert len(conversation) > 2


def test_an_openai_option_without_the_openai_summariser_is_refused(tmp_path):
    result = CliRunner().invoke(app, ["eval", str(claude_session(tmp_path / "s.jsonl")), "--request-mode",
                                      "serialized"])
    assert (result.exit_code, result.stderr) == (2, "Error: --request-mode is an option of the openai summariser, and "
                                                    "the summariser is extractive — add --summarizer openai, or "
                                                    "leave --request-mode out\n")


def _tree(folder):
    return sorted((str(p.parent.relative_to(folder)), p.name.split("_", 1)[1]) for p in folder.rglob("*.json"))


def test_dump_dir_holds_one_folder_per_session_and_chain_and_replay_verifies_it(tmp_path):
    path = claude_session(tmp_path / "s.jsonl")
    runner = CliRunner()
    result = runner.invoke(app, ["eval", str(path), "--metric", "both", "-c", "full", "-c", "truncate,full",
                                 "--dump-dir", str(tmp_path / "d")])
    assert result.exit_code == 0, result.stderr
    expected = [(f"{SID}/{where}", f"full_{SID}.json") for where in (
        "cut-3/full", "cut-3/truncate-full", "cut-5/full", "cut-5/truncate-full", "cut-7/full", "cut-7/truncate-full",
        "cut-9/full", "cut-9/truncate-full", "full", "truncate-full")]
    assert _tree(tmp_path / "d") == expected
    replay = runner.invoke(app, ["replay", *sorted({str(p.parent) for p in (tmp_path / "d").rglob("*.json")})])
    assert replay.exit_code == 0 and replay.stdout.endswith("10 dump(s): 10 OK, 0 mismatched\n"), replay.stdout
    batch = runner.invoke(app, ["batch", "eval", str(path), "--out", str(tmp_path / "out"), "--metric", "needed",
                                "-c", "full", "--dump-dir", str(tmp_path / "bd"), "--workers", "1"])
    assert batch.exit_code == 0, batch.stderr
    assert _tree(tmp_path / "bd") == [e for e in expected if e[0].endswith("/full") and "/cut-" in e[0]]


def test_a_set_applies_to_the_chains_it_fits_and_one_that_fits_none_is_refused(tmp_path):
    path = str(claude_session(tmp_path / "s.jsonl"))
    run = CliRunner().invoke
    result = run(app, ["eval", path, "--json", "--metric", "needed", "-c", "micro", "-c", "truncate",
                       "--set", "truncate.max_lines=8", "--set", "keep_recent_per_tool=0"])
    assert result.exit_code == 0, result.stderr
    micro, truncate, *_ = orjson.loads(result.stdout)["needed"]["summary"]
    assert (micro["recoverable"], truncate["recoverable"]) == (9, 6)
    for setting in ("mirco.min_tokens=1", "max_linez=8"):
        result = run(app, ["eval", path, "-c", "micro", "-c", "truncate", "--set", setting])
        assert (result.exit_code, result.stderr) == (2, f"Error: --set {setting!r} fits no chain evaluated — the "
                                                        "chains are: micro truncate; see `tcompact compressors`\n")
