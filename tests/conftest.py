"""Shared test helpers: where the real transcripts are, and builders for small fixture files."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from tcompact.summarizers.base import Summarizer

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_transcripts"
SHARED = Path(os.environ.get("TCOMPACT_SHARED_DIR", REPO.parent / "shared")) / "transcripts"

REAL_FILES = {
    "ccviewer": "claude_ccviewer_5c0375b4_japanese_task_subagents.jsonl",
    "codemie": "claude_codemie_3fe1b6bc_thinking.jsonl",
    "drmaciver": "claude_drmaciver_python_to_rust_port.jsonl",
    "codex": "codex_codemie_rollout_019e1695_desktop.jsonl",
    "sweagent": "openai_sweagent_marshmallow-1867_function_calling.traj",
}


@pytest.fixture(autouse=True)
def _no_real_session_stores(tmp_path_factory, monkeypatch):
    """No test reads the machine's own ~/.claude or ~/.codex: the store variables point at an empty folder
    (tests of the sessions on a machine set them, and HOME, to their own test home)."""
    empty = tmp_path_factory.getbasetemp() / "no-session-stores"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(empty / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(empty / ".codex"))


def real_file(key: str) -> Path:
    """A file of ../shared/transcripts; skips (with the reason shown) when that folder is absent."""
    path = SHARED / REAL_FILES[key]
    if not path.exists():
        pytest.skip(f"real transcripts not found at {SHARED} (set TCOMPACT_SHARED_DIR); CI always has them")
    return path


def jsonl(path: Path, records: Iterable[Mapping[str, Any] | str | bytes]) -> Path:
    """Write records (dicts, or raw str/bytes lines) as a JSONL file and return its path."""
    out = bytearray()
    for r in records:
        if isinstance(r, bytes):
            out += r if r.endswith(b"\n") else r + b"\n"
        elif isinstance(r, str):
            out += (r if r.endswith("\n") else r + "\n").encode()
        else:
            out += orjson.dumps(r) + b"\n"
    path.write_bytes(bytes(out))
    return path


def call(cid: str, name: str, args: Mapping[str, Any] | str) -> dict[str, Any]:
    """An OpenAI tool call dict."""
    arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def msg(role: str, content: Any = None, **kw: Any) -> dict[str, Any]:
    """A chat message dict."""
    return {"role": role, "content": content, **kw}



def user(text: str = "task", **kw: Any) -> Any:
    """A user Message (a real request unless its text is injected context or ``internal`` is set)."""
    from tcompact.model import Message

    return Message(role="user", content=text, **kw)


def calls(*call_ids: str, text: str = "") -> Any:
    """An assistant Message calling bash once per id."""
    from tcompact.model import Message, ToolCall

    return Message(role="assistant", content=text, tool_calls=tuple(ToolCall(c, "bash", "{}") for c in call_ids))


def result(call_id: str) -> Any:
    """A tool Message answering ``call_id``."""
    from tcompact.model import Message

    return Message(role="tool", content="ok", tool_call_ids=(call_id,))


#: Texts that trip tokenizers: code, CJK with emoji, leading blanks and CRLF, a special token as plain text, nothing.
EDGE_TEXTS = [
    "hello world",
    "def add(a, b):\n    return a + b\n",
    "日本語のテキストとemoji 🎉 mixed",
    "  leading spaces and\r\nCRLF\r\n",
    "<|endoftext|> is ordinary text here",
    "",
]


#: A small chat session: a system prompt, two requests, one tool call and its failing result.
SESSION = [
    msg("system", "You are a coding agent."),
    msg("user", "Fix the failing test in parser.py"),
    msg("assistant", "", tool_calls=[call("c1", "run_tests", "{}")]),
    msg("tool", "FAILED test_parser.py::test_empty - IndexError: list index out of range", tool_call_id="c1"),
    msg("assistant", "The parser indexes an empty list; fixed."),
    msg("user", "Thanks. Now add a changelog entry."),
    msg("assistant", "Added."),
]

@pytest.fixture(scope="session")
def _token_cache_dir(tmp_path_factory):
    """One token cache folder for the whole test session, never the user's."""
    return tmp_path_factory.mktemp("token-cache")


@pytest.fixture(autouse=True)
def _hermetic_token_cache(_token_cache_dir, monkeypatch):
    """Every test (and every tcompact process it starts) uses the session's temporary token cache, with
    caching on: the user's cache folder is never read or written. A test that needs a cache of its
    own sets TCOMPACT_CACHE_DIR itself; a ``--no-cache`` run inside a test is undone after it."""
    monkeypatch.setenv("TCOMPACT_CACHE_DIR", str(_token_cache_dir))
    monkeypatch.setenv("TCOMPACT_NO_CACHE", "")


@pytest.fixture(scope="module")
def counter():
    """A token counter (o200k_base), one per test module."""
    from tcompact.counting.tokens import TokenCounter

    return TokenCounter()


@pytest.fixture(scope="module")
def summarizer(counter):
    """The extractive summariser over ``counter``."""
    from tcompact.summarizers.extractive import ExtractiveSummarizer

    return ExtractiveSummarizer(counter)


@pytest.fixture
def encoding():
    """The bundled o200k_base encoding."""
    from tcompact.counting.tokens import load_encoding

    return load_encoding("o200k_base")


@pytest.fixture
def ntok(encoding):
    """Tokens of a text, straight from tiktoken."""
    return lambda text: len(encoding.encode_ordinary(text))


class FakeSummarizer(Summarizer):
    """A summariser that answers from a queue and records every request it was sent."""

    name = "fake"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def enqueue(self, reply):
        """Queue a reply text, an exception to raise, or a function of the request giving either."""
        self.replies.append(reply)
        return self

    def summarize(self, request):
        from tcompact.summarizers.base import SummaryResponse

        self.calls.append(request)
        if not self.replies:
            raise AssertionError("FakeSummarizer: no reply queued")
        reply = self.replies.pop(0)
        if callable(reply):  # computed from the request (e.g. echoing its block ids)
            reply = reply(request)
        if isinstance(reply, BaseException):
            raise reply
        return SummaryResponse(text=reply, usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                               model="fake-model", latency_s=0.25)


@pytest.fixture
def screen(monkeypatch, capsys):
    """``screen()``: what a terminal view printed since the last call, at 80 columns, each line's trailing
    spaces cut (the views print through ``tcompact.render.console``, which reads ``COLUMNS``)."""
    monkeypatch.setenv("COLUMNS", "80")

    def shown() -> str:
        return "".join(line.rstrip() + "\n" for line in capsys.readouterr().out.splitlines())

    return shown


@pytest.fixture
def runner(tmp_path, monkeypatch):
    """A CliRunner in the test's temp folder, 100 columns wide, with no OpenAI key in the environment (the
    batch tests' runner; a module with other needs defines its own ``runner``, which takes precedence)."""
    from typer.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return CliRunner()
