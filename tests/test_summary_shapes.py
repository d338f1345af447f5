"""The summary defects issue 22 found in real sessions, each on a fixture of that session's shape
(tests/fixtures/make_summary_shapes.py writes them): what a default summary must say and must not."""

from __future__ import annotations

import re
from pathlib import Path

from tcompact.compaction import CompactOptions, compact_file
from tcompact.compressors import get, parse_sets
from tcompact.compressors._benefit import benefit
from tcompact.compressors.base import Context
from tcompact.compressors.reinjection import recovered_context
from tcompact.formats import ReadOptions, read_file
from tcompact.model import Message, ToolCall
from tcompact.rounds import is_real_user
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.summarizers.extractive.scan import Scan
from tcompact.summarizers.extractive.tools import error_lines
from tcompact.counting.tokens import TokenCounter

FIXTURES = Path(__file__).parent / "fixtures"
SPEC, CODEX = FIXTURES / "claude_spec_session.jsonl", FIXTURES / "codex_write_stdin.jsonl"
AGAIN, INIT = FIXTURES / "claude_compacted_again.jsonl", FIXTURES / "claude_slash_init.jsonl"
PROMISED = FIXTURES / "claude_promised_fix.jsonl"


def messages(path: Path) -> tuple[Message, ...]:
    return read_file(path, ReadOptions(keep_raw=False)).transcript().messages


def compacted(path: Path, chain: str = "full", *sets: str):
    run = compact_file(path, CompactOptions(chain=chain, now=True, read=ReadOptions(), overrides=parse_sets(sets)))
    assert run.status == "compacted", run.message
    return run.messages


def summary(path: Path, chain: str = "full", *sets: str) -> str:
    return next(m.text for m in compacted(path, chain, *sets) if m.meta.get("memory_block"))


def section(text: str, title: str) -> str:
    """The lines of one numbered section of a snapshot."""
    match = re.search(rf"(?m)^\d+\. {re.escape(title)}\n(.*?)(?=^\d+\. |\Z)", text, re.DOTALL)
    assert match, title
    return match.group(1)


# ---- the final answer, the last edits, headings, test notes (Claude Code spec session) ------------------------


def test_the_final_answer_is_kept_whole_with_its_headings_and_markers():
    text = summary(SPEC)
    answer = messages(SPEC)[-1].text
    assert answer.startswith("Here's what changed in the spec:\n\n## Removed\n- ❌ Legacy polling")
    assert answer in text
    # the removed item is stated once, under its ❌, not as a current feature elsewhere
    assert text.count("Legacy polling of the sessions folder") == 1


def test_the_new_text_of_the_last_edits_is_in_the_summary():
    text = summary(SPEC)
    assert "File Watching\n-------------\nThe adapter watches today's folder and reads new lines only." in text
    assert "Only today's folder is scanned by default. Sessions live in" in text


def test_markdown_headings_are_not_error_lines():
    shown = "    9→Error Recovery\n    10→--------------\n    11→Error Handling\n    12→## Error cases"
    assert error_lines(shown) == []
    assert error_lines("Error Recovery and Retries\nError: disk full\nERROR: could not connect") == [
        "Error: disk full", "ERROR: could not connect"]
    assert "went on, but its output reported" not in summary(SPEC)


def test_no_test_run_is_asked_of_an_edited_markdown_file():
    assert "no test run recorded" not in summary(SPEC)


def test_the_spec_the_session_built_is_reinjected_not_the_csv_read_last():
    msgs = messages(SPEC)
    context = recovered_context(msgs, msgs[:1], ("read_file",), max_chars=20000)
    assert context is not None
    assert "/repo/docs/spec.md" in context.text and "agent-manifest.csv" not in context.text
    # its text as it now is: the write with both edits applied
    assert "Only today's folder is scanned by default. Sessions live in" in context.text
    assert "File Watching" in context.text and "Legacy Polling" not in context.text


# ---- Codex write_stdin -----------------------------------------------------------------------------------------


def test_a_write_stdin_poll_is_reported_as_the_command_it_polls():
    text = summary(CODEX)
    assert "`npm run build` → ok (exit 0): ✓ built in 14.20s" in text
    assert "`npm test`" in text and "AssertionError: expected 200 to be 404" in text
    failed = section(text, "Failed Attempts — Do Not Retry")
    assert failed.startswith("- `npm test` (exec_command) → exit 1: ")
    assert "write_stdin" not in text and "Process running with session ID" not in text


# ---- an earlier compaction's summary, and compacting again -------------------------------------------------------


