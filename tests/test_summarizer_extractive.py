"""The extractive summariser: exact section contents on small hand-built transcripts, every contract's
headings, determinism, the token budget on a real session, carried checkpoints and redaction."""

from __future__ import annotations

import re

import orjson
import pytest
from conftest import real_file
from tcompact.formats import read_file
from tcompact.model import Message, ToolCall
from tcompact.summarizers.base import SummarizerError, SummaryRequest, SummaryResponse
from tcompact.summarizers.contracts import SECTIONS, extract_snapshot
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.tokens import TokenCounter

REQUEST = ("Fix the failing export test in rosterkit/export.py. Don't change the public API and please keep "
           "the CSV header as is.")


def call(cid: str, name: str, args: dict | str, kind: str = "function") -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=args if isinstance(args, str) else orjson.dumps(args).decode(),
                    type=kind)


def assistant(text: str = "", *calls: ToolCall) -> Message:
    return Message(role="assistant", content=text, tool_calls=calls)


def result(cid: str, text: str, error: bool = False) -> Message:
    return Message(role="tool", content=text, tool_call_ids=(cid,), is_error=error)


def user(text: str, internal: bool = False) -> Message:
    return Message(role="user", content=text, internal=internal)


def session() -> tuple[Message, ...]:
    """Read, a failing test run, an edit, a failing lint that is never fixed, a passing full run."""
    return (
        Message(role="system", content="You are a coding agent."),
        user(REQUEST),
        assistant("I'll look at the exporter first.", call("c1", "Read", {"file_path": "/repo/rosterkit/export.py"})),
        result("c1", '     1→"""CSV export of the member roster."""\n     2→import csv\n'
                     "     3→def export_members(rows):\n     4→    pass"),
        assistant("", call("c2", "Bash", {"command": "python -m pytest -q tests/test_export.py"})),
        result("c2", "Exit code 1\n....F\nE   UnicodeEncodeError: 'charmap' codec can't encode character\n"
                     "FAILED tests/test_export.py::test_unicode - UnicodeEncodeError\n1 failed, 4 passed in 0.12s",
               error=True),
        assistant("The file is opened with cp1252, which cannot encode Ł.",
                  call("c3", "Edit", {"file_path": "/repo/rosterkit/export.py", "old_string": "cp1252",
                                      "new_string": "utf-8"})),
        result("c3", "The file /repo/rosterkit/export.py has been updated."),
        assistant("", call("c4", "Bash", {"command": "npm run lint"})),
        result("c4", "Exit code 127\nsh: npm: command not found", error=True),
        assistant("", call("c5", "Bash", {"command": "python -m pytest -q"})),
        result("c5", ".....\n5 passed in 0.10s"),
        assistant("Fixed: the export now writes UTF-8 instead of cp1252. Next step: add a regression test for "
                  "names outside cp1252."),
    )


def run(summarizer, messages, contract="current", body=None, target=4000) -> str:
    body = body if body is not None else range(1, len(messages))
    response = summarizer.summarize(SummaryRequest(processor="test", contract=contract, prompt="",
                                                   messages=tuple(messages), body=body, target_tokens=target))
    return response.text


def sections(text: str) -> dict[str, list[str]]:
    """Section title -> its lines (without the blank separator)."""
    assert text.startswith("<state_snapshot>\n") and text.endswith("\n</state_snapshot>")
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines()[1:-1]:
        match = re.fullmatch(r"(\d+)\. (.+)", line)
        if match:
            current = match.group(2)
            out[current] = []
        elif line:
            out[current].append(line)
    return out


# ---------------------------------------------------------------------------------------------


def test_response_shape(summarizer):
    response = summarizer.summarize(SummaryRequest(processor="t", contract="current", prompt="p",
                                                   messages=session(), body=range(1, 13), target_tokens=2000))
    assert isinstance(response, SummaryResponse)
    assert response.model == "extractive" and response.usage is None and response.latency_s >= 0
    assert response.text.startswith("<state_snapshot>\n") and response.text.endswith("\n</state_snapshot>")
    assert ExtractiveSummarizer.name == "extractive"


