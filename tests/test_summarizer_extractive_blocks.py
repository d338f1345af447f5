"""The extractive summariser's "blocks" contract (round-level pipeline, openjiuwen-spec §8.1.4-8.1.5):
exact summaries of completed and ongoing blocks, one JSON entry per block in order, merges of earlier
memory blocks, the per-block token budget on a real session, determinism and redaction."""

from __future__ import annotations

import re

import orjson
import pytest
from conftest import real_file
from generated_sessions import sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_summarizer_extractive import assistant, call, result, user

from tcompact.compressors.round_level.targets import ACK, memory_text
from tcompact.formats import read_file
from tcompact.model import Message
from tcompact.summarizers.base import Block, SummaryRequest, SummaryResponse
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.counting.tokens import TokenCounter

REQUEST = ("Fix the failing export test in rosterkit/export.py. Don't change the public API and please keep "
           "the CSV header as is.")
SECOND = "Now add a regression test for names outside cp1252 and run the whole suite."
FINAL = "Fixed: the export now writes UTF-8 instead of cp1252, and all 5 tests pass."


def memory(scope: str, summary: str) -> Message:
    """A round-level memory block as the pipeline writes it (spec §8.1.7)."""
    return user(memory_text("[ROUND_LEVEL_MEMORY_BLOCK]", scope, summary))


def session() -> tuple[Message, ...]:
    """Round 1 (0-12): a fix with a failing and then passing test run, a lint that never works; round 2
    (13-17): a new test written, the suite run and failing — no final answer."""
    return (
        Message(role="system", content="You are a coding agent."),
        user(REQUEST),
        assistant("I'll look at the exporter first.", call("c1", "Read", {"file_path": "/repo/rosterkit/export.py"})),
        result("c1", '     1→"""CSV export of the member roster."""\n     2→import csv\n'),
        assistant("", call("c2", "Bash", {"command": "python -m pytest -q tests/test_export.py"})),
        result("c2", "Exit code 1\nE   UnicodeEncodeError: 'charmap' codec can't encode character\n"
                     "1 failed, 4 passed in 0.12s", error=True),
        assistant("The file is opened with cp1252, which cannot encode Ł.",
                  call("c3", "Edit", {"file_path": "/repo/rosterkit/export.py", "old_string": "cp1252",
                                      "new_string": "utf-8"})),
        result("c3", "The file /repo/rosterkit/export.py has been updated."),
        assistant("", call("c4", "Bash", {"command": "npm run lint"})),
        result("c4", "Exit code 127\nsh: npm: command not found", error=True),
        assistant("", call("c5", "Bash", {"command": "python -m pytest -q"})),
        result("c5", ".....\n5 passed in 0.10s"),
        assistant(FINAL),
        user(SECOND),
        assistant("", call("c6", "Write", {"file_path": "/repo/tests/test_unicode.py",
                                           "content": "def test_polish_names():\n    assert export_members([])\n"})),
        result("c6", "File created successfully at: /repo/tests/test_unicode.py"),
        assistant("Running the whole suite now.", call("c7", "Bash", {"command": "python -m pytest -q"})),
        result("c7", "Exit code 1\nFAILED tests/test_unicode.py::test_polish_names - NameError: name 'export_members' "
                     "is not defined\n1 failed, 5 passed in 0.11s", error=True),
    )


def ask(summarizer, messages, blocks, target=1500) -> SummaryResponse:
    return summarizer.summarize(SummaryRequest(processor="round-level", contract="blocks", prompt="(serialised)",
                                               messages=tuple(messages), body=range(len(messages)),
                                               target_tokens=target, blocks=tuple(blocks)))


def answers(summarizer, messages, blocks, target=1500) -> dict[str, str]:
    payload = orjson.loads(ask(summarizer, messages, blocks, target).text)
    return {entry["block_id"]: entry["summary"] for entry in payload["blocks"]}


def sections(summary: str) -> dict[str, list[str]]:
    """Heading -> its lines (headings are the lines ending with ':' that do not start an item)."""
    out: dict[str, list[str]] = {}
    current = None
    for line in summary.splitlines():
        if line and not line.startswith(("-", " ")) and line.endswith(":"):
            current = out.setdefault(line[:-1], [])
        elif line and current is not None:
            current.append(line)
    return out


