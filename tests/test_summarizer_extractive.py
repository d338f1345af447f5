"""The extractive state snapshot: exact sections on small hand-built sessions, each rule of the rebuild
(the user's words verbatim, harness text, exact strings, each fact once, corrections, error lines,
budget, --preserve), every contract's headings, determinism and the budget on real sessions."""

from __future__ import annotations

import re

import orjson
import pytest
from conftest import real_file

from tcompact.formats import read_file
from tcompact.model import Message, ToolCall
from tcompact.summarizers.base import SummarizerError, SummaryRequest, SummaryResponse
from tcompact.summarizers.contracts import SECTIONS, extract_snapshot, prompt_text
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.counting.tokens import TokenCounter

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


def run(summarizer, messages, contract="current", body=None, target=4000, prompt="") -> str:
    body = body if body is not None else range(1, len(messages))
    response = summarizer.summarize(SummaryRequest(processor="test", contract=contract, prompt=prompt,
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
    assert got == {
        "Active Task": [f"- [round 1] “{REQUEST}”", "- Status: answered."],
        "Constraints and Preferences": ["(none)"],
        "Completed Work in This Active Segment": [
            "- round 1: 1 file(s) changed, 3 command(s) run, 2 call(s) failed; answered"],
        "Current Work and Active State": [
            "The work ended with this answer (verbatim):",
            "Fixed: the export now writes UTF-8 instead of cp1252. Next step: add a regression test for names outside "
            "cp1252."],
        "Immediate Resume Point": ["- last action: `python -m pytest -q` → ok (5 passed in 0.10s)"],
        "Pending Tasks and Next Useful Step": ["- next step: add a regression test for names outside cp1252."],
        "Key Facts, Decisions, Evidence, and Fixes": [
            "- `python -m pytest -q tests/test_export.py` failed (UnicodeEncodeError: 'charmap' codec can't encode "
            "character); fixed by a later successful `python -m pytest -q`",
            "  FAILED tests/test_export.py::test_unicode - UnicodeEncodeError",
            "- The file is opened with cp1252, which cannot encode Ł."],
        "Files, Code Areas, Artifacts, and Codebase Understanding": [
            "- /repo/rosterkit/export.py — edited, read: “CSV export of the member roster.”; defines `export_members`",
            "- last edits: Edit /repo/rosterkit/export.py put in: `utf-8`"],
        "Blockers, Risks, and Verification": ["(none)"],
        "Critical Context": ["(none)"],
        "Relevant Files & Structure": ["(none)"],
        "Failed Attempts — Do Not Retry": ["- `npm run lint` (Bash) → exit 127: sh: npm: command not found"],
        "Artifact Trail": ["- `python -m pytest -q` → ok: 5 passed in 0.10s"],
        "Resume": [f"last request: {REQUEST}; answered: yes; active: last action: `python -m pytest -q` → ok "
                   "(5 passed in 0.10s); next: add a regression test for names outside cp1252."],
    }


def test_failure_fixed_by_rerun_of_the_same_command_is_listed_once_as_fixed(summarizer):
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
    assert got["Key Facts, Decisions, Evidence, and Fixes"] == [
        "- `ls /data` failed (ls: cannot access '/data': Permission denied); fixed by a later successful `ls /data`"]
    assert got["Artifact Trail"] == ["- `ls /data` ×2 → ok (exit 0): readme.txt"]  # once, in its latest state
    assert got["Relevant Files & Structure"] == ["- /data/missing.txt — read failed", "- /data/readme.txt — read"]
    assert got["Immediate Resume Point"] == [
        "- last action: `cat /data/readme.txt` → ok (exit 0); its output ended with: “hello”"]


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
    assert got["Key Facts, Decisions, Evidence, and Fixes"] == [
        "- Edit /p/CLAUDE.md failed (File has not been read yet. Read it first before writing to it.); fixed by a "
        "later successful MultiEdit /p/CLAUDE.md"]
    assert got["Files, Code Areas, Artifacts, and Codebase Understanding"] == [
        "- /p/CLAUDE.md — edited, read: “TODO App Project”", "- last edits: MultiEdit /p/CLAUDE.md put in: `y`"]
    assert got["Relevant Files & Structure"] == ["- /p/missing.md — read failed"]


def test_codex_patch_and_shell_reads_make_the_files_once(summarizer):
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
    assert got["Files, Code Areas, Artifacts, and Codebase Understanding"] == [
        "- /home/dev/app/app/summary.py — edited, read: “Daily summaries of readings.”; defines `mean_or_none`",
        "- /home/dev/app/tests/test_gap.py — created; defines `test_gap`",
        "- last edits: apply_patch app/summary.py, tests/test_gap.py put in:", "```", "*** Update File: app/summary.py",
        "@@", "+def mean_or_none(values):", "+    return None", "*** Add File: tests/test_gap.py", "+def test_gap():",
        "+    pass", "```"]
    assert got["Artifact Trail"] == [
        "- `rg -n 'len(' app tests` → ok (exit 0): app/summary.py:3: x / len(b)",
        "- `python -m pytest -q` → ok (exit 0): 12 passed in 0.30s"]
    assert got["Critical Context"] == ["- working directory: /home/dev/app"]
    assert got["Relevant Files & Structure"] == ["(none)"]  # each file once: both are listed above


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
        "- [in_progress] Port math_utils", "- [pending] Port list_utils", "- [pending] Delete the Python sources",
        "- next step: Port list_utils"]
    assert got["Completed Work in This Active Segment"] == ["- round 1: 1 file(s) changed; no final answer",
                                                            "- [completed] Port string_utils"]
    assert got["Current Work and Active State"] == ["- in progress (todo): Port math_utils"]
    assert got["Files, Code Areas, Artifacts, and Codebase Understanding"] == [
        "- /r/src/math_utils.rs — created: “Math utility functions.”; defines `factorial`"]
    assert got["Resume"] == [("last request: Port this project to Rust, and never add Python bindings.; answered: no; "
                              "active: in_progress todo: Port math_utils; next: Port list_utils")]


def test_codex_update_plan_is_the_plan(summarizer):
    messages = (
        user("Add a --encoding flag."),
        assistant("", call("p", "update_plan", {"explanation": "CLI first", "plan": [
            {"step": "Add the flag", "status": "completed"}, {"step": "Write tests", "status": "in_progress"}]})),
        result("p", "Plan updated"),
    )
    got = sections(run(summarizer, messages, contract="current", body=range(len(messages))))
    assert got["Current Work and Active State"] == ["- in progress (todo): Write tests"]
    assert got["Completed Work in This Active Segment"] == ["- [completed] Add the flag"]
    assert got["Pending Tasks and Next Useful Step"] == ["- [in_progress] Write tests", "- plan note: CLI first"]
    assert got["Resume"] == [("last request: Add a --encoding flag.; answered: no; active: in_progress todo: Write "
                              "tests; next: (none)")]


# -- the user's words ------------------------------------------------------------------------------


def test_every_user_message_is_verbatim_and_an_overlong_one_keeps_head_and_tail(summarizer, counter):
    words = " ".join(f"w{n}" for n in range(30_000))  # ~60k tokens: over the user messages' share of 8,000
    long = f"Please read this log and tell me why it fails.\n{words}\nThe last line says: disk full."
    messages = (
        user("First: rename the module to `tcompact`."),
        assistant("Renamed."),
        user(long),
        assistant("It fails because the disk is full."),
        user("<system-reminder>not a request</system-reminder>"),
    )
    text = run(summarizer, messages, contract="dialogue", body=range(len(messages)), target=8000)
    got = sections(text)["Historical User Requests and Outcomes"]
    # the newest message comes first into the budget and overflows it: head and tail, cut at blanks
    assert got[0] == '<user_message round="2">' and got[6:] == [
        "</user_message>", "  → answered: “It fails because the disk is full.”",
        "- (+1 more left out for the budget)"]  # the older message did not fit any more: left out, and said so
    intro, head, marker, tail, last = got[1:6]
    assert (intro, last) == ("Please read this log and tell me why it fails.", "The last line says: disk full.")
    assert re.fullmatch(r"w0 w1 w2 (w\d+ )*w\d+", head) and re.fullmatch(r"w\d+( w\d+)* w29999", tail)
    cut = int(re.fullmatch(r"\[… ([\d,]+) tokens in the middle of this message: that part was cut by tcompact "
                           r"extractive to fit the user-message budget …\]", marker).group(1).replace(",", ""))
    kept = counter.count(long) - cut
    assert 3_000 < kept <= 4_000 and counter.count(head) > counter.count(tail)  # half the budget at most
    assert counter.count(text) <= 8000  # the summary's cap holds the user's words too (issue 23 item 6)
    assert "system-reminder" not in text and "rename the module" not in text


def test_user_messages_are_quoted_whole_in_session_order_with_what_came_of_them(summarizer):
    messages = (
        user("First: rename the module to `tcompact`."),
        assistant("Renamed the package folder."),
        user("Now the CLI:\n  keep `--json` stable\n  and add `--seed`"),
        assistant("Added `--seed`; `--json` is unchanged."),
        user("d"),
        assistant("Working on it.", call("x", "Bash", {"command": "make"})),
    )
    got = sections(run(summarizer, messages, contract="dialogue", body=range(len(messages))))
    assert got["Historical User Requests and Outcomes"] == [
        "- [round 1] “First: rename the module to `tcompact`.”",
        "  → answered: “Renamed the package folder.”",
        '<user_message round="2">',
        "Now the CLI:",
        "  keep `--json` stable",
        "  and add `--seed`",
        "</user_message>",
        "  → answered: “Added `--seed`; `--json` is unchanged.”",
        "- [round 3] “d”",
        "  → in progress: “Working on it.”",
    ]


@pytest.mark.parametrize("text", [
    "Stop hook feedback:\n[~/.claude/stop.sh]: # Running Quality Checks...\nCannot exit with unstaged changes",
    "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
    "Please continue the conversation from where we left it off without asking the user any further questions.",
    "This session is being continued from a previous conversation that ran out of context.",
    "<bash-stdout>ok</bash-stdout>",
    "[Request interrupted by user for tool use]",
])
def test_harness_text_is_never_a_request_nor_work(summarizer, text):
    messages = (user("Port the parser to Rust."), assistant("Ported."), user(text),
                assistant("", call("a", "Bash", {"command": "cargo test"})), result("a", "test result: ok. 3 passed"))
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages))))
    joined = "\n".join(line for lines in got.values() for line in lines)
    assert text.splitlines()[0] not in joined
    assert got["Resume"][0].startswith("last request: Port the parser to Rust.; answered: no;")