def test_current_contract_exact_sections(summarizer):
    got = sections(run(summarizer, session()))
    assert got["Active Task"] == [f"- Latest request: “{REQUEST}”", "- Status: answered."]
    assert got["Constraints and Preferences"] == [
        "- “Don't change the public API and please keep the CSV header as is.”"]
    assert got["Failed Attempts — Do Not Retry"] == [
        "- `npm run lint` (Bash) → exit 127: sh: npm: command not found"]
    assert got["Artifact Trail"] == [
        "- /repo/rosterkit/export.py — edited, read",
        "- `npm run lint` → failed (exit 127)",
        "- `python -m pytest -q tests/test_export.py` → failed (exit 1), 1 failed, 4 passed in 0.12s",
        "- `python -m pytest -q` → ok, 5 passed in 0.10s",
    ]
    assert got["Resume"] == [
        (f"last request: {REQUEST}; answered: yes; active: last action: `python -m pytest -q` → ok "
         "(5 passed in 0.10s); next: add a regression test for names outside cp1252.")
    ]
    assert got["Pending Tasks and Next Useful Step"] == ["- next step: add a regression test for names outside cp1252."]
    assert got["Relevant Files & Structure"] == ["/repo/rosterkit/", "  export.py — edited, read"]
    assert got["Files, Code Areas, Artifacts, and Codebase Understanding"][0] == (
        "- /repo/rosterkit/export.py (edited, read): “CSV export of the member roster.”; symbols: `export_members`")
    facts = got["Key Facts, Decisions, Evidence, and Fixes"]
    assert "- The file is opened with cp1252, which cannot encode Ł." in facts
    assert ("- `python -m pytest -q tests/test_export.py` failed (UnicodeEncodeError: 'charmap' codec can't encode "
            "character); fixed by a later successful `python -m pytest -q`") in facts
    assert got["Blockers, Risks, and Verification"] == [
        "- 1 failed attempt(s) were never fixed (see Failed Attempts)",
        "- latest test run: `python -m pytest -q` → ok (5 passed in 0.10s)",
    ]
    assert got["Critical Context"] == ["(none)"]


def test_failure_fixed_by_rerun_of_the_same_command_is_not_listed(summarizer):
    messages = (
        user("list the data folder"),
        assistant("", call("a", "exec_command", {"cmd": "ls /data", "yield_time_ms": 1000})),
        result("a", "Chunk ID: 1\nProcess exited with code 2\nOutput:\nls: cannot access '/data': Permission denied\n",
               error=True),
        assistant("", call("b", "exec_command", {"cmd": "ls  /data", "sandbox_permissions": "require_escalated"})),
        result("b", "Chunk ID: 2\nProcess exited with code 0\nOutput:\nreadme.txt\n"),
        assistant("", call("c", "exec_command", {"cmd": "cat /data/missing.txt"})),
        result("c", "Chunk ID: 3\nProcess exited with code 1\nOutput:\n"
                    "cat: /data/missing.txt: No such file or directory\n",
               error=True),
        assistant("", call("d", "exec_command", {"cmd": "cat /data/readme.txt"})),
        result("d", "Chunk ID: 4\nProcess exited with code 0\nOutput:\nhello\n"),
        assistant("The folder holds readme.txt only."),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Failed Attempts — Do Not Retry"] == [
        "- `cat /data/missing.txt` (exec_command) → exit 1: cat: /data/missing.txt: No such file or directory"]
    assert got["Artifact Trail"] == [
        "- /data/readme.txt — read",
        "- /data/missing.txt — read failed",
        "- `cat /data/missing.txt` → failed (exit 1)",
        "- `ls /data` ×2 → ok (exit 0)",
    ]