def round_blocks(messages) -> list[Block]:
    """Raw L0 blocks as spec §8.1.4 cuts them: up to the first assistant answer without tool calls."""
    blocks, start = [], 0
    for i, m in enumerate(messages):
        if m.role == "assistant" and not m.tool_calls:
            blocks.append(Block(f"block_{len(blocks) + 1}", "completed_react", start, i))
            start = i + 1
    if start < len(messages):
        blocks.append(Block(f"block_{len(blocks) + 1}", "ongoing_react", start, len(messages) - 1))
    return blocks


def test_response_shape_and_one_entry_per_block_in_order(summarizer):
    blocks = [Block("block_2", "ongoing_react", 13, 17), Block("block_1", "completed_react", 0, 12),
              Block("empty", "completed_react", 9, 3), Block("beyond", "ongoing_react", 40, 60)]
    response = ask(summarizer, session(), blocks)
    assert isinstance(response, SummaryResponse)
    assert response.model == "extractive" and response.usage is None and response.latency_s >= 0
    payload = orjson.loads(response.text)
    assert list(payload) == ["blocks"]
    assert [list(entry) for entry in payload["blocks"]] == [["block_id", "summary"]] * 4
    assert [entry["block_id"] for entry in payload["blocks"]] == ["block_2", "block_1", "empty", "beyond"]
    got = {entry["block_id"]: entry["summary"] for entry in payload["blocks"]}
    assert got["empty"] == "User Requirements:\n- (none)\n\nFinal Result:\n- (none)"
    assert got["beyond"] == "User Requirements:\n- (none)\n\nOpen Work:\n- (none)"


def test_completed_block_keeps_the_request_verbatim_and_the_final_answer(summarizer):
    got = answers(summarizer, session(), [Block("block_1", "completed_react", 0, 12)])["block_1"]
    assert got == "\n".join([
        "User Requirements:",
        f"- “{REQUEST}”",
        "",
        "Final Result:",
        f"- {FINAL}",
        "- latest test run: `python -m pytest -q` → ok (5 passed in 0.10s)",
        "",
        "Work Done:",
        "- edited export.py; read export.py; ran 3 command(s); 2 tool call(s) failed",
        ("- `python -m pytest -q tests/test_export.py` failed (UnicodeEncodeError: 'charmap' codec can't encode "
         "character); fixed by a later successful `python -m pytest -q`"),
        "- The file is opened with cp1252, which cannot encode Ł.",
        "",
        "Failed Attempts — Do Not Retry:",
        "- `npm run lint` (Bash) → exit 127: sh: npm: command not found",
        "",
        "Artifact Trail:",
        "- /repo/rosterkit/export.py — edited, read",
        "- `npm run lint` → failed (exit 127)",
        "- `python -m pytest -q tests/test_export.py` → failed (exit 1), 1 failed, 4 passed in 0.12s",
        "- `python -m pytest -q` → ok, 5 passed in 0.10s",
    ])


def test_ongoing_block_has_open_work_with_the_last_action(summarizer):
    got = answers(summarizer, session(), [Block("block_2", "ongoing_react", 13, 17)])["block_2"]
    error = "FAILED tests/test_unicode.py::test_polish_names - NameError: name 'export_members' is not defined"
    assert got == "\n".join([
        "User Requirements:",
        f"- “{SECOND}”",
        "",
        "Open Work:",
        "- status: unfinished — the block ends before a final answer; continue from the last action",
        f"- last action: `python -m pytest -q` → failed (exit 1: {error})",
        "- last assistant message: “Running the whole suite now.”",
        "- recent: Write /repo/tests/test_unicode.py → ok",
        "",
        "Work Done:",
        "- created test_unicode.py; ran 1 command(s); 1 tool call(s) failed",
        "",
        "Failed Attempts — Do Not Retry:",
        f"- `python -m pytest -q` (Bash) → exit 1: {error}",
        "",
        "Artifact Trail:",
        "- /repo/tests/test_unicode.py — created",
        "- `python -m pytest -q` → failed (exit 1), 1 failed, 5 passed in 0.11s",
    ])
    assert "Final Result:" not in got


