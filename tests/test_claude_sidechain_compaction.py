"""A sub-agent compacted inside a Claude Code 1.0 session file, where its lines sit between the main chain's
(issue 23 item 8): the compaction takes the sub-agent's place, the main chain stays as it was.

Fixture (``claude_lines.interleaved_sidechain_session``): a main chain of four messages whose Task call started a
sub-agent; the sub-agent's seven messages (``isSidechain``, no ``agentId``, the first line without a parent: the
transcript ``sidechain-s1``) lie between the call and its result, as Claude Code wrote them before 2.0.
"""

from __future__ import annotations

import json

import orjson
import pytest
from claude_lines import interleaved_sidechain_session
from conftest import real_file
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.formats import read_file


def shape(messages):
    return [(m.role, m.text, [c.id for c in m.tool_calls], m.tool_call_ids) for m in messages]


@pytest.fixture
def session(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in interleaved_sidechain_session()))
    return path


def compact(path, transcript, compressor, out, *extra):
    return CliRunner().invoke(app, ["compact", str(path), "--transcript", transcript, "-c", compressor, "--now",
                                    "-o", str(out), *extra])


@pytest.mark.parametrize("compressor", ["full", "current-round", "round-level"])
def test_a_compacted_subagent_takes_the_place_of_its_old_lines(session, tmp_path, compressor):
    out = tmp_path / "out.jsonl"
    result = compact(session, "sidechain-s1", compressor, out, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["status"], report["invariants"]) == ("compacted", [])
    assert json.loads(out.with_suffix(".report.json").read_text())["outputs"]["transcript"] == str(out)
    before, after = read_file(session), read_file(out)
    # the same transcripts: the main chain as it was, the sub-agent under its id with the compacted messages
    assert [t.id for t in after.transcripts] == [t.id for t in before.transcripts] == ["main", "sidechain-s1"]
    assert shape(after.transcript("main").messages) == shape(before.transcript("main").messages)
    assert [m.source for m in after.transcript("main").messages] == [m.source for m in before.transcript("main").messages]
    side = after.transcript("sidechain-s1")
    assert len(side.messages) == report["after"]["messages"] < 7 and side.parent_tool_call == "toolu_task"
    assert side.compactions[-1].pre_tokens == report["before"]["tokens"]
    # every line stays; the boundary and the new chain follow, all of them the sub-agent's
    data = out.read_bytes()
    assert data.startswith(session.read_bytes())
    added = [orjson.loads(x) for x in data[len(session.read_bytes()):].splitlines()]
    assert (added[0]["subtype"], added[0]["parentUuid"], added[0]["logicalParentUuid"]) == (
        "compact_boundary", None, "s7")
    assert {(d["isSidechain"], "agentId" in d) for d in added} == {(True, False)}


def test_the_terminal_says_where_the_subagent_was_written(session, tmp_path):
    out = tmp_path / "out.jsonl"
    result = compact(session, "sidechain-s1", "full", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (f"Wrote 3 file(s): the transcript {out}, 1 dump(s) in "
                                              f"{out.with_suffix('.dumps')}, the report {out.with_suffix('.report.json')}")


@pytest.mark.parametrize("compressor", ["full", "round-level"])
def test_a_subagent_of_a_real_pre_2_0_session_is_compacted_in_its_file(tmp_path, compressor):
    """claude_ccviewer_5c0375b4 (Claude Code 1.0.108): two sub-agents' lines in the main file."""
    src = real_file("ccviewer")
    out = tmp_path / "out.jsonl"
    result = compact(src, "sidechain-83e2917c", compressor, out, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["status"], report["invariants"]) == ("compacted", [])
    before, after = read_file(src), read_file(out)
    assert [t.id for t in after.transcripts] == [t.id for t in before.transcripts]
    for t in before.transcripts:
        if t.id != "sidechain-83e2917c":
            assert shape(after.transcript(t.id).messages) == shape(t.messages), t.id
    assert len(after.transcript("sidechain-83e2917c").messages) == report["after"]["messages"] < 14