def test_edit_failure_fixed_by_a_later_edit_of_the_same_file(summarizer):
    messages = (
        user("update the docs"),
        assistant("", call("a", "Edit", {"file_path": "/p/CLAUDE.md", "old_string": "x", "new_string": "y"})),
        result("a", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
               error=True),
        assistant("", call("b", "Read", {"file_path": "/p/CLAUDE.md"})),
        result("b", "     1→# TODO App Project\n"),
        assistant("", call("c", "MultiEdit", {"file_path": "/p/CLAUDE.md", "edits": [{"old_string": "x",
                                                                                      "new_string": "y"}]})),
        result("c", "Applied 1 edit to /p/CLAUDE.md"),
        assistant("", call("d", "Read", {"file_path": "/p/missing.md"})),
        result("d", "<tool_use_error>File does not exist.</tool_use_error>", error=True),
        assistant("Updated CLAUDE.md."),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Failed Attempts — Do Not Retry"] == ["- Read /p/missing.md → File does not exist."]
    assert got["Artifact Trail"] == ["- /p/CLAUDE.md — edited, read", "- /p/missing.md — read failed"]
    assert ("- Edit /p/CLAUDE.md failed (File has not been read yet. Read it first before writing to it.); fixed by a "
            "later successful MultiEdit /p/CLAUDE.md") in got["Key Facts, Decisions, Evidence, and Fixes"]


def test_codex_patch_and_shell_reads_make_the_artifact_trail(summarizer):
    patch = ("*** Begin Patch\n*** Update File: app/summary.py\n@@\n-x = 1\n+def mean_or_none(values):\n"
             "+    return None\n*** Add File: tests/test_gap.py\n+def test_gap():\n+    pass\n*** End Patch\n")
    messages = (
        Message(role="user", content="<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>",
                internal=True),
        user("Make summarize skip empty days and add a regression test."),
        assistant("", call("a", "shell", {"command": ["bash", "-lc", "sed -n '1,60p' app/summary.py"],
                                          "workdir": "/home/dev/app"})),
        result("a", "Chunk ID: 1\nProcess exited with code 0\nOutput:\n\"\"\"Daily summaries of readings.\"\"\"\n"),
        assistant("", call("b", "shell", {"command": ["bash", "-lc", "rg -n 'len(' app tests"],
                                          "workdir": "/home/dev/app"})),
        result("b", "Chunk ID: 2\nProcess exited with code 0\nOutput:\napp/summary.py:3: x / len(b)\n"),
        assistant("", call("c", "apply_patch", patch, kind="custom")),
        result("c", '{"output": "Success. Updated the following files:\\nM app/summary.py\\nA tests/test_gap.py\\n", '
                    '"metadata": {"exit_code": 0, "duration_seconds": 0.0}}'),
        assistant("", call("d", "shell", {"command": ["bash", "-lc", "python -m pytest -q"],
                                          "workdir": "/home/dev/app"})),
        result("d", "Chunk ID: 3\nProcess exited with code 0\nOutput:\n12 passed in 0.30s\n"),
        assistant("Done: empty days are skipped."),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Artifact Trail"] == [
        "- /home/dev/app/app/summary.py — edited, read",
        "- /home/dev/app/tests/test_gap.py — created",
        "- `python -m pytest -q` → ok (exit 0), 12 passed in 0.30s",
        "- `rg -n 'len(' app tests` → ok (exit 0)",
    ]
    assert got["Relevant Files & Structure"] == [
        "/home/dev/app/", "  app/", "    summary.py — edited, read", "  tests/", "    test_gap.py — created"]
    assert got["Critical Context"] == ["- working directory: /home/dev/app"]
    notes = got["Files, Code Areas, Artifacts, and Codebase Understanding"]
    assert "- /home/dev/app/tests/test_gap.py (created); symbols: `test_gap`" in notes
    assert ("- /home/dev/app/app/summary.py (edited, read): “Daily summaries of readings.”; symbols: `mean_or_none`"
            in notes)


def test_todo_state_drives_pending_and_resume(summarizer):
    todos = {"todos": [
        {"content": "Port string_utils", "status": "completed", "activeForm": "Porting string_utils"},
        {"content": "Port math_utils", "status": "in_progress", "activeForm": "Porting math_utils"},
        {"content": "Port list_utils", "status": "pending", "activeForm": "Porting list_utils"},
        {"content": "Delete the Python sources", "status": "pending", "activeForm": "Deleting"},
    ]}
    messages = (
        user("Port this project to Rust, and never add Python bindings."),
        assistant("", call("t1", "TodoWrite", {"todos": [dict(t, status="pending") for t in todos["todos"]]})),
        result("t1", "Todos have been modified successfully."),
        assistant("", call("t2", "TodoWrite", todos)),
        result("t2", "Todos have been modified successfully."),
        assistant("", call("w", "Write", {"file_path": "/r/src/math_utils.rs", "content": "//! Math utility functions."
                                                                                          "\npub fn factorial() {}"})),
        result("w", "File created successfully at: /r/src/math_utils.rs"),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Pending Tasks and Next Useful Step"] == [
        "- next step: Port list_utils",
        "- [in_progress] Port math_utils",
        "- [pending] Port list_utils",
        "- [pending] Delete the Python sources",
    ]
    assert got["Completed Work in This Active Segment"][0] == "- [completed] Port string_utils"
    assert got["Current Work and Active State"][0] == "- in progress (todo): Port math_utils"
    assert got["Constraints and Preferences"] == ["- “Port this project to Rust, and never add Python bindings.”"]
    assert got["Resume"] == [("last request: Port this project to Rust, and never add Python bindings.; answered: no; "
                              "active: in_progress todo: Port math_utils; next: Port list_utils")]
    assert got["Artifact Trail"] == ["- /r/src/math_utils.rs — created"]


def test_codex_update_plan_is_the_plan(summarizer):
    messages = (
        user("Add a --encoding flag."),
        assistant("", call("p", "update_plan", {"explanation": "CLI first", "plan": [
            {"step": "Add the flag", "status": "completed"}, {"step": "Write tests", "status": "in_progress"}]})),
        result("p", "Plan updated"),
    )
    got = sections(run(summarizer, messages, contract="round", body=range(len(messages))))
    assert got["Current Execution State"][:3] == [
        "- plan note: CLI first", "- [completed] Add the flag", "- [in_progress] Write tests"]
    assert got["Resume"] == [("last request: Add a --encoding flag.; answered: no; active: in_progress todo: Write "
                              "tests; next: (none)")]


def test_user_requests_are_verbatim_and_long_ones_cut_with_a_marker(summarizer):
    long = "Please read this log and tell me why it fails.\n" + "x" * 3000
    messages = (
        user("First: rename the module to `tcompact`."),
        assistant("Renamed."),
        user(long),
        assistant("It fails because the disk is full."),
        user("<system-reminder>not a request</system-reminder>"),
    )
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages)), target=8000))
    kept = long[:1500]
    assert got["All User Messages"] == [
        "- “First: rename the module to `tcompact`.”",
        "- “Please read this log and tell me why it fails.",
        f"  {kept.split(chr(10))[1]} […{len(long) - 1500:,} more chars cut]”",
    ]
    assert "system-reminder" not in "\n".join(got["All User Messages"])