def test_a_slash_command_with_arguments_is_the_users_request(summarizer):
    wrapper = ("<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>"
               "\n<command-args>update CLAUDE.md, and never touch the tests</command-args>")
    got = sections(run(summarizer, (user(wrapper), assistant("Updated.")), contract="dialogue", body=range(2)))
    assert got["Historical User Requests and Outcomes"] == [
        "- [round 1] “/orchestrator update CLAUDE.md, and never touch the tests”", "  → answered: “Updated.”"]


def test_full_contract_points_at_the_kept_messages_and_lists_constraints_of_those_left_out(summarizer):
    # the first message is cut to fit 20k tokens with its head and tail: the rule in its middle is listed
    messages = (user("x " * 15_000 + "\nNever push to main.\n" + "y " * 15_000), assistant("ok"),
                user("Now tag v2.0."), assistant("Tagged."))
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages))))
    assert got["All User Messages"] == [
        "- The user's messages are kept verbatim before this summary (newest first within 20,000 tokens); a "
        "constraint of any that did not fit is listed here.",
        "- “Never push to main.”"]
    assert got["Primary Request and Intent"][1:] == [
        "- The latest request is the last user message before this summary; it is kept verbatim there.",
        "- It replies to the assistant's previous message: which ended “ok”", "- Status: answered."]
    assert re.fullmatch(r"- Original task: “(x ){99}x…”", got["Primary Request and Intent"][0])