def test_a_block_without_a_request_names_the_request_it_continues(summarizer):
    messages = session()
    got = sections(answers(summarizer, messages, [Block("block_3", "ongoing_react", 16, 17)])["block_3"])
    assert got["User Requirements"] == [f"- (continues an earlier request) “{SECOND}”"]
    assert got["Open Work"][1].startswith("- last action: `python -m pytest -q` → failed (exit 1: FAILED")


def test_the_scope_decides_completed_or_ongoing_and_mixed_context_reads_the_messages(summarizer):
    messages = session()
    as_ongoing = sections(answers(summarizer, messages, [Block("b", "ongoing_react", 0, 12)])["b"])
    assert "Final Result" not in as_ongoing
    assert as_ongoing["Open Work"][:2] == [
        "- status: unfinished — the block ends before a final answer; continue from the last action",
        "- last action: `python -m pytest -q` → ok (5 passed in 0.10s)"]
    mixed = sections(answers(summarizer, messages, [Block("m", "mixed_context", 0, 12)])["m"])
    assert mixed["Final Result"][0] == f"- {FINAL}"


MEM1 = """User Requirements:
- “Set up the CI pipeline with GitHub Actions; only use ubuntu-latest runners.”

Final Result:
- CI workflow added in .github/workflows/ci.yml; the first run is green.

Failed Attempts — Do Not Retry:
- `act -j test` (Bash) → exit 127: act: command not found

Artifact Trail:
- /repo/.github/workflows/ci.yml — created
- `gh run list` → ok"""

MEM2 = """## User Requirements
1. Add a coverage badge to the README.
   Keep the README intro unchanged.

## Final Result
Badge added; coverage is 87%.

## Artifact Trail
- /repo/README.md — edited
- `act -j test` → ok (exit 0)"""

MEM3 = """User Requirements:
- “Publish the package to PyPI, but never upload from a dirty tree.”

Open Work:
- status: unfinished — the block ends before a final answer; continue from the last action
- last action: `twine upload dist/*` → failed (exit 1: 403 Forbidden)
- next step: ask the user for a PyPI token

Failed Attempts — Do Not Retry:
- `twine upload dist/*` (Bash) → exit 1: 403 Forbidden

Artifact Trail:
- /repo/.github/workflows/ci.yml — edited ×2
- (+3 omitted for budget)"""


def memories() -> tuple[Message, ...]:
    """Three memory blocks (one written in a model's markdown style), an acknowledgement after the first."""
    return (memory("completed_react", MEM1), assistant(ACK), memory("completed_react", MEM2),
            memory("ongoing_react", MEM3))


def test_merge_of_three_memory_blocks_keeps_every_users_requirements(summarizer):
    got = answers(summarizer, memories(), [Block("merge_1_1", "recursive_merge", 0, 3, 1, 2, 3)])["merge_1_1"]
    assert got.splitlines() == [
        "User Requirements:",
        "- “Set up the CI pipeline with GitHub Actions; only use ubuntu-latest runners.”",
        "- Add a coverage badge to the README.",
        "  Keep the README intro unchanged.",
        "- “Publish the package to PyPI, but never upload from a dirty tree.”",
        "",
        "Final Result:",  # every final result, oldest first
        "- CI workflow added in .github/workflows/ci.yml; the first run is green.",
        "- Badge added; coverage is 87%.",
        "",
        "Open Work:",  # only the newest block's open work stays open
        "- status: unfinished — the block ends before a final answer; continue from the last action",
        "- last action: `twine upload dist/*` → failed (exit 1: 403 Forbidden)",
        "- next step: ask the user for a PyPI token",
        "",
        "Work Done:",  # a failure a later block ran successfully is history, not "do not retry"
        "- failed earlier, later ran ok: `act -j test` (Bash) → exit 127: act: command not found",
        "",
        "Failed Attempts — Do Not Retry:",
        "- `twine upload dist/*` (Bash) → exit 1: 403 Forbidden",
        "",
        "Artifact Trail:",  # one line per file (operations added up) and per command, newest first
        "- /repo/.github/workflows/ci.yml — created, edited ×2",
        "- /repo/README.md — edited",
        "- `act -j test` → ok (exit 0)",
        "- `gh run list` → ok",
    ]