def test_only_the_body_is_summarised_and_the_prefix_is_context(summarizer):
    messages = session()
    # current-round shape: the request sits in the preserved prefix, the body is the work after it
    got = sections(run(summarizer, messages, contract="full", body=range(2, len(messages))))
    assert got["All User Messages"] == ["(none)"]
    assert got["Primary Request and Intent"][0] == (
        f"- Latest request (the message itself is kept above this summary): “{REQUEST}”")
    assert got["Resume"][0].startswith(f"last request: {REQUEST}; answered: yes;")
    # a body that stops before the fix: the failures are open, the request unanswered
    got = sections(run(summarizer, messages, body=range(2, 10)))
    assert got["Failed Attempts — Do Not Retry"] == [
        "- `npm run lint` (Bash) → exit 127: sh: npm: command not found",
        ("- `python -m pytest -q tests/test_export.py` (Bash) → exit 1: UnicodeEncodeError: 'charmap' codec can't "
         "encode character"),
    ]
    assert got["Resume"] == [(f"last request: {REQUEST}; answered: no; active: last action: `npm run lint` → failed "
                              "(exit 127: sh: npm: command not found); next: (none)")]


@pytest.mark.parametrize("contract", list(SECTIONS))
def test_every_contract_has_its_headings_in_order(summarizer, contract):
    text = run(summarizer, session(), contract=contract)
    headings = re.findall(r"(?m)^(\d+)\. (.+)$", text)
    assert [int(n) for n, _ in headings] == list(range(1, len(SECTIONS[contract]) + 1))
    assert [title for _, title in headings] == list(SECTIONS[contract])
    resume = text.split(f"{len(SECTIONS[contract])}. Resume\n", 1)[1].split("\n")
    assert re.fullmatch(r"last request: .+; answered: (yes|no); active: .+; next: .+", resume[0])
    assert resume[1] == "</state_snapshot>"
    assert extract_snapshot(text).startswith("1. ")


