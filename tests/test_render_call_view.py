"""render/call_view.py: the live lines of summariser calls while ``compact`` runs — shown on a terminal only,
where the reply is streamed so the view can count it; with ``--json`` or on a pipe the call is one answer."""

from __future__ import annotations

import re

import pytest
from conftest import SAMPLES
from openai_server import FakeOpenAI, ok, streamed
from typer.testing import CliRunner

from tcompact.app import app

CHAT = SAMPLES / "chat_tool_session.jsonl"
PIECES = ("<state_snapshot>\n1. Active Task\n", "export fix in rosterkit/export.py", "\n</state_snapshot>")


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-call-view")
        yield fake


def compact(server, *extra, terminal: bool):
    env = {"TTY_COMPATIBLE": "1", "COLUMNS": "200"} if terminal else {"TTY_COMPATIBLE": "0"}
    return CliRunner().invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", "--summarizer", "openai",
                                    "--model", "fake-model", "--base-url", server.base_url, "-o", "out.jsonl",
                                    "--timeout", "5", *extra], env=env)


def test_on_a_terminal_each_call_leaves_its_line_once_it_is_over(server):
    server.enqueue(streamed(*PIECES))
    result = compact(server, terminal=True)
    assert result.exit_code == 0, result.stderr
    assert server.requests[0].body["stream"] is True
    # the three pieces of the reply received; the tokens sent as counted here; the seconds as long as it took
    done = re.findall(r"dialogue: summariser call 1 of 1: 8,554 tokens sent, 3 received, \d+ s \(done\)\n",
                      result.stderr)
    assert len(done) == 1
    assert "(running)" not in result.stderr.split("(done)")[-1]  # the live line goes with the call


@pytest.mark.parametrize(("extra", "terminal"), [(("--json",), True), ((), False)])
def test_with_json_or_on_a_pipe_the_call_is_one_answer_and_no_line_is_shown(server, extra, terminal):
    server.enqueue(ok("".join(PIECES)))
    result = compact(server, *extra, terminal=terminal)
    assert result.exit_code == 0, result.stderr
    assert "stream" not in server.requests[0].body
    assert "summariser call" not in result.stderr