def test_terse_reply_is_explained_by_the_option_it_picks(summarizer):
    messages = (
        Message(role="system", content="sys"),
        user("Write a tech spec for the metrics plugin, covering token usage and tool calls."),
        assistant("Spec written.\n\nWhat next?\n- **[p] Party Mode** - multi-agent review\n- **[d] Done** - finish"),
        user("d"),
        assistant("Done."),
    )
    got = sections(run(summarizer, messages, contract="full", body=range(1, 5)))
    assert got["Primary Request and Intent"] == [
        "- Original task: “Write a tech spec for the metrics plugin, covering token usage and tool calls.”",
        "- The latest request is the last user message before this summary; it is kept verbatim there.",
        "- It replies to the assistant's previous message: it picks the option “[d] Done - finish”",
        "- Status: answered."]


# -- exact strings ---------------------------------------------------------------------------------


def test_identifiers_paths_and_commands_are_copied_byte_for_byte(summarizer):
    messages = (
        user("Fix `pkg/__main__.py` in /marshmallow-code__marshmallow."),
        assistant("The bug is in `pkg/__main__.py`: **`__init__`** shadows the module, so the import "
                  "of `_private__name` fails.",
                  call("a", "Write", {"file_path": "/repo/pkg/__init__.py", "content": '"""The pkg package."""'})),
        result("a", "File created successfully at: /repo/pkg/__init__.py"),
        assistant("", call("b", "Bash", {"command": "make -C /marshmallow-code__marshmallow build"})),
        result("b", "Exit code 2\nmake: *** [Makefile:12: build] Error 2", error=True),
    )
    text = run(summarizer, messages, contract="dialogue", body=range(len(messages)))
    for exact in ("`pkg/__main__.py`", "/marshmallow-code__marshmallow", "/repo/pkg/__init__.py", "`__init__`",
                  "`_private__name`", "`make -C /marshmallow-code__marshmallow build`",
                  "make: *** [Makefile:12: build] Error 2"):
        assert exact in text, exact
    assert "init.py" not in text.replace("__init__.py", "")
    assert "  → in progress: “The bug is in `pkg/__main__.py`: `__init__` shadows the module, so the import of " \
           "`_private__name` fails.”" in text  # bold marks gone, the names as they are


