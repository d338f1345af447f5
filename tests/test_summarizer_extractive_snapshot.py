"""The state-snapshot writer's parts: every kind of item in exactly one section of each contract, the
fitting (priorities, newest first, passing over what does not fit, markers only when something was left
out, shorter forms), the budget held on real sessions at many sizes, and the round-level blocks gaining
error lines, decisions and outcome lines without changing their JSON contract."""

from __future__ import annotations

import importlib
import re

import orjson
import pytest
from conftest import real_file
from generated_sessions import sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcompact.formats import read_file
from tcompact.summarizers.base import Block, SummaryRequest
from tcompact.summarizers.contracts import SECTIONS
from tcompact.summarizers.extractive.fitting import Item
from tcompact.summarizers.extractive.snapshot.fit import fit, render
from tcompact.summarizers.extractive.snapshot.layout import _LAYOUTS, place
from tcompact.counting.tokens import TokenCounter

from test_summarizer_extractive import assistant, call, result, run, user

COUNTER = TokenCounter()
KINDS = ("user", "active", "constraint", "failure", "error", "fix", "file_changed", "file_read", "file_searched",
         "command", "decision", "correction", "finding", "note", "answer", "code", "done", "state", "pending", "next",
         "resume_point", "test", "round", "cwd", "offload", "preserved", "concept", "resume")


@pytest.mark.parametrize("contract", list(SECTIONS))
def test_every_kind_goes_to_exactly_one_section_of_its_contract(contract):
    items = [Item(kind, f"{kind} text", 1, round=r) for kind in KINDS for r in (1, 2)]
    placed = place(contract, SECTIONS[contract], items)
    assert [title for title, _ in placed] == list(SECTIONS[contract])
    where = {}
    for title, entries in placed:
        for item in entries:
            where.setdefault((item.kind, item.round >= 2), set()).add(title)
    assert all(len(titles) == 1 for titles in where.values())
    assert sum(len(entries) for _, entries in placed) == len(items)  # none lost
    layout = _LAYOUTS[contract]
    assert set(KINDS) - {"failure", "command", "resume"} <= set(layout)  # every kind has its own place


def items():
    return [Item("note", f"fact {n}", 2, order=n) for n in range(10)] + [Item("note", "x " * 400, 1, order=5),
                                                                          Item("note", "must", 0, order=20)]


def test_fit_passes_over_what_does_not_fit_and_lists_in_session_order():
    text = fit([("Facts", items())], 120, counter=COUNTER)
    # the 400-token item (priority 1) does not fit: passed over, and every smaller one still gets its place
    assert text.splitlines()[2:-1] == [*(f"- fact {n}" for n in range(10)), "- must",
                                       "- (+1 more left out for the budget)"]
    assert COUNTER.count(text) <= 120


def test_fit_takes_the_most_important_then_the_newest():
    text = fit([("Facts", items())], 60, counter=COUNTER)
    # (the estimate of the first pass was low: the least important went, then what that freed was used again)
    assert text.splitlines()[2:-1] == [*(f"- fact {n}" for n in range(3, 10)), "- must",
                                       "- (+4 more left out for the budget)"]
    assert COUNTER.count(text) <= 60


def test_markers_only_when_something_was_left_out_and_none_only_when_empty():
    sections_ = [("A", [Item("note", "one", 1)]), ("B", [])]
    # issue 23 item 21: "+1 more left out" when nothing of the section was shown
    assert render(sections_) == "<state_snapshot>\n1. A\n- (1 left out for the budget)\n\n2. B\n(none)\n" \
                                "</state_snapshot>"
    text = fit(sections_, 1000, counter=COUNTER)
    assert text == "<state_snapshot>\n1. A\n- one\n\n2. B\n(none)\n</state_snapshot>"