def test_older_open_work_becomes_history_when_a_later_block_follows(summarizer):
    messages = (memory("ongoing_react", MEM3), memory("completed_react", MEM1))
    got = sections(answers(summarizer, messages, [Block("m", "recursive_merge", 0, 1, 1, 2, 2)])["m"])
    assert "Open Work" not in got
    assert got["Final Result"] == ["- CI workflow added in .github/workflows/ci.yml; the first run is green."]
    assert got["Work Done"] == [
        "- earlier open work (continued later): last action: `twine upload dist/*` → failed (exit 1: 403 Forbidden)",
        "- earlier open work (continued later): next step: ask the user for a PyPI token"]
    assert got["User Requirements"] == [
        "- “Publish the package to PyPI, but never upload from a dirty tree.”",
        "- “Set up the CI pipeline with GitHub Actions; only use ubuntu-latest runners.”"]


def test_merge_drops_repeated_and_continued_requirements(summarizer):
    first = "User Requirements:\n- “Port the parser to Rust and keep the CLI flags identical.”\n\nFinal Result:\n- done"
    later = ("User Requirements:\n- (continues an earlier request) “Port the parser to Rust and keep the CLI…”\n\n"
             "Open Work:\n- last action: `cargo build` → ok")
    again = "User Requirements:\n- “Port the parser to Rust and keep the CLI flags identical.”\n\nFinal Result:\n- ok"
    messages = (memory("completed_react", first), memory("ongoing_react", later), memory("completed_react", again))
    got = sections(answers(summarizer, messages, [Block("m", "recursive_merge", 0, 2, 1, 2, 3)])["m"])
    assert got["User Requirements"] == ["- “Port the parser to Rust and keep the CLI flags identical.”"]


def test_mixed_context_merges_a_memory_block_with_raw_messages(summarizer):
    messages = (memory("completed_react", MEM1),) + session()[1:13]
    got = sections(answers(summarizer, messages, [Block("raw_fallback", "mixed_context", 0, 12)])["raw_fallback"])
    assert got["User Requirements"] == [
        "- “Set up the CI pipeline with GitHub Actions; only use ubuntu-latest runners.”", f"- “{REQUEST}”"]
    assert got["Final Result"][:2] == [
        "- CI workflow added in .github/workflows/ci.yml; the first run is green.", f"- {FINAL}"]


def test_an_existing_block_is_compressed_harder_and_keeps_its_requirement(summarizer, counter):
    long_block = MEM1.replace("- `gh run list` → ok", "\n".join(f"- /repo/src/module_{n}.py — read" for n in range(80)))
    got = answers(summarizer, (memory("completed_react", long_block),),
                  [Block("memory_1", "existing_round_level_block", 0, 0, 1, 2, 1)], target=200)["memory_1"]
    assert counter.count(got) <= 200
    assert sections(got)["User Requirements"] == [
        "- “Set up the CI pipeline with GitHub Actions; only use ubuntu-latest runners.”"]
    assert sections(got)["Final Result"] == ["- CI workflow added in .github/workflows/ci.yml; the first run is green."]


def test_a_long_request_cut_for_budget_keeps_its_constraints(summarizer, counter):
    request = ("Please migrate the billing module to the new API. " + "Context line about invoices. " * 150
               + "Never touch the production config file. The migration must keep all existing tests green.")
    messages = (user(request), assistant("Done: migrated."))
    got = answers(summarizer, messages, [Block("b", "completed_react", 0, 1)], target=300)["b"]
    assert counter.count(got) <= 300
    line = sections(got)["User Requirements"][0]
    assert line.startswith("- “Please migrate the billing module to the new API. Context line about invoices.")
    assert ("[…] Never touch the production config file. … The migration must keep all existing tests green. "
            "[") in line