def test_sentences_keep_their_quotes_and_attributions(summarizer):
    said = ('She wrote "Ship it. Then tag it." in the review, so the release goes out today. '
            "The spec (see §3. Limits) caps batches at 5,000 rows.")
    got = sections(run(summarizer, (user("what did the review say?"), assistant(said, call("x", "Bash", {"command": "ls"})),
                                    result("x", "a.txt")), contract="dialogue", body=range(3)))
    assert got["Decisions, Constraints, Corrections, and Findings"] == [
        "- The spec (see §3. Limits) caps batches at 5,000 rows."]
    assert got["Historical User Requests and Outcomes"][1] == (
        '  → in progress: “She wrote "Ship it. Then tag it." in the review, so the release goes out today. The spec '
        '(see §3. Limits) caps batches…”')  # the outcome of a request is cut (prose only); the sentence above is whole


def test_the_final_answer_is_kept_whole_with_its_code_and_a_huge_one_by_its_opening(summarizer):
    answer = ("Here is the fix:\n\n```python\ndef parse(text):\n    if not text:\n        return []\n"
              "    return text.split(',')\n```\n\nIt handles the empty input.")
    text = run(summarizer, (user("fix parse for empty input"), assistant(answer)), contract="full", body=range(2))
    assert f"8. Current Work\nThe work ended with this answer (verbatim):\n{answer}\n\n9. " in text
    assert sections(text)["Key Technical Concepts"] == ["(none)"]  # the code is in the answer, not repeated
    # a long one the summary's budget cannot hold whole: its opening and its code blocks, each whole
    long = answer + "\n\n" + "It also keeps the old behaviour for every other input we tested. " * 100
    text = run(summarizer, (user("fix parse for empty input"), assistant(long)), contract="full", body=range(2),
               target=600)
    assert "- the work ended with this answer: Here is the fix:\n```python\ndef parse(text):\n    if not text:" in text
    assert "(verbatim)" not in text
    huge = "```\n" + "x = 1\n" * 2000 + "```"
    got = sections(run(summarizer, (user("dump it"), assistant("Dumped:\n\n" + huge)), contract="full", body=range(2)))
    assert got["Key Technical Concepts"] == ["(none)"]  # too long: left out whole, never cut
    assert got["Current Work"] == ["- the work ended with this answer: Dumped:"]


# -- state: each fact once, corrections, latest state ------------------------------------------------


