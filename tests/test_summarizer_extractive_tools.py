"""Reading what tools did and what the assistant said: error statements anywhere in an output, the line
that says how a command ended, the tool-name vocabulary, descriptions of outcomes, sentences split
without breaking quotes, bold marks dropped without touching names, and the kind of a sentence."""

from __future__ import annotations

import pytest

from tcompact.summarizers.extractive.scan import Scan
from tcompact.summarizers.extractive.text import classify_sentence, clean, split_sentences, unbold, unmarked
from tcompact.summarizers.extractive.tools import classify, error_lines, outcome_line, record_result
from tcompact.summarizers.extractive.tools.describe import command_groups, describe, failure_groups, failure_line
from tcompact.tool_names import AGENT, FINISH, READ, SHELL, TODO, is_plan_tool, kind_of

from test_summarizer_extractive import assistant, call, result, user


@pytest.mark.parametrize("line", [
    "ValueError: invalid shard id x7 (expected 8 hex digits)",
    "requests.exceptions.ConnectionError: boom",
    "ERROR: could not connect to db-x.internal:5432: connection refused",
    "fatal: unable to access 'https://git.example.com/x.git/': Could not resolve host",
    "error[E0425]: cannot find value `x_limit` in this scope",
    "error: expected one of `,` or `}`",
    "make: *** [Makefile:41: deploy-x] Error 2",
    "E   AssertionError: assert 1 == 2",
    "FAILED tests/test_x.py::test_a - KeyError: 1",
    "sh: npm: command not found",
    "bash: line 1: ./run.sh: Permission denied",
    "cp: cannot stat 'a.txt': No such file or directory",
    "2024-05-01 10:00:01 ERROR - worker died",
    "[ERROR] build failed",
    "npm ERR! code E404",
    "panic: runtime error: index out of range",
    "  12→ERROR: disk full",
])
def test_error_statements_are_found(line):
    assert error_lines(f"ok\n{line}\nmore") == [line.strip()]


@pytest.mark.parametrize("line", [
    "isError: boolean;",
    "error: block.is_error ? block.content : undefined,",
    "    raise ValueError('bad input')",
    "if error_count > 0 {",
    "0 errors, 3 warnings",
    "Failed: 0",
    "errors: 0",
    "logger.error('x')",
    "x" * 500 + " ERROR: too long to be a statement",
    "the error handling lives in errors.py",
])
def test_code_counts_and_mentions_are_not_error_statements(line):
    assert error_lines(f"ok\n{line}\nmore") == []


def test_error_lines_are_distinct_in_order_and_bounded():
    text = "\n".join(["fatal: a", "fatal: b", "fatal: a", "fatal: c", "fatal: d", "fatal: e", "fatal: f"])
    assert error_lines(text) == ["fatal: a", "fatal: b", "fatal: e", "fatal: f"]
    assert error_lines(text, limit=10) == ["fatal: a", "fatal: b", "fatal: c", "fatal: d", "fatal: e", "fatal: f"]
    assert error_lines("all good\nnothing to see") == []


def test_outcome_line_is_the_last_informative_line():
    assert outcome_line("Chunk ID: 1\nProcess exited with code 0\nOutput:\nreindexed 42 documents\n") == (
        "reindexed 42 documents")
    assert outcome_line("345\n(Open file: n/a)\n(Current directory: /testbed)\nbash-$") == "345"
    assert outcome_line("building\n=====\n\n") == "building"
    assert outcome_line("x" * 300) == ""
    assert outcome_line("") == ""


def test_a_result_records_error_lines_outcome_and_finishing():
    action = classify(3, call("a", "Bash", {"command": "./build.sh"}), round_=1, open_file=None)
    text = "step 1\n" * 5000 + "ERROR: out of disk\n" + "step 2\n" * 5000 + "built in 12s"
    record_result(action, text, window=text[:6000] + text[-6000:], is_error=False)
    assert (action.failed, action.error_lines, action.outcome) == (False, ("ERROR: out of disk",), "built in 12s")
    submit = classify(4, call("s", "submit", {}), round_=1, open_file=None)
    record_result(submit, "diff --git a/x b/x", window="diff --git a/x b/x", is_error=False)
    assert submit.finishes and submit.kind == "other"