@pytest.mark.parametrize("target", [300, 1500])
def test_budget_on_the_real_codemie_session(summarizer, counter, target):
    messages = read_file(str(real_file("codemie"))).transcript().messages
    blocks = round_blocks(messages)
    assert [(b.start, b.end) for b in blocks] == [(0, 8), (9, 49), (50, 53), (54, 99), (100, 125), (126, 133),
                                                  (134, 153), (154, 155)]
    blocks[-1] = Block("block_8", "ongoing_react", 154, 154)  # the last request, not answered yet
    got = answers(summarizer, messages, blocks, target=target)
    assert list(got) == [b.block_id for b in blocks]
    for block in blocks:
        summary = got[block.block_id]
        assert counter.count(summary) <= target
        heads = [line for line in summary.splitlines() if re.fullmatch(r"[A-Z][^:-].*:", line)]
        assert heads[:2] == ["User Requirements:", "Final Result:" if block.scope == "completed_react" else "Open Work:"]
    assert sections(got["block_2"])["User Requirements"] == [
        ("- “analyze existing codex folder for sessions structure and writen details. there is a need to implement "
         "metrics plugin for codex similar to how claude and gemini is implemented”")]
    assert sections(got["block_7"])["User Requirements"] == [
        ("- “TODO is not acceptable, implementation must be full. comments about performance also valid, need to look "
         "only for current date while performing matching for session.”")]
    assert sections(got["block_6"])["User Requirements"] == [
        ("- “p” (reply to the assistant's previous message: it picks the option “[p] Party Mode - Get multi-agent "
         "feedback on the spec”)")]
    assert sections(got["block_8"])["User Requirements"] == [
        ("- “d” (reply to the assistant's previous message: it picks the option “[d] Done - Spec complete, proceed to "
         "implementation”)")]
    assert sections(got["block_7"])["Final Result"][0].startswith("- LGTM - Implementation Complete: Imports verified:")


def test_merging_the_real_sessions_blocks_keeps_every_request_within_budget(summarizer, counter):
    messages = read_file(str(real_file("codemie"))).transcript().messages
    blocks = round_blocks(messages)
    first = answers(summarizer, messages, blocks, target=1500)
    wrapped = tuple(memory(b.scope, first[b.block_id]) for b in blocks)
    for target in (300, 1500):
        merged = answers(summarizer, wrapped, [Block("merge_1_1", "recursive_merge", 0, len(wrapped) - 1, 1, 2,
                                                     len(wrapped))], target=target)["merge_1_1"]
        assert counter.count(merged) <= target
        requirements = sections(merged)["User Requirements"]
        # every user message of the session, none dropped; /clear is harness text, not a request, and the
        # prompt command that opened the session is one
        assert len(requirements) == 8
        starts = ["- “/bmad:bmm:workflows:create-tech-spec", "- “analyze existing", "- “proceed” (reply", "- “a - run codex",
                  "- “doublecheck", "- “p” (reply", "- “TODO is not acceptable", "- “d” (reply"]
        assert all(line.startswith(start) for line, start in zip(requirements, starts, strict=True)), requirements


def _session(source: str):
    """A sample's messages (``*.jsonl``: runs in any clone), or a real session's (skipped without ../shared)."""
    from conftest import SAMPLES

    return read_file(str(SAMPLES / source if source.endswith(".jsonl") else real_file(source))).transcript().messages


@pytest.mark.parametrize("source", ["chat_tool_session.jsonl", "codemie"])
def test_deterministic(counter, source):
    messages = _session(source)
    blocks = round_blocks(messages)
    first = ask(ExtractiveSummarizer(counter), messages, blocks, target=700).text
    second = ask(ExtractiveSummarizer(TokenCounter()), messages, blocks, target=700).text
    assert first == second
    wrapped = tuple(memory(b.scope, s) for b, s in zip(blocks, answers(ExtractiveSummarizer(counter), messages,
                                                                       blocks).values()))
    merge = [Block("merge_1_1", "recursive_merge", 0, len(wrapped) - 1, 1, 2, len(wrapped))]
    assert ask(ExtractiveSummarizer(counter), wrapped, merge).text == ask(ExtractiveSummarizer(TokenCounter()),
                                                                         wrapped, merge).text


def test_planted_secrets_do_not_leak(summarizer):
    key = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0" * 3
    messages = (
        user(f"Deploy the service with OPENAI_API_KEY={key} and never restart the database."),
        assistant("", call("a", "Bash", {"command": f"OPENAI_API_KEY={key} ./deploy.sh"})),
        result("a", f"Exit code 1\nerror: key {key} has no access to region eu", error=True),
        assistant(f"The key {key} is not allowed in eu."),
        memory("completed_react", f"User Requirements:\n- “use {key} for staging”\n\nFinal Result:\n- done"),
    )
    blocks = [Block("block_1", "completed_react", 0, 3), Block("mixed", "mixed_context", 0, 4)]
    for target in (300, 1500):
        text = ask(summarizer, messages, blocks, target=target).text
        assert key not in text and "Q1w2E3r4T5y6U7i8O9p0" not in text
        assert "[REDACTED:openai_key]" in text
    got = sections(answers(summarizer, messages, blocks)["block_1"])
    assert got["User Requirements"] == [
        "- “Deploy the service with OPENAI_API_KEY=[REDACTED:openai_key] and never restart the database.”"]