def test_own_budget_items_are_always_kept_and_not_charged():
    own = Item("user", "- [round 1] “" + "word " * 300 + "”", 0, block=True, own=True)
    text = fit([("Users", [own]), ("Facts", [Item("note", "a fact", 1)])], 40, counter=COUNTER)
    assert "word word" in text and "- a fact" in text


def test_a_cap_holds_the_own_budget_items_too():
    # the summary's cap (the compressor's summary_max_tokens) bounds the whole text: the rest fits in what the
    # user's messages leave, and past it the oldest of them go too (issue 23 item 6)
    def sections():
        return [("Users", [Item("user", "- [round 1] “" + "word " * 300 + "”", 0, block=True, own=True, order=1),
                           Item("user", "- [round 2] “newer”", 0, block=True, own=True, order=2)]),
                ("Facts", [Item("note", "a fact", 1)])]

    text = fit(sections(), 40, counter=COUNTER, cap=400)
    assert "word word" in text and "- a fact" in text and COUNTER.count(text) <= 400
    text = fit(sections(), 40, counter=COUNTER, cap=100)
    assert "word word" not in text and "“newer”" in text and COUNTER.count(text) <= 100
    assert "- (+1 more left out for the budget)" in text.split("2. Facts")[0]


def test_shorter_forms_are_tried_when_an_item_does_not_fit():
    item = Item("resume", "long " * 200, 0, block=True, shorter=("medium " * 50, "short"))
    text = fit([("Resume", [item])], 30, counter=COUNTER)
    assert text == "<state_snapshot>\n1. Resume\nshort\n</state_snapshot>"


@pytest.mark.parametrize("key", ["codemie", "codex", "drmaciver", "sweagent"])
def test_real_sessions_hold_every_budget(summarizer, key):
    messages = read_file(str(real_file(key))).transcript().messages
    for contract in SECTIONS:
        for target in (512, 1500, 5000):
            text = run(summarizer, messages, contract=contract, body=range(len(messages)), target=target)
            assert COUNTER.count(without_users(text)) <= target, (contract, target)
            assert "(omitted)" not in text


def _session(source: str):
    """A sample's messages (``*.jsonl``: runs in any clone), or a real session's (skipped without ../shared)."""
    from conftest import SAMPLES

    return read_file(str(SAMPLES / source if source.endswith(".jsonl") else real_file(source))).transcript().messages


@pytest.mark.parametrize("source", ["chat_tool_session.jsonl", "drmaciver"])
def test_a_larger_budget_only_adds(summarizer, source):
    messages = _session(source)
    small = set(run(summarizer, messages, contract="full", body=range(len(messages)), target=800).splitlines())
    large = set(run(summarizer, messages, contract="full", body=range(len(messages)), target=4000).splitlines())
    kept = {line for line in small if line.startswith("- ") and "left out" not in line}
    assert kept <= large and len(large) > len(small)


# -- the round-level blocks --------------------------------------------------------------------------


def blocks_answer(summarizer, messages, scope="completed_react"):
    request = SummaryRequest(processor="round-level", contract="blocks", prompt="", messages=tuple(messages),
                             body=range(len(messages)), target_tokens=2000,
                             blocks=(Block("b1", scope, 0, len(messages) - 1),))
    return orjson.loads(summarizer.summarize(request).text)["blocks"][0]["summary"]


def test_blocks_keep_error_lines_decisions_and_outcome_lines(summarizer):
    messages = (
        user("rebuild the index"),
        assistant("I decided to rebuild shard 7 first, because it is the smallest.",
                  call("a", "Bash", {"command": "python reindex.py --shard 7"})),
        result("a", "starting\nERROR: could not connect to db-7.internal:5432\nretrying\nreindexed 42 documents"),
        assistant("Done: shard 7 is rebuilt."),
    )
    got = blocks_answer(summarizer, messages)
    assert "- `python reindex.py --shard 7` went on, but its output reported: ERROR: could not connect to " \
           "db-7.internal:5432" in got
    assert "- I decided to rebuild shard 7 first, because it is the smallest." in got
    assert "- `python reindex.py --shard 7` → ok: reindexed 42 documents" in got
    assert got.startswith("User Requirements:\n- “rebuild the index”\n\nFinal Result:\n- Done: shard 7 is rebuilt.")