def test_a_correction_replaces_what_it_corrects(summarizer):
    messages = (
        user("why does the export fail?"),
        assistant("The root cause is the cp1252 encoding in `export.py`.", call("a", "Bash", {"command": "ls"})),
        result("a", "export.py"),
        assistant("I decided to switch `export.py` to latin-1.", call("b", "Bash", {"command": "ls -l"})),
        result("b", "export.py"),
        assistant("Actually, `export.py` was never the problem: the header row in `writer.py` is."),
    )
    got = sections(run(summarizer, messages, contract="dialogue", body=range(6)))
    assert got["Decisions, Constraints, Corrections, and Findings"] == ["(none)"]  # the correction is the outcome
    got = sections(run(summarizer, messages, contract="current", body=range(6)))
    facts = got["Key Facts, Decisions, Evidence, and Fixes"]
    assert not any("cp1252" in line or "latin-1" in line for line in facts)
    assert got["Current Work and Active State"] == [
        "The work ended with this answer (verbatim):",
        "Actually, `export.py` was never the problem: the header row in `writer.py` is."]


def test_decisions_are_kept_whole_and_before_notes(summarizer):
    messages = [user("speed up the cache")]
    for n in range(40):
        messages += [assistant(f"Step {n}: looked at shard_{n}.json and it has 12 entries.",
                               call(f"c{n}", "Bash", {"command": f"wc -l shard_{n}.json"})), result(f"c{n}", "12")]
    messages.insert(5, assistant("Decision: we cache the lookups in SQLite instead of Redis, because the deployment "
                                 "has no Redis.", call("d", "Bash", {"command": "ls"})))
    messages.insert(6, result("d", "a"))
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages)), target=700))
    assert ("- Decision: we cache the lookups in SQLite instead of Redis, because the deployment has no Redis."
            in got["Problem Solving"])
    assert got["Problem Solving"][-1].startswith("- (+") and got["Problem Solving"][-1].endswith(
        "more left out for the budget)")


def test_a_successful_submit_answers_the_request(summarizer):
    messages = (user("Fix issue 1867."), assistant("", call("a", "bash", {"command": "python reproduce.py"})),
                result("a", "345"), assistant("Submitting.", call("b", "submit", {})), result("b", "diff --git a/x b/x"))
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages))))
    assert got["Primary Request and Intent"][-1] == "- Status: answered."
    assert got["Resume"][0].startswith("last request: Fix issue 1867.; answered: yes; active: last action: submit → ok")
    got = sections(run(summarizer, messages[:3], contract="full", body=range(3)))
    assert got["Primary Request and Intent"][-1] == "- Status: not answered yet; the work is in progress."


def test_a_file_deleted_at_the_end_says_so_first(summarizer):
    messages = (user("try a reproduction script"),
                assistant("", call("a", "create", {"filename": "reproduce.py"})), result("a", "[File: reproduce.py]"),
                assistant("", call("b", "bash", {"command": "python reproduce.py"})), result("b", "344"),
                assistant("", call("c", "bash", {"command": "rm reproduce.py"})), result("c", ""),
                assistant("Removed the script."))
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages))))
    assert got["Files and Code Sections"] == ["- reproduce.py — now deleted (earlier: created, deleted)"]


# -- error lines -----------------------------------------------------------------------------------


def test_error_lines_anywhere_in_an_output_are_kept_with_their_command(summarizer):
    noise = "\n".join(f"step {n} ok" for n in range(3000))  # far beyond the head and tail windows
    output = f"{noise}\nERROR: could not connect to db-7.internal:5432: connection refused\n{noise}\nbuild done"
    messages = (user("build it"), assistant("", call("a", "Bash", {"command": "./build.sh --all"})),
                result("a", output), assistant("Built."))
    got = sections(run(summarizer, messages, contract="full", body=range(4)))
    assert got["Errors and Fixes"] == [
        "- `./build.sh --all` went on, but its output reported:",
        "  ERROR: could not connect to db-7.internal:5432: connection refused"]
    assert got["Artifact Trail"] == ["- `./build.sh --all` → ok: build done"]