def test_the_plan_set_before_an_ongoing_block_drives_its_open_work(summarizer):
    todos = {"todos": [{"content": "Fix the encoding", "status": "completed"},
                       {"content": "Add a regression test", "status": "in_progress"},
                       {"content": "Update the changelog", "status": "pending"}]}
    messages = (session()[:13] + (assistant("", call("t1", "TodoWrite", todos)), result("t1", "Todos updated."),
                                  assistant("Plan noted."))
                + session()[13:])
    got = sections(answers(summarizer, messages, [Block("b", "ongoing_react", 16, len(messages) - 1)])["b"])
    assert got["Open Work"][1] == "- in progress (todo): Add a regression test"
    assert "- next step: Update the changelog" in got["Open Work"]
    assert got["Work Done"] == ["- created test_unicode.py; ran 1 command(s); 1 tool call(s) failed"]  # plan unchanged


def test_lone_surrogates_still_give_valid_json(summarizer):
    messages = (user("fix the bug \ud800 now"), assistant("done"))
    got = answers(summarizer, messages, [Block("b", "completed_react", 0, 1)])
    assert got == {"b": "User Requirements:\n- “fix the bug \ufffd now”\n\nFinal Result:\n- done"}


# -- memory blocks a model wrote, or a raw answer, read back --------------------------------------------


def one_block(summarizer, summary, scope="completed_react"):
    return answers(summarizer, (memory(scope, summary),), [Block("m", "existing_round_level_block", 0, 0, 1, 2, 1)])["m"]


def test_a_models_headings_are_read_back_into_the_sections(summarizer):
    written = ("## Requirements\n- Keep the API stable.\n\n**Final Result**: shipped v2.1 to staging.\n\n"
               "**Open Work**\n- deploy to prod\n\n1. Failures\n- `make deploy` → exit 2: no credentials\n\n"
               "Key facts:\n- the cache lives in redis\n\nFiles:\n- /srv/app/deploy.sh — edited")
    assert one_block(summarizer, written).splitlines() == [
        "User Requirements:", "- Keep the API stable.", "", "Final Result:", "- shipped v2.1 to staging.", "",
        "Open Work:", "- deploy to prod", "", "Work Done:", "- the cache lives in redis", "",
        "Failed Attempts — Do Not Retry:", "- `make deploy` → exit 2: no credentials", "",
        "Artifact Trail:", "- /srv/app/deploy.sh — edited"]


def test_a_raw_json_answer_kept_as_a_summary_gives_one_part_per_entry(summarizer):
    raw = orjson.dumps({"blocks": [
        {"block_id": "block_1", "summary": "User Requirements:\n- “first task”\n\nFinal Result:\n- one"},
        {"block_id": "block_2", "summary": "User Requirements:\n- “second task”\n\nFinal Result:\n- two"}]}).decode()
    assert one_block(summarizer, raw, scope="mixed_context").splitlines() == [
        "User Requirements:", "- “first task”", "- “second task”", "", "Final Result:", "- one", "- two"]


def test_a_hard_truncated_block_gives_back_the_users_serialised_requests(summarizer):
    cut = ("[0] role=user | content=port the parser\n[1] role=assistant | content=Ported it.\n...[TRUNCATED]...\n"
           "[7] role=user | content=<system-reminder>x</system-reminder>\n[8] role=user | content=now the CLI")
    got = sections(one_block(summarizer, cut, scope="truncated_full_context"))
    assert got["User Requirements"] == ["- “port the parser”", "- “now the CLI”"]  # never the harness text
    assert got["Work Done"] == ["- Ported it. ...[TRUNCATED]..."]


# -- the per-block budget, on an invented session and on generated ones ---------------------------------