def test_one_wording_decides_how_both_summaries_list_the_errors_of_a_call_that_went_on(summarizer, monkeypatch):
    messages = (user("rebuild the index"), assistant("", call("a", "Bash", {"command": "./build.sh"})),
                result("a", "ERROR: could not connect to db-7.internal:5432\nbuild done"), assistant("Built."))
    snapshot = run(summarizer, messages, contract="full", body=range(4))
    assert "- `./build.sh` went on, but its output reported:\n  ERROR: could not connect to db-7.internal:5432\n" \
        in snapshot
    assert "- `./build.sh` went on, but its output reported: ERROR: could not connect to db-7.internal:5432\n" \
        in blocks_answer(summarizer, messages)
    wording = importlib.import_module("tcompact.summarizers.extractive.tools.describe")  # the module, not its function
    monkeypatch.setattr(wording, "WENT_ON", "{label} printed errors and carried on:")  # the round-level path too
    assert "- `./build.sh` printed errors and carried on:\n  ERROR: could not connect to db-7.internal:5432\n" \
        in run(summarizer, messages, contract="full", body=range(4))
    assert "- `./build.sh` printed errors and carried on: ERROR: could not connect to db-7.internal:5432\n" \
        in blocks_answer(summarizer, messages)


# -- the budget, on an invented session and on generated ones ---------------------------------------

_USERS = re.compile(r'(?ms)^(?:- \[round \d+\] “.*?”|<user_message round="\d+">\n.*?\n</user_message>)\n'
                    r"(?:  → [^\n]*\n)?")
_TITLES = "|".join(re.escape(title) for titles in SECTIONS.values() for title in titles)
#: The final answer kept whole runs to the next section heading (a blank line, then "N. Title" of a contract).
_ANSWER = re.compile(rf"(?ms)^The work ended with this answer \(verbatim\):\n.*?(?=\n\n\d+\. (?:{_TITLES})$)")


def without_users(text):
    """The snapshot without the user's messages and the final answer kept whole (a budget of their own)."""
    return _ANSWER.sub("", _USERS.sub("", text))


@pytest.fixture(scope="module")
def invented():
    from generated_sessions import tool_heavy_session

    return tool_heavy_session()


@pytest.mark.parametrize("contract", list(SECTIONS))
def test_an_invented_session_holds_every_budget(summarizer, invented, contract):
    for target in (400, 1500, 5000):
        text = run(summarizer, invented, contract=contract, body=range(1, len(invented)), target=target)
        assert COUNTER.count(without_users(text)) <= target
        assert [t for _, t in re.findall(r"(?m)^(\d+)\. (.+)$", text)] == list(SECTIONS[contract])
        assert "omitted" not in text


def test_on_an_invented_session_a_larger_budget_only_adds(summarizer, invented):
    body = range(1, len(invented))
    small = set(run(summarizer, invented, contract="full", body=body, target=800).splitlines())
    large = set(run(summarizer, invented, contract="full", body=body, target=4000).splitlines())
    kept = {line for line in small if line.startswith("- ") and "left out" not in line}
    assert kept <= large and len(large) > len(small)


def test_nothing_is_left_out_of_an_invented_session_while_budget_remains(summarizer, invented):
    text = run(summarizer, invented, contract="full", body=range(1, len(invented)), target=50_000)
    assert "left out" not in text and "omitted" not in text and COUNTER.count(text) < 50_000
    for exact in ("`make lint` (Bash) → exit 2: make: *** [Makefile:12: lint] Error 2",
                  "ERROR: could not connect to cache-7.internal:6379", "/srv/app/billing/module_7.py — edited, read",
                  "def charge_7(amount):\n    return new_api.charge(amount, tariff=Tariff7)"):
        assert exact in text, exact


