"""A hypothesis strategy for the property tests of the compressors and summarisers: chat sessions of
every shape they meet, built as messages (no file), well-formed the way real sessions are.

A session has a system prompt (sometimes a second system or developer message later), real user
requests of any length — some with a constraint —, harness text in the user role (reminders,
hook feedback, slash-command wrappers), assistant texts, and tool steps: one or two calls, each
answered by its result before the next assistant message (outputs of one line to hundreds, some
with an error line, some failing). The last step may be left unanswered (an in-flight call).
"""

from __future__ import annotations

import orjson
from hypothesis import strategies as st

from tcompact.model import Message, ToolCall

HARNESS = ("<system-reminder>The date changed.</system-reminder>",
           "Stop hook feedback:\n[~/.claude/stop.sh]: Cannot exit with unstaged changes",
           "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>")
_TOOLS = (("Bash", "command", "pytest -q tests/test_{n}.py"), ("Read", "file_path", "/repo/src/mod_{n}.py"),
          ("Grep", "pattern", "def handler_{n}"), ("Edit", "file_path", "/repo/src/mod_{n}.py"))
_WORDS = ("parser", "cache", "export", "schema", "retry", "token", "shard", "index", "writer", "config")


def _words(draw, low: int, high: int, salt: int) -> str:
    n = draw(st.integers(min_value=low, max_value=high))
    picks = draw(st.lists(st.sampled_from(_WORDS), min_size=n, max_size=n))
    return " ".join(f"{w}{salt}" if k % 7 == 0 else w for k, w in enumerate(picks))