def test_unfixed_failures_keep_every_error_line_and_intentional_red_runs_are_fixed(summarizer):
    messages = (
        user("add a failing test first, then fix it"),
        assistant("", call("t", "Bash", {"command": "pytest -q tests/test_new.py"})),
        result("t", "Exit code 1\nE   AssertionError: assert 1 == 2\nFAILED tests/test_new.py::test_it\n1 failed",
               error=True),
        assistant("", call("u", "Bash", {"command": "pytest -q tests/test_new.py"})),
        result("u", "1 passed in 0.01s"),
        assistant("", call("d", "Bash", {"command": "make deploy"})),
        result("d", "Exit code 2\nfatal: unable to access 'https://git.example.com/x.git/': Could not resolve host\n"
                    "make: *** [Makefile:9: deploy] Error 2", error=True),
    )
    got = sections(run(summarizer, messages, contract="full", body=range(len(messages))))
    assert got["Failed Attempts — Do Not Retry"] == [
        "- `make deploy` (Bash) → exit 2: fatal: unable to access 'https://git.example.com/x.git/': Could not "
        "resolve host",
        "  make: *** [Makefile:9: deploy] Error 2"]
    assert got["Errors and Fixes"][0] == (
        "- `pytest -q tests/test_new.py` failed (AssertionError: assert 1 == 2); fixed by a later successful "
        "`pytest -q tests/test_new.py`")


# -- budget ----------------------------------------------------------------------------------------


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
def test_empty_sections_say_none_and_nothing_says_omitted(summarizer, contract):
    text = run(summarizer, (user("hello"),), contract=contract, body=range(1))
    got = sections(text)
    assert got["Failed Attempts — Do Not Retry"] == ["(none)"] and got["Artifact Trail"] == ["(none)"]
    assert got["Resume"] == ["last request: hello; answered: no; active: (none); next: (none)"]
    assert "omitted" not in text and "left out" not in text


def _session(source: str):
    """A sample's messages (``*.jsonl``: runs in any clone), or a real session's (skipped without ../shared)."""
    from conftest import SAMPLES

    return read_file(str(SAMPLES / source if source.endswith(".jsonl") else real_file(source))).transcript().messages


@pytest.mark.parametrize("source", ["claude_code_session.jsonl", "drmaciver"])
def test_nothing_is_left_out_while_budget_remains(summarizer, counter, source):
    messages = _session(source)
    text = run(summarizer, messages, contract="full", body=range(len(messages)), target=50_000)
    assert "left out" not in text and "omitted" not in text and counter.count(text) < 50_000


@pytest.mark.parametrize("source", ["codex_rollout.jsonl", "codex"])
def test_deterministic(summarizer, source):
    messages = _session(source)
    for contract in SECTIONS:
        first = run(summarizer, messages, contract=contract, body=range(len(messages)), target=3000)
        second = run(ExtractiveSummarizer(TokenCounter()), messages, contract=contract,
                     body=range(len(messages)), target=3000)
        assert first == second