def test_the_snapshot_of_an_invented_session_is_deterministic(invented):
    from tcompact.summarizers.extractive import ExtractiveSummarizer

    for contract in SECTIONS:
        first = run(ExtractiveSummarizer(TokenCounter()), invented, contract=contract, target=3000)
        assert run(ExtractiveSummarizer(TokenCounter()), invented, contract=contract, target=3000) == first


def test_the_invented_sessions_correction_replaces_what_it_corrects(summarizer, invented):
    text = run(summarizer, invented, contract="full", body=range(1, len(invented)), target=50_000)
    assert "Actually, `Tariff3.rate` was never a float: the bug is in `round_half` of billing/util.py." in text
    assert "The root cause of the rounding bug is the float in `Tariff3.rate`." not in text
    assert "The root cause of the rounding bug is the float in `Tariff2.rate`." in text  # about something else
    assert "Task: audit → " not in text.split("Failed Attempts — Do Not Retry")[1]  # a report is no failure


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(), st.sampled_from(list(SECTIONS)), st.integers(min_value=300, max_value=6000))
def test_a_snapshot_never_exceeds_its_budget(messages, contract, target):
    from tcompact.summarizers.extractive import ExtractiveSummarizer

    text = run(ExtractiveSummarizer(COUNTER), messages, contract=contract, body=range(1, len(messages)),
               target=target)
    assert COUNTER.count(without_users(text)) <= target
    assert text.startswith("<state_snapshot>\n1. ") and text.endswith("\n</state_snapshot>")
    assert "omitted" not in text


# -- the snapshot's parts: --preserve, the user's rounds, the resume line, the rounds ------------------


def test_the_preservation_instruction_is_found_in_the_prompt_and_read_for_its_content_words():
    from tcompact.compressors.prefix import preserve_appendix
    from tcompact.summarizers.contracts import prompt_text
    from tcompact.summarizers.extractive.snapshot.preserve import instruction, keywords

    asked = "the staging host and port 8443 of stg-42.example.net"
    assert instruction(preserve_appendix(prompt_text("full"), asked)) == asked
    assert instruction(prompt_text("full")) is None
    assert keywords("Please keep the staging host, port 8443 and `db_url` of stg-42.example.net — everything "
                    "relevant.") == ["staging", "host", "port", "8443", "db_url", "stg-42.example.net"]


def test_the_lines_naming_most_of_the_words_are_kept_first():
    from tcompact.summarizers.extractive.scan import Scan
    from tcompact.summarizers.extractive.snapshot.preserve import preserved_items

    messages = (user("review the deploy"), assistant("", call("a", "Bash", {"command": "cat deploy.log"})),
                result("a", "boot ok\nstaging host is stg-42.example.net\nport 8443 open on the staging host\n"
                            "the host list is long\nready"))
    x = Scan(messages, range(3))
    got = [(i.text, i.priority, i.order) for i in preserved_items(x, "the staging host and port 8443")]
    assert got == [("kept on request: port 8443 open on the staging host", 0, 2),
                   ("kept on request: staging host is stg-42.example.net", 0, 2)]  # "the host list" names one word
    assert preserved_items(x, "everything relevant please") == []  # only filler: nothing to look for