def test_the_tool_vocabulary_is_one():
    assert kind_of("Bash") == kind_of("exec_command") == kind_of("shell") == "shell"
    assert kind_of("Read") == kind_of("open") == kind_of("view") == kind_of("read_file") == "read"
    assert kind_of("TodoWrite") == kind_of("update_plan") == kind_of("manage_todo_list") == "todo"
    assert kind_of("write_plan") == "todo" and kind_of("ExitPlanMode") == "plan_mode"
    assert kind_of("Task") == "agent" and kind_of("submit") == "finish" and kind_of("Skill") == "skill"
    assert kind_of("str_replace_based_edit_tool") == "editor" and kind_of("frobnicate") == "other"
    assert is_plan_tool("TodoWrite") and not is_plan_tool("Read")
    assert "bash" in SHELL and "open" in READ and "todowrite" in TODO and "task" in AGENT and "submit" in FINISH


def test_describing_outcomes_and_grouping_repeats():
    messages = (
        user("deploy"),
        assistant("", call("a", "Bash", {"command": "make deploy"})),
        result("a", "Exit code 2\nmake: *** [Makefile:9: deploy] Error 2", error=True),
        assistant("", call("b", "Bash", {"command": "make  deploy"})),
        result("b", "Exit code 2\nmake: *** [Makefile:9: deploy] Error 2", error=True),
        assistant("", call("c", "Bash", {"command": "git status"})),
        result("c", "nothing to commit"),
    )
    x = Scan(messages, range(len(messages)))
    (group,) = failure_groups(x.actions)
    assert failure_line(group) == "`make deploy` (Bash ×2) → exit 2: make: *** [Makefile:9: deploy] Error 2"
    assert [len(g) for g in command_groups(x.actions)] == [1, 2]
    assert describe(x.actions[-1]) == "`git status` → ok"
    assert describe(x.actions[0]) == "`make deploy` → failed (exit 2: make: *** [Makefile:9: deploy] Error 2)"


def test_sentences_split_outside_quotes_brackets_and_code():
    assert split_sentences('He said "Stop. Now." Then we left. See e.g. Foo. The file `a.b. C` is big.') == [
        'He said "Stop. Now."', "Then we left.", "See e.g. Foo.", "The file `a.b. C` is big."]
    assert split_sentences("It works (see docs. Really). Next: run it. J. Smith wrote it.") == [
        "It works (see docs. Really).", "Next: run it.", "J. Smith wrote it."]
    assert split_sentences("“Use X.” Done.") == ["“Use X.”", "Done."]
    assert split_sentences("完成した。次に進む。") == ["完成した。", "次に進む。"]
    assert split_sentences("version 1.2.3 is out. 42 tests pass.") == ["version 1.2.3 is out.", "42 tests pass."]


def test_bold_marks_go_and_names_stay():
    assert clean("**Fixed** `pkg/__main__.py`, __init__.py and /a/marshmallow-code__marshmallow") == (
        "Fixed `pkg/__main__.py`, __init__.py and /a/marshmallow-code__marshmallow")
    assert unbold("**`__init__`** shadows `**kw**`") == "`__init__` shadows `**kw**`"
    assert clean("make: *** [x] Error 2") == "make: *** [x] Error 2"
    assert unmarked("- **Bold** __dunder__") == "Bold __dunder__"
    assert unmarked("## Heading") == "Heading"


@pytest.mark.parametrize(("sentence", "kind"), [
    ("I decided to keep the v2 endpoint.", "decision"),
    ("We will use the streaming parser since files exceed 2 GB.", "decision"),
    ("Use SQLite instead of Redis here.", "decision"),
    ("Actually, the bug is in the writer.", "correction"),
    ("Turns out the cache was never the problem.", "correction"),
    ("The root cause is a missing index.", "finding"),
    ("The test fails because the fixture is stale.", "finding"),
    ("The weather was nice.", "note"),
])
def test_the_kind_of_a_sentence(sentence, kind):
    assert classify_sentence(sentence) == kind