@pytest.mark.parametrize("contract", list(SECTIONS))
def test_empty_sections_say_none(summarizer, contract):
    text = run(summarizer, (user("hello"),), contract=contract, body=range(1))
    got = sections(text)
    assert got["Failed Attempts — Do Not Retry"] == ["(none)"]
    assert got["Artifact Trail"] == ["(none)"]
    assert got["Resume"] == ["last request: hello; answered: no; active: (none); next: (none)"]


def test_deterministic(summarizer):
    path = real_file("codex")
    messages = read_file(str(path)).transcript().messages
    for contract in SECTIONS:
        first = run(summarizer, messages, contract=contract, body=range(len(messages)), target=3000)
        second = run(ExtractiveSummarizer(TokenCounter()), messages, contract=contract,
                     body=range(len(messages)), target=3000)
        assert first == second


@pytest.mark.parametrize("target", [2000, 8000])
def test_budget_on_the_real_codemie_session(summarizer, counter, target):
    messages = read_file(str(real_file("codemie"))).transcript().messages
    for contract in SECTIONS:
        text = run(summarizer, messages, contract=contract, body=range(len(messages)), target=target)
        assert counter.count(text) <= target
        assert [t for _, t in re.findall(r"(?m)^(\d+)\. (.+)$", text)] == list(SECTIONS[contract])
    text = run(summarizer, messages, contract="current", body=range(len(messages)), target=target)
    got = sections(text)
    # what the session is about survives every budget
    assert got["Active Task"][:3] == [
        "- Latest request: “d”",
        ("- It replies to the assistant's previous message: it picks the option “[d] Done - Spec complete, proceed "
         "to implementation”"),
        ("- Original task: “analyze existing codex folder for sessions structure and writen details. there is a need "
         "to implement metrics plugin for codex similar to how claude and gemini is implemented”"),
    ]
    assert "- “TODO is not acceptable, implementation must be full.”" in got["Constraints and Preferences"]
    assert "- Read /Users/user/repo/src/analytics/plugins/registry.ts → File does not exist." in \
        got["Failed Attempts — Do Not Retry"]
    assert got["Resume"] == [
        ("last request: d; answered: yes; active: last action: Edit /Users/user/repo/_bmad-output/implementation-"
         "artifacts/tech-spec-codex-metrics-plugin.md → ok; next: Copy code from spec to "
         "`src/agents/plugins/codex.metrics.ts`")]


def test_small_budgets_keep_every_heading_and_the_resume_line(summarizer, counter):
    messages = read_file(str(real_file("codemie"))).transcript().messages
    for contract in SECTIONS:
        for target in (300, 500, 1000):
            text = run(summarizer, messages, contract=contract, body=range(len(messages)), target=target)
            assert counter.count(text) <= target
            assert [t for _, t in re.findall(r"(?m)^(\d+)\. (.+)$", text)] == list(SECTIONS[contract])
            assert re.search(r"(?m)^last request: d; answered: yes; active: .+; next: .+$", text)


def test_planted_secrets_do_not_leak(summarizer):
    key = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0" * 3
    aws = "AKIAIOSFODNN7EXAMPLE"
    messages = (
        user(f"Deploy with OPENAI_API_KEY={key} please"),
        assistant("", call("a", "Bash", {"command": f"curl -H 'Authorization: Bearer {key}' https://api.x"})),
        result("a", f"Exit code 22\ncurl: (22) The requested URL returned error: 401 for key {key}", error=True),
        assistant("", call("b", "Read", {"file_path": "/srv/.env"})),
        result("b", f"     1→# credentials for {aws} and password=hunter22x\n     2→DEBUG=1\n"),
        assistant(f"The key {key} was rejected with 401 because it belongs to another org."),
    )
    for contract in SECTIONS:
        text = run(summarizer, messages, contract=contract, body=range(len(messages)))
        assert key not in text and aws not in text and "hunter22x" not in text
        assert "[REDACTED:openai_key]" in text
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Failed Attempts — Do Not Retry"] == [
        ("- `curl -H 'Authorization: Bearer [REDACTED:openai_key]' https://api.x` (Bash) → exit 22: curl: (22) The "
         "requested URL returned error: 401 for key [REDACTED:openai_key]")]