def test_each_round_of_the_user_says_how_it_ended_and_the_resume_line_where_it_stands():
    from tcompact.summarizers.extractive.scan import Scan
    from tcompact.summarizers.extractive.snapshot import resume_line
    from tcompact.summarizers.extractive.snapshot.users import outcome

    messages = (user("fix"), assistant("Looking.", call("a", "Bash", {"command": "ls"})), result("a", "x"),
                user("now"), assistant("Done with it, all good."), user("more"))
    x = Scan(messages, range(6))
    assert [outcome(x.said, r) for r in (1, 2, 3)] == ["in progress: “Looking.”", "answered: “Done with it, all good.”",
                                                  "no answer in this part"]
    assert resume_line(x, x.answered()) == "last request: more; answered: no; active: last action: `ls` → ok; " \
                                           "next: (none)"
    planned = messages[:5] + (assistant("", call("t", "TodoWrite", {"todos": [
        {"content": "write the test", "status": "in_progress"}, {"content": "ship it; tag it", "status": "pending"}]})),
        result("t", "ok"))
    x = Scan(planned, range(len(planned)))
    assert resume_line(x, x.answered(), 12) == ("last request: now; answered: no; active: in_progress todo: write "
                                                "the test; next: ship it, ta…")


def test_one_line_per_round_of_what_it_changed_ran_and_how_it_ended():
    from tcompact.summarizers.extractive.scan import Scan
    from tcompact.summarizers.extractive.snapshot.work import round_items

    messages = (user("go"), assistant("", call("a", "Edit", {"file_path": "/a.py", "old_string": "a", "new_string": "b"})),
                result("a", "ok"), assistant("", call("b", "Read", {"file_path": "/b.py"})), result("b", "x"),
                assistant("", call("c", "Bash", {"command": "make"})), result("c", "Exit code 2\nboom", error=True),
                assistant("Stopped."), user("and?"), assistant("Nothing more."))
    x = Scan(messages, range(len(messages)))
    assert [(i.text, i.priority, i.order) for i in round_items(x, [1, 2])] == [
        ("round 1: 1 file(s) changed, 1 read, 1 command(s) run, 1 call(s) failed; answered", 3, 1)]  # round 2: talk


def test_the_constraints_of_a_message_too_long_to_quote_are_listed_on_their_own(counter):
    from tcompact.summarizers.extractive.scan import Scan
    from tcompact.summarizers.extractive.snapshot.users import constraint_items

    long = ("x " * 15000 + "\nYou must keep the CSV header. The weather is nice today. Never push to main.\n"
            + "y " * 15000)
    x = Scan((user(long), assistant("ok"), user("tag it")), range(3))
    expected = ["“You must keep the CSV header.”", "“Never push to main.”"]  # not the sentence without a cue
    assert [(i.kind, i.text, i.priority) for i in constraint_items(x, counter)] == [
        ("constraint", text, 1) for text in expected]
    assert [i.text for i in constraint_items(x, counter, quoted=False)] == expected
    short = Scan((user("Never push to main."), assistant("ok")), range(2))
    assert constraint_items(short, counter) == []  # quoted whole: nothing to list apart


def test_a_terse_latest_request_is_told_with_what_it_answers_and_the_original_task(counter):
    from tcompact.summarizers.extractive.scan import Scan
    from tcompact.summarizers.extractive.snapshot.users import active_items, user_items

    x = Scan((user("Write the migration guide for the v2 API, with examples for every endpoint."),
              assistant("Done. Shall I add a changelog too?"), user("yes")), range(3))
    assert [i.text for i in active_items(x, [], kept_above=False)] == [
        "Latest request: “yes”", "It replies to the assistant's previous message: it answers “Shall I add a "
        "changelog too?”", "Original task: “Write the migration guide for the v2 API, with examples for every "
        "endpoint.”", "Status: not answered yet; the work is in progress."]
    quoted = user_items(x, counter)[0]  # quoted among the user's messages: neither is said again
    assert [i.text for i in active_items(x, quoted, kept_above=False)] == [
        "It replies to the assistant's previous message: it answers “Shall I add a changelog too?”",
        "Status: not answered yet; the work is in progress."]


def test_an_item_of_a_kind_no_layout_knows_goes_last_but_one():
    placed = place("full", SECTIONS["full"], [Item("mystery", "m", 1)])
    assert [(title, [i.text for i in entries]) for title, entries in placed if entries] == [("Artifact Trail", ["m"])]
