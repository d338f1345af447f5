"""Secrets planted in a transcript and in the environment never reach a dump, a report or the log.

The compacted transcript itself keeps the messages it keeps verbatim (they are the user's); every
text tcompact writes of its own — summaries, memory blocks, dumps, the report, stdout and stderr —
is redacted, and the API key is never written anywhere.
"""

from __future__ import annotations

import orjson
import pytest
from conftest import call, jsonl, msg
from openai_server import FakeOpenAI, ok
from typer.testing import CliRunner

from tcompact.app import app

OPENAI_KEY = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6" * 2
ENV_KEY = "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp" * 2  # the summariser's own key, from the environment
GITHUB = "ghp_" + "N3v3rW1llB3Sh0wnAnyWh3r3Ok1234567890"
AWS_ID = "AKIAZ7QRSTUVWXYZ2345"
AWS_SECRET = "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"
BEARER = "eyTokEn.9f8e7d6c5b4a39281706f5e4d3c2b1a0Ff"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
       "QyNTUxOQAAACDxq0Ztq3Vb7P2uJmYw8Zr9kQeXbJ1N5oHnR6sT4vYcAAAAJjKc0ZyynNG\n-----END OPENSSH PRIVATE KEY-----")
PLANTED = [OPENAI_KEY, GITHUB, AWS_ID, AWS_SECRET, BEARER, PEM.splitlines()[1]]


def _session(path):
    """Six rounds; each plants every secret in a request, a call's arguments and a tool result."""
    records = [msg("system", "You are a coding agent.")]
    for n in range(6):
        records += [
            msg("user", f"Round {n}: deploy with OPENAI_API_KEY={OPENAI_KEY} and push with {GITHUB}. " + "ctx " * 300),
            msg("assistant", f"Setting the credentials (round {n}).", tool_calls=[call(
                f"c{n}", "bash", {"command": f"export AWS_ACCESS_KEY_ID={AWS_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET}"
                                             f" && curl -H 'Authorization: Bearer {BEARER}' https://api.example"})]),
            msg("tool", f"wrote ~/.ssh/id_ed25519:\n{PEM}\nexit 0\n" + "log line\n" * 200, tool_call_id=f"c{n}"),
            msg("assistant", f"Round {n} deployed."),
        ]
    return jsonl(path, records)


def _written_by_tcompact(folder, output):
    """Every file under ``folder`` except the input and the compacted transcript, as one blob."""
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*"))
                    if p.is_file() and p.name not in ("session.jsonl", output))


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    return _session(tmp_path / "session.jsonl")


@pytest.mark.parametrize("chain", ["dialogue", "current-round", "full", "round-level", "micro,dialogue",
                                   "offload,dialogue"])
def test_extractive_runs_write_no_secret(env, tmp_path, chain):
    result = CliRunner().invoke(app, ["compact", str(env), "-c", chain, "--now", "-o", "out.jsonl",
                                      "--dump-dir", "dumps", "--report", "report.json", "--json",
                                      "--context-window", "20000"])
    assert result.exit_code == 0, result.stderr
    written = _written_by_tcompact(tmp_path, "out.jsonl")
    log = (result.stdout + result.stderr).encode()
    assert b"[REDACTED:" in written  # the dumps held the planted secrets, redacted
    for secret in [*PLANTED, ENV_KEY]:
        assert secret.encode() not in written, (chain, secret[:12])
        assert secret.encode() not in log, (chain, secret[:12])
    summaries = [m for m in map(orjson.loads, (tmp_path / "out.jsonl").read_bytes().splitlines())
                 if "memory_block" in str(m.get("content")) or "[ROUND_LEVEL_MEMORY_BLOCK]" in str(m.get("content"))
                 or "continued from a previous conversation" in str(m.get("content"))]
    assert summaries, chain
    for secret in PLANTED:
        assert secret not in orjson.dumps(summaries).decode(), (chain, secret[:12])


def test_a_model_that_echoes_secrets_and_the_api_key_gets_redacted(env, tmp_path):
    echoed = (f"<state_snapshot>\n1. Active Task\ndeploy with {OPENAI_KEY}; key in use {ENV_KEY}; "
              f"Authorization: Bearer {BEARER}\n</state_snapshot>")
    with FakeOpenAI() as server:
        server.enqueue(ok(echoed))
        result = CliRunner().invoke(app, [
            "compact", str(env), "-c", "dialogue", "--now", "--summarizer", "openai", "--model", "m",
            "--base-url", server.base_url, "-o", "out.jsonl", "--dump-dir", "dumps", "--report", "report.json"])
        assert result.exit_code == 0, result.stderr
        assert server.requests[0].headers["authorization"] == f"Bearer {ENV_KEY}"  # it was sent, not written
    written = _written_by_tcompact(tmp_path, "out.jsonl")
    output = (tmp_path / "out.jsonl").read_bytes()
    (summary,) = [m["content"] for m in map(orjson.loads, output.splitlines()) if "Active Task" in str(m["content"])]
    assert ("deploy with [REDACTED:openai_key]; key in use [REDACTED:openai_key]; "
            "Authorization: Bearer [REDACTED:authorization]\n" in summary)
    for secret in [*PLANTED, ENV_KEY]:
        assert secret.encode() not in written, secret[:12]
        assert secret not in summary, secret[:12]
        assert secret not in result.stdout + result.stderr, secret[:12]
    assert ENV_KEY.encode() not in output