@pytest.mark.parametrize("target", [600, 2000, 8000])
def test_budget_on_the_real_codemie_session(summarizer, counter, target):
    messages = read_file(str(real_file("codemie"))).transcript().messages
    users = "\n".join(m.text for m in messages if m.role == "user")
    for contract in SECTIONS:
        text = run(summarizer, messages, contract=contract, body=range(len(messages)), target=target)
        rest = re.sub(r"(?m)^- \[round \d+\] “.*”\n(?:  → .*\n)?", "", text)
        rest = re.sub(r'(?ms)^<user_message round="\d+">\n.*?\n</user_message>\n(?:  → [^\n]*\n)?', "", rest)
        rest = re.sub(r"(?ms)^The work ended with this answer \(verbatim\):\n.*?(?=\n\n\d+\. )", "", rest)
        assert counter.count(rest) <= target  # the user's messages have a budget of their own
        assert [t for _, t in re.findall(r"(?m)^(\d+)\. (.+)$", rest)] == list(SECTIONS[contract])
        assert re.search(r"(?m)^last request: d; answered: yes; active: .+; next: .+$", text)
    text = run(summarizer, messages, contract="dialogue", body=range(len(messages)), target=target)
    requests = re.findall(r"(?m)^- \[round \d+\] “.*$", text)
    assert [r.split("] “")[1][:20] for r in requests] == [
        "analyze existing cod", "proceed”", "a - run codex exec c", "doublecheck 019b7f04", "p”",
        "TODO is not acceptab", "d”"]
    # the slash command that opened the session, with its prompt (an isMeta message), quoted as one block when
    # the user's budget (within the summary's cap) holds it
    assert ('<user_message round="1">\n/bmad:bmm:workflows:create-tech-spec\nIT IS CRITICAL THAT YOU FOLLOW' in text) \
        is (target >= 2000)
    assert all(r.split("] “", 1)[1].rstrip("”") in users for r in requests)  # each verbatim


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
    messages = (user(old, internal=True), user("Now tag the release."),
                assistant("", call("a", "Bash", {"command": "git tag v2.0.0"})), result("a", ""),
                assistant("Tagged v2.0.0."))
    text = run(summarizer, messages, body=range(len(messages)))
    got = sections(text)
    # one block, line by line as it stood, its headings marked as its own; the old resume line and the budget
    # marker are left out
    assert got["Active Task"][:12] == [
        "<earlier_summary>", "The summary of an earlier compaction, as it stood (what follows it is newer and "
        "overrides it):", "### 1. Active Task", "- Latest request: “ship v2”", "### 2. Constraints and Preferences",
        "- “never push to main directly”", "### 12. Failed Attempts — Do Not Retry",
        "- `make deploy` → exit 2: missing AWS credentials", "### 13. Artifact Trail", "- /srv/app/deploy.sh — edited",
        "</earlier_summary>", "- [round 1] “Now tag the release.”"]
    assert "omitted for budget" not in text and "[earlier]" not in text
    assert got["Failed Attempts — Do Not Retry"] == ["(none)"]  # the new part's own: none
    assert got["Artifact Trail"] == ["- `git tag v2.0.0` → ok"]
    assert got["Resume"] == [("last request: Now tag the release.; answered: yes; active: last action: `git tag "
                              "v2.0.0` → ok; next: (none)")]
    assert "ship v2; answered: no" not in "\n".join(got["Active Task"])  # the old resume line is stale


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
    assert got["Artifact Trail"] == [
        "- `run_tests -vv` → ok: 48 passed in 3.66s",
        "- `cd /r && cargo test 2>&1 | tail -5` → ok: test result: ok. 29 passed; finished in 0.00s"]


# -- --preserve ------------------------------------------------------------------------------------


def test_preserve_keeps_what_the_instruction_names(summarizer):
    from tcompact.compressors.prefix import preserve_appendix

    noise = [m for n in range(60) for m in (assistant(f"Looked at part {n}.", call(f"c{n}", "Bash", {
        "command": f"cat part_{n}.txt"})), result(f"c{n}", f"part {n} text"))]
    messages = (user("review the logs"), *noise[:40],
                assistant("", call("s", "Bash", {"command": "cat deploy.log"})),
                result("s", "boot ok\nthe staging host answers on stg-42.example.net port 8443\nready"), *noise[40:])
    plain = run(summarizer, messages, contract="full", body=range(len(messages)), target=512)
    assert "stg-42.example.net" not in plain
    prompt = preserve_appendix(prompt_text("full"), "the staging host and its port")
    kept = sections(run(summarizer, messages, contract="full", body=range(len(messages)), target=512, prompt=prompt))
    assert "- kept on request: the staging host answers on stg-42.example.net port 8443" in \
        kept["Primary Request and Intent"]


def compacted_twice(path, tmp_path):
    """Compact ``path`` with ``full``, then its output again: both runs."""
    from tcompact.compaction import CompactOptions, compact_file

    once = compact_file(path, CompactOptions(chain="full", now=True))
    assert once.status == "compacted"
    again = tmp_path / "once.jsonl"
    again.write_bytes(once.output.data)
    return once, compact_file(again, CompactOptions(chain="full", now=True))


@pytest.mark.parametrize("source", ["drmaciver", "invented"])
def test_compacting_a_compacted_session_again_never_erodes_it(tmp_path, source):
    """With nothing new after it, the summary of a compacted session is carried whole as one block: the result
    is no smaller, so the compacted session stays as it was (issue 22: 7,066 → 1,066 → 664 tokens before)."""
    from generated_sessions import chat_bytes, tool_heavy_session

    path = real_file("drmaciver") if source == "drmaciver" else tmp_path / "session.jsonl"
    if source == "invented":
        path.write_bytes(chat_bytes(tool_heavy_session()))
    once, twice = compacted_twice(path, tmp_path)
    assert twice.status == "nothing to do" and twice.message.startswith("full: no benefit (")
    assert twice.report["after"]["tokens"] == once.report["after"]["tokens"]