def _output(draw, n: int) -> tuple[str, bool]:
    lines = draw(st.sampled_from((1, 3, 40, 400)))
    body = [f"{n}.{k} collected item {k % 13}" for k in range(lines)]
    failed = draw(st.booleans()) and draw(st.booleans())
    if failed or draw(st.integers(min_value=0, max_value=4)) == 0:
        body.insert(len(body) // 2, f"ValueError: invalid shard id s{n} (expected 8 hex digits)")
    return "\n".join(body), failed


def _step(draw, n: int) -> list[Message]:
    calls = []
    for k in range(draw(st.integers(min_value=1, max_value=2))):
        name, key, value = draw(st.sampled_from(_TOOLS))
        calls.append(ToolCall(f"call_{n}_{k}", name, orjson.dumps({key: value.format(n=n)}).decode()))
    out = [Message(role="assistant", content=draw(st.sampled_from(("", f"Checking step {n}."))), tool_calls=tuple(calls))]
    for c in calls:
        text, failed = _output(draw, n)
        out.append(Message(role="tool", content=text, tool_call_ids=(c.id,), is_error=failed))
    return out


@st.composite
def sessions(draw, *, max_turns: int = 14) -> list[Message]:
    """A generated chat session (see the module docstring); at least one real user request."""
    out = [Message(role="system", content="You are a coding agent. Follow the repository's rules.")]
    turns = draw(st.integers(min_value=1, max_value=max_turns))
    asked = False
    for n in range(turns):
        kind = draw(st.sampled_from(("user", "user", "harness", "step", "step", "step", "answer", "system")))
        if kind == "user" or (n == turns - 1 and not asked):
            text = _words(draw, 3, draw(st.sampled_from((12, 60, 400))), n)
            if draw(st.booleans()):
                text += f" Never modify vendor/lib{n}/ and keep the public API of module{n}."
            out.append(Message(role="user", content=f"Request {n}: {text}."))
            asked = True
        elif kind == "harness":
            out.append(Message(role="user", content=draw(st.sampled_from(HARNESS))))
        elif kind == "step":
            out += _step(draw, n)
        elif kind == "answer":
            out.append(Message(role="assistant", content=f"Done with part {n}: " + _words(draw, 5, 80, n) + "."))
        else:
            out.append(Message(role=draw(st.sampled_from(("system", "developer"))), content=f"Rule {n}: be terse."))
    if draw(st.booleans()):  # an in-flight call at the end
        out.append(Message(role="assistant", tool_calls=(ToolCall(f"call_last_{turns}", "Bash", '{"command": "ls"}'),)))
    return out


def _call(cid: str, name: str, **args: object) -> Message:
    return Message(role="assistant", tool_calls=(ToolCall(cid, name, orjson.dumps(args).decode()),))


def _result(cid: str, text: str, *, error: bool = False) -> Message:
    return Message(role="tool", content=text, tool_call_ids=(cid,), is_error=error)


def tool_heavy_session(rounds: int = 8) -> tuple[Message, ...]:
    """An invented, deterministic coding session of ``rounds`` requests that exercises every section a
    summary has: multi-line requests with constraints, a plan, file reads (numbered lines), writes, edits
    (one failing), a failing command fixed by a rerun and one never fixed, a long test log with an error
    line in its middle, a sub-agent report, decisions and a correction, and a final answer with code."""
    out = [Message(role="system", content="You are a coding agent working in /srv/app.")]
    for r in range(rounds):
        out.append(Message(role="user", content=(
            f"Round {r}: port module_{r} of the `billing` package to the new API.\n"
            f"Never change the public signature of charge_{r}() and keep tests/test_module_{r}.py green."
            if r % 2 == 0 else f"Now review module_{r}; prefer small commits.")))
        out += [_call(f"t{r}", "TodoWrite", todos=[
                    {"content": f"port module_{k}", "status": "completed" if k < r else "in_progress" if k == r
                     else "pending"} for k in range(rounds)]),
                _result(f"t{r}", "Todos have been modified successfully."),
                _call(f"r{r}", "Read", file_path=f"/srv/app/billing/module_{r}.py"),
                _result(f"r{r}", "".join(f"{n:6d}→{line}\n" for n, line in enumerate(
                    [f'"""Charges of module {r}: one function per tariff."""', "import decimal", "",
                     f"def charge_{r}(amount):", "    return decimal.Decimal(amount)", f"class Tariff{r}:",
                     "    rate = 3"], start=1))),
                Message(role="assistant", content=(
                    f"I decided to keep charge_{r}() and wrap the new API inside it, because callers pin it. "
                    f"The root cause of the rounding bug is the float in `Tariff{r}.rate`."),
                    tool_calls=(ToolCall(f"e{r}", "Edit", orjson.dumps({
                        "file_path": f"/srv/app/billing/module_{r}.py", "old_string": "rate = 3",
                        "new_string": "rate = decimal.Decimal(3)"}).decode()),)),
                _result(f"e{r}", f"The file /srv/app/billing/module_{r}.py has been updated."),
                _call(f"p{r}", "Bash", command=f"python -m pytest -q tests/test_module_{r}.py"),
                _result(f"p{r}", f"Exit code 1\n..F\nE   AssertionError: assert Decimal('3') == 3.0\n"
                                 f"FAILED tests/test_module_{r}.py::test_rate\n1 failed, 2 passed in 0.2{r}s",
                        error=True),
                _call(f"q{r}", "Bash", command=f"python -m pytest -q tests/test_module_{r}.py"),
                _result(f"q{r}", f"...\n3 passed in 0.1{r}s")]
        if r == 1:
            log = "\n".join(f"step {n} ok" for n in range(1500))
            out += [_call("lint", "Bash", command="make lint"),
                    _result("lint", "Exit code 2\nmake: *** [Makefile:12: lint] Error 2", error=True),
                    _call("build", "Bash", command="./build.sh --all"),
                    _result("build", f"{log}\nERROR: could not connect to cache-7.internal:6379\n{log}\nbuild done")]
        if r == 3:
            out += [_call("agent", "Task", description="audit", prompt="find callers of charge_3"),
                    _result("agent", "Error handling is centralised in billing/errors.py; charge_3 has 4 callers."),
                    Message(role="assistant", content="Actually, `Tariff3.rate` was never a float: the bug is in "
                                                      "`round_half` of billing/util.py.")]
        out.append(Message(role="assistant", content=(
            f"Ported module_{r}. Here is the wrapper:\n\n```python\ndef charge_{r}(amount):\n"
            f"    return new_api.charge(amount, tariff=Tariff{r})\n```\n\nAll tests of module_{r} pass.")))
    return tuple(out)


def chat_bytes(messages) -> bytes:
    """The messages as a chat JSON Lines file (the format's own keys)."""
    lines = []
    for m in messages:
        d: dict[str, object] = {"role": m.role, "content": m.text}
        if m.tool_calls:
            d["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                               for c in m.tool_calls]
        if m.tool_call_ids:
            d["tool_call_id"] = m.tool_call_ids[0]
        lines.append(orjson.dumps(d))
    return b"\n".join(lines) + b"\n"