def test_an_earlier_checkpoint_in_the_body_is_carried(summarizer):
    old = (
        "<memory_block_current>\n1. Active Task\n- Latest request: “ship v2”\n\n"
        "2. Constraints and Preferences\n- “never push to main directly”\n\n"
        "12. Failed Attempts — Do Not Retry\n- `make deploy` → exit 2: missing AWS credentials\n\n"
        "13. Artifact Trail\n- /srv/app/deploy.sh — edited\n- (+3 omitted for budget)\n\n"
        "14. Resume\nlast request: ship v2; answered: no; active: (none); next: (none)\n</memory_block_current>"
    )
    messages = (
        user(old, internal=True),
        user("Now tag the release."),
        assistant("", call("a", "Bash", {"command": "git tag v2.0.0"})),
        result("a", ""),
        assistant("Tagged v2.0.0."),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Failed Attempts — Do Not Retry"] == ["- [earlier] `make deploy` → exit 2: missing AWS credentials"]
    assert got["Artifact Trail"] == ["- `git tag v2.0.0` → ok", "- [earlier] /srv/app/deploy.sh — edited"]
    assert got["Constraints and Preferences"] == ["- [earlier] “never push to main directly”"]
    assert got["Resume"] == [("last request: Now tag the release.; answered: yes; active: last action: `git tag "
                              "v2.0.0` → ok; next: (none)")]
    assert "ship v2; answered: no" not in "\n".join(got["Active Task"])  # the old resume line is stale


def test_terse_reply_is_explained_by_the_option_it_picks(summarizer):
    messages = (
        user("Write a tech spec for the metrics plugin, covering token usage and tool calls."),
        assistant("Spec written.\n\nWhat next?\n- **[p] Party Mode** - multi-agent review\n- **[d] Done** - finish"),
        user("d"),
        assistant("Done."),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Active Task"][:3] == [
        "- Latest request: “d”",
        "- It replies to the assistant's previous message: it picks the option “[d] Done - finish”",
        "- Original task: “Write a tech spec for the metrics plugin, covering token usage and tool calls.”",
    ]


def test_unknown_contract_is_an_error(summarizer):
    with pytest.raises(SummarizerError) as info:
        run(summarizer, session(), contract="nope")
    assert info.value.kind == "api_request_error"


def test_test_runs_resolve_failures_of_narrower_runs(summarizer):
    messages = (
        user("make the suite pass"),
        assistant("", call("a", "run_tests", {"args": ["-q", "tests/test_cli.py"]})),
        result("a", "$ python -m pytest -q tests/test_cli.py\n..F\nE   LookupError: unknown encoding: klingon\n"
                    "1 failed, 2 passed in 0.5s"),
        assistant("", call("b", "run_tests", {"args": ["-vv"]})),
        result("b", "$ python -m pytest -vv\n48 passed in 3.66s"),
        assistant("", call("c", "Bash", {"command": "cargo test --lib parser"})),
        result("c", "Exit code 101\ntest result: FAILED. 3 passed; 1 failed; 0 ignored", error=True),
        assistant("", call("d", "Bash", {"command": "cd /r && cargo test 2>&1 | tail -5"})),
        result("d", "test result: ok. 29 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"),
        assistant("All green."),
    )
    got = sections(run(summarizer, messages, body=range(len(messages))))
    assert got["Failed Attempts — Do Not Retry"] == ["(none)"]
    assert "- `cargo test 2>&1 | tail -5` → ok: test result: ok. 29 passed; finished in 0.00s" in \
        got["Key Facts, Decisions, Evidence, and Fixes"]