def test_an_earlier_summary_is_carried_as_one_block_without_what_was_superseded():
    text = summary(AGAIN)
    assert "[earlier]" not in text
    code = '     ```python\n     def parse(text):\n         if not text:\n             return []\n'
    assert code in text  # indentation and the fence as they stood
    assert '   - "Fix the parser: parse(\'\') must return an empty list."' in text
    assert "Add tests for empty input" not in section(text, "Pending Tasks")  # the todo list says it is done
    assert "- Add tests for empty input\n" not in text
    assert "Writing tests/test_parser.py." not in text  # the old "Current Work"
    assert "Original task" not in text


def test_compacting_a_compacted_session_again_does_not_erode_its_summary():
    counter = TokenCounter()
    ctx = Context(counter=counter, window=200_000, summarizer=ExtractiveSummarizer(counter), force=True)
    full = get("full")
    first = full.compress(messages(SPEC), full.settings_model(), ctx)
    handoff = next(m for m in first.messages if m.meta.get("memory_block"))
    again = full.compress(first.messages, full.settings_model(), ctx)  # nothing new: what was kept stays
    kept = [line for line in handoff.text.splitlines() if line.startswith(("- /", "- last edits", "File Watching"))]
    assert "- /repo/docs/spec.md — created, edited ×2: “Tech-Spec: Codex Metrics Adapter”" in kept
    assert "- last edits: Edit /repo/docs/spec.md put in:" in kept
    for result in (first, again):
        text = "\n".join(m.text for m in result.messages)
        assert all(line in text for line in kept) and messages(SPEC)[-1].text in text
        assert "Skill: bmad:core:workflows:party-mode" in text  # the re-injected skill too
    assert counter.total(again.messages) >= counter.total(first.messages) * 0.85
    log = "\n".join(f"tests/test_adapter.py::test_case_{n} PASSED" for n in range(60))
    more = [*first.messages, Message(role="user", content="Now run the adapter tests."),
            Message(role="assistant", tool_calls=(ToolCall("t9", "Bash", '{"command": "pytest -v"}'),)),
            Message(role="tool", content=log + "\n60 passed in 1.20s", tool_call_ids=("t9",)),
            Message(role="assistant", content="All 60 adapter tests pass.")]
    second = full.compress(more, full.settings_model(), ctx)
    assert second.applied, second.reason
    text = next(m.text for m in second.messages if m.meta.get("memory_block"))
    assert "<earlier_summary>" in text and "more left out for the budget" not in text
    assert all(line in text for line in kept)  # every file and edit line of the first
    assert messages(SPEC)[-1].text in text  # the first final answer survives the second compaction
    assert "The work ended with this answer (verbatim):\nAll 60 adapter tests pass." in text


def test_the_benefit_check_refuses_a_summary_that_drops_an_earlier_summary():
    counter = TokenCounter()
    first = compacted(SPEC)
    earlier = [m for m in first if m.meta.get("memory_block")]
    eroded = [Message(role="user", content="<state_snapshot>\n1. Primary Request and Intent\n- Status: answered.\n"
                                          "3. Files and Code Sections\n- /repo/docs/spec.md — created\n"
                                          "</state_snapshot>")]
    before, after = counter.total(first), counter.total(first) - counter.total(earlier) + counter.total(eroded)
    verdict = benefit(earlier, eroded, summary=eroded[0].text, before=before, after=after, counter=counter)
    assert not verdict.accepted
    assert verdict.reason.startswith("no benefit: the summary keeps ")
    assert "of an earlier summary" in verdict.reason


# ---- a slash command as the only request -------------------------------------------------------------------------


def test_a_slash_command_with_its_instructions_is_the_request():
    msgs = messages(INIT)
    assert [i for i, m in enumerate(msgs) if is_real_user(m)] == [0]
    scan = Scan(msgs, range(0, len(msgs)))
    assert scan.user.requests[0][2].startswith("/init\nPlease analyze this codebase and create a CLAUDE.md file")
    kept = compacted(INIT)
    assert kept[0].text == msgs[0].text  # the command line
    assert kept[1].text == msgs[1].text  # and its instructions, verbatim
    text = next(m.text for m in kept if m.meta.get("memory_block"))
    assert "last request: /init" in text and "Primary Request and Intent\n(none)" not in text


# ---- a reply that promises a fix ---------------------------------------------------------------------------------


def test_a_reply_that_promises_a_fix_does_not_answer_the_request():
    text = summary(PROMISED)
    assert "; answered: no;" in text
    assert "Status: answered." not in text
    assert "promised" in section(text, "Current Work")