@pytest.fixture(scope="module")
def invented():
    from generated_sessions import tool_heavy_session

    return tool_heavy_session(6)


def _request(n):
    if n % 2:
        return [f"- “Now review module_{n}; prefer small commits.”"]
    return [f"- “Round {n}: port module_{n} of the `billing` package to the new API.",
            f"  Never change the public signature of charge_{n}() and keep tests/test_module_{n}.py green.”"]


@pytest.mark.parametrize("target", [300, 1500])
def test_the_blocks_of_an_invented_session_hold_their_budget_and_every_request(summarizer, counter, invented,
                                                                             target):
    blocks = round_blocks(invented)
    # round 3's correction is an answer without tool calls: it ends a block, and its final answer is one alone
    assert [(b.start, b.end) for b in blocks] == [(0, 12), (13, 28), (29, 40), (41, 54), (55, 55), (56, 67), (68, 79)]
    got = answers(summarizer, invented, blocks, target=target)
    assert list(got) == [b.block_id for b in blocks]
    assert all(counter.count(summary) <= target for summary in got.values())
    firsts = [sections(got[b.block_id])["User Requirements"][0] for b in blocks]
    assert firsts == [_request(n)[0] for n in (0, 1, 2, 3)] + [
        "- (continues an earlier request) “Now review module_3; prefer small commits.”"] + [
        _request(n)[0] for n in (4, 5)]
    merged = answers(summarizer, tuple(memory(b.scope, got[b.block_id]) for b in blocks),
                     [Block("merge_1_1", "recursive_merge", 0, len(blocks) - 1, 1, 2, len(blocks))], target=target)
    assert counter.count(merged["merge_1_1"]) <= target
    assert sections(merged["merge_1_1"])["User Requirements"] == [line for n in range(6) for line in _request(n)]


def test_the_blocks_of_an_invented_session_are_deterministic(invented):
    blocks = round_blocks(invented)
    first = ask(ExtractiveSummarizer(TokenCounter()), invented, blocks, target=700).text
    assert ask(ExtractiveSummarizer(TokenCounter()), invented, blocks, target=700).text == first


@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(), st.integers(min_value=40, max_value=3000))
def test_no_block_summary_exceeds_its_budget(messages, target):
    counter = TokenCounter()
    blocks = round_blocks(messages)
    got = answers(ExtractiveSummarizer(counter), messages, blocks, target=target)
    assert list(got) == [b.block_id for b in blocks]
    assert all(counter.count(summary) <= target for summary in got.values())


@pytest.mark.parametrize(("heading", "section"), [
    ("### Final Answer", "Final Result"), ("__Next steps__", "Open Work"), ("2) Constraints:", "User Requirements"),
    ("**Dead ends**:", "Failed Attempts — Do Not Retry"), ("Progress", "Work Done"), ("Relevant files:", "Artifact Trail"),
    ("# Goal", "User Requirements"),
])
def test_every_usual_heading_a_model_writes_finds_its_section(summarizer, heading, section):
    assert sections(one_block(summarizer, f"{heading}\n- the item"))[section] == ["- the item"]


def test_a_budget_of_nothing_renders_the_whole_summary_and_a_tiny_one_is_still_held(summarizer, counter):
    big = "User Requirements:\n- “" + "word " * 400 + "”\n\nFinal Result:\n- done"
    request = [Block("m", "existing_round_level_block", 0, 0, 1, 2, 1)]
    whole = answers(summarizer, (memory("completed_react", big),), request, target=0)["m"]
    assert whole == big  # no budget: every line as it is
    tiny = answers(summarizer, (memory("completed_react", big),), request, target=30)["m"]
    assert counter.count(tiny) <= 30 and tiny.startswith("User Requirements:\n- “word word")


def test_a_fitted_block_summary_is_counted_from_its_lines_exactly():
    counter = TokenCounter("o200k_base", cache=False)
    got = answers(ExtractiveSummarizer(counter), session(), round_blocks(session()), target=120)
    fitted = [s for s in got.values() if counter.known(s) is not None]
    assert fitted  # the fit counted them and kept their counts (round-level counts its memory blocks from them)
    for summary in fitted:
        assert counter.known(summary) == len(counter.encoding.encode_ordinary(summary))
