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
    (group,) = failure_groups(x.work.actions)
    assert failure_line(group) == "`make deploy` (Bash ×2) → exit 2: make: *** [Makefile:9: deploy] Error 2"
    assert [len(g) for g in command_groups(x.work.actions)] == [1, 2]
    assert describe(x.work.actions[-1]) == "`git status` → ok"
    assert describe(x.work.actions[0]) == "`make deploy` → failed (exit 2: make: *** [Makefile:9: deploy] Error 2)"


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


# ---- shell lines, through classify --------------------------------------------------------------


def shell(command, name="Bash"):
    a = classify(0, call("x", name, {"command": command}), round_=1, open_file=None)
    return a.paths, a.test, a.quiet


@pytest.mark.parametrize(("command", "paths", "test", "quiet"), [
    ("sudo -u web timeout 30 env A=1 rm old.log", [("old.log", "deleted")], None, False),  # wrappers skipped
    ("sed -i 's/a/b/' src/x.py", [("src/x.py", "edited")], None, False),
    ("echo hi | tee out.txt", [("out.txt", "written")], None, False),
    ("install -m 644 a.conf /etc/a.conf", [("/etc/a.conf", "written")], None, False),
    ("touch new.md", [("new.md", "created")], None, False),
    ("git commit -m 'x'", [], None, False),  # git that changes the repository
    ("git status", [], None, True),
    ("grep -rn foo src/ tests/", [("src/", "searched"), ("tests/", "searched")], None, True),
    ("grep -e foo -f pats.txt a.c", [("a.c", "searched")], None, True),  # flag values are no operands
    ("cat < in.txt > /dev/null", [("in.txt", "read")], None, True),
    ("awk '{print}' data.csv", [("data.csv", "read")], None, True),
    ("jq .a f.json", [("f.json", "read")], None, True),
    ("head -n 5 README", [("README", "read")], None, True),
    ("bash -c 'cat a.txt; rm b.txt'", [("a.txt", "read"), ("b.txt", "deleted")], None, False),
    ("cat <<EOF > gen.py\nprint(1)\nEOF", [("gen.py", "written")], None, False),  # the heredoc body is no command
    ("npx jest src/a.test.js", [], (("jest", frozenset({"src/a.test.js"})),), False),
    ("python3 -m pytest tests/x.py::t -q", [], (("pytest", frozenset({"tests/x.py::t"})),), False),
    ("poetry run pytest", [], (("pytest", frozenset()),), False),
    ("echo 'unclosed", [], None, True),  # a line that does not parse is split on blanks
])
def test_what_a_shell_line_does_to_files_and_tests(command, paths, test, quiet):
    assert shell(command) == (paths, test, quiet)


def test_a_command_given_as_a_list_or_raw_text():
    listed = classify(0, call("x", "shell", {"command": ["git", "log", "--oneline", "-n", "3"]}), round_=1,
                      open_file=None)
    assert (listed.kind, listed.label, listed.command) == ("command", "`git log --oneline -n 3`",
                                                           "git log --oneline -n 3")
    raw = classify(0, call("x", "bash", "ls -la src", kind="custom"), round_=1, open_file=None)
    assert (raw.kind, raw.command) == ("command", "ls -la src")
    codex = classify(0, call("x", "exec_command", {"cmd": "make", "workdir": " /srv/app "}), round_=1, open_file=None)
    assert (codex.command, codex.workdir) == ("make", "/srv/app")
    assert classify(0, call("x", "Bash", {"command": "tail -f app.log"}), round_=1, open_file=None).partial


@pytest.mark.parametrize(("name", "args", "kind", "label", "paths"), [
    ("Read", {"file_path": "/r/a.py", "offset": 1}, "read", "Read /r/a.py", [("/r/a.py", "read")]),
    ("str_replace_editor", {"command": "view", "path": "/r/b.py"}, "read", "str_replace_editor /r/b.py",
     [("/r/b.py", "read")]),
    ("str_replace_editor", {"command": "str_replace", "path": "/r/b.py"}, "edit", "str_replace_editor /r/b.py",
     [("/r/b.py", "edited")]),
    ("Glob", {"pattern": "**/*.py"}, "search", "Glob **/*.py", []),
    ("find_file", {"file_name": "setup.py", "dir": "/repo"}, "search", "find_file setup.py in /repo", []),
    ("Task", {"description": "explore", "prompt": "find the parser"}, "other", "Task: explore", []),
    ("mcp__db__query", {"timeout": 5, "sql": "select 1"}, "other", 'mcp__db__query {"sql":"select 1"}', []),
    ("ping", {}, "other", "ping", []),
])
def test_other_tools_are_told_by_name_and_argument_shape(name, args, kind, label, paths):
    a = classify(0, call("x", name, args), round_=1, open_file=None)
    assert (a.kind, a.label, a.paths) == (kind, label, paths)


def test_a_read_of_part_of_a_file_and_what_a_write_defines():
    part = classify(0, call("x", "Read", {"file_path": "/r/a.py", "offset": 40}), round_=1, open_file=None)
    whole = classify(0, call("x", "view", {"path": "/r/a.py", "view_range": [1, 50]}), round_=1, open_file=None)
    assert (part.partial, whole.partial) == (True, False)
    written = classify(0, call("x", "Write", {"file_path": "/r/n.py", "content": '"""Load the settings of the app."""\n'
                                                                               "def load():\n    pass\nclass Config:"}),
                       round_=1, open_file=None)
    assert (written.symbols, written.gist, written.keys) == (("load", "Config"), "Load the settings of the app.",
                                                             (("write", "/r/n.py"), ("file", "/r/n.py")))
    edits = classify(0, call("x", "MultiEdit", {"file_path": "/r/m.py", "edits": [{"new_string": "def a(): ..."},
                                                                                 {"new_string": "def b(): ..."}]}),
                     round_=1, open_file=None)
    assert edits.symbols == ("a", "b")


# ---- results, through record_result ---------------------------------------------------------------


def recorded(name, args, text, error=False):
    from tcompact.summarizers.extractive.text import window

    a = classify(0, call("x", name, args), round_=1, open_file=None)
    record_result(a, text, window=window(text), is_error=error)
    return a


@pytest.mark.parametrize(("name", "args", "text", "failed", "error"), [
    ("Bash", {"command": "python x.py"}, "start\nTraceback (most recent call last):\n  File \"x.py\"\nKeyError: 'k'",
     True, "KeyError: 'k'"),
    ("Bash", {"command": "foo"}, "bash: foo: command not found", True, "bash: foo: command not found"),
    ("Bash", {"command": "pytest"}, "....\n3 failed, 2 passed in 1.0s", True, "3 failed, 2 passed in 1.0s"),
    ("Bash", {"command": "make"}, "Process exited with code 0\nOutput:\nbuilt 3 targets", False, ""),
    ("WebFetch", {"url": "https://x"}, "Request denied by policy", True, "Request denied by policy"),
    ("Edit", {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"},
     "<tool_use_error>String to replace not found in file.</tool_use_error>", True,
     "String to replace not found in file."),
    ("submit", {}, "Error: nothing to submit", True, "Error: nothing to submit"),
    # a sub-agent's answer is a report: its first word is no verdict (its is_error flag is)
    ("Task", {"prompt": "how are errors handled?"}, "Error handling is done in errors.py; nothing else raises.",
     False, ""),
    ("Task", {"prompt": "run it"}, "Agent crashed", True, "Agent crashed"),
])
def test_a_result_is_read_for_failure_and_its_key_error(name, args, text, failed, error):
    a = recorded(name, args, text, error=text == "Agent crashed")
    assert (a.answered, a.failed, a.error) == (True, failed, error)


def test_a_result_gives_its_exit_code_outcome_gist_and_finishing():
    make = recorded("Bash", {"command": "make"}, "Process exited with code 0\nOutput:\nbuilt 3 targets")
    assert (make.exit_code, make.outcome, make.first_line) == (0, "built 3 targets", "built 3 targets")
    read = recorded("Read", {"file_path": "/r/a.py"}, '     1→"""Parse the config files of the app."""\n'
                                                      "     2→def load(path):\n     3→    pass\n     4→class Config:")
    assert (read.gist, read.symbols) == ("Parse the config files of the app.", ("load", "Config"))
    data = recorded("Read", {"file_path": "/r/data.json"}, '{"def": "class X"}')
    assert (data.gist, data.symbols) == ("", ())  # a data file has no gist
    assert recorded("submit", {}, "diff --git a/x b/x").finishes
    updated = recorded("Write", {"file_path": "/r/n.py", "content": "x = 1"}, "The file /r/n.py has been updated.")
    assert updated.paths == [("/r/n.py", "written")]  # an update of an existing file, not a creation
    created = recorded("Write", {"file_path": "/r/n.py", "content": "x = 1"}, "File created successfully at: /r/n.py")
    assert created.paths == [("/r/n.py", "created")]


@pytest.mark.parametrize(("text", "line"), [
    ("ok\n$ \n", "ok"), ("result: 42\n(END)\n", "result: 42"), ("=====\n", ""), ("line\n" + "x" * 300, ""),
    ("(Open file: /a)\n(Current directory: /b)\nbash-$", ""), ("Exit code 0\nWall time: 1s\n", ""),
])
def test_the_outcome_line_skips_headers_prompts_and_rules(text, line):
    assert outcome_line(text) == line


def test_where_offloaded_or_cleared_output_can_be_found_again():
    from tcompact.summarizers.extractive.tools import offloaded

    assert list(offloaded("x [[OFFLOAD: handle=abc123, type=filesystem, path=o/abc123.json]] y")) == ["o/abc123.json"]
    # the path runs to the closing "]]", as restore reads it: a folder may hold brackets
    assert list(offloaded("[[OFFLOAD: handle=h1, type=filesystem, path=run [2]/o/h1.json]]")) == ["run [2]/o/h1.json"]
    assert list(offloaded("[... tcompact truncated 3 lines / 9 characters of 99 here; the full output is in "
                          "s.jsonl:4 ...]")) == ["s.jsonl:4"]
    assert list(offloaded("The full result is in s.jsonl:9; run the call again if you need it")) == ["s.jsonl:9"]
    assert list(offloaded("Full output saved to: /tmp/out.txt")) == ["/tmp/out.txt"]
    assert list(offloaded("nothing here")) == []


# ---- descriptions of outcomes --------------------------------------------------------------------


def test_the_last_actions_count_repeats_and_tests_say_what_was_verified():
    from tcompact.summarizers.extractive.tools import last_actions, test_coverage

    messages = [user("go")]
    for n in range(3):
        messages += [assistant("", call(f"p{n}", "Bash", {"command": "make poll"})), result(f"p{n}", "waiting")]
    messages += [assistant("", call("t", "Bash", {"command": "pytest -q"})), result("t", "4 passed in 0.1s"),
                 assistant("", call("e", "Edit", {"file_path": "/r/a.py", "old_string": "1", "new_string": "2"})),
                 result("e", "ok")]
    x = Scan(messages, range(len(messages)))
    assert last_actions(x.work.actions) == [("Edit /r/a.py → ok", 0), ("`pytest -q` → ok (4 passed in 0.1s)", 1),
                                       ("`make poll` → ok (×3 in a row)", 2)]
    assert test_coverage(x.work.actions) == [("latest test run: `pytest -q` → ok (4 passed in 0.1s)", 1),
                                        ("edited after the last test run (unverified): /r/a.py", 0)]
    untested = Scan(messages[:1] + messages[-2:], range(3))
    assert test_coverage(untested.work.actions) == [("no test run recorded after editing: /r/a.py", 1)]


def test_commands_list_failures_then_tests_then_the_rest():
    from tcompact.summarizers.extractive.tools import commands, fixes

    messages = (user("go"),
                assistant("", call("a", "Bash", {"command": "make build"})), result("a", "built"),
                assistant("", call("b", "Bash", {"command": "pytest -q"})), result("b", "Exit code 1\n1 failed",
                                                                                  error=True),
                assistant("", call("c", "Bash", {"command": "ls src"})), result("c", "a.py"),
                assistant("", call("d", "Bash", {"command": "npm run lint"})), result("d", "Exit code 2\nlint failed",
                                                                                     error=True),
                assistant("", call("e", "Bash", {"command": "pytest -q"})), result("e", "3 passed in 0.2s"))
    x = Scan(messages, range(len(messages)))
    assert commands(x.work.actions) == [("`npm run lint` → failed (exit 2)", 0), ("`pytest -q` ×2 → ok, 3 passed in 0.2s", 1),
                                   ("`make build` → ok: built", 2), ("`ls src` → ok", 3)]  # a listing says no outcome
    assert fixes(x.work.actions) == [("`pytest -q` failed (1 failed); fixed by a later successful `pytest -q`", 0)]


@pytest.mark.parametrize(("command", "text", "failed", "summary", "outcome"), [
    ("npx jest", "PASS src/a.test.js\nTests:       1 failed, 12 passed, 13 total\nTime: 2s", True,
     "Tests:       1 failed, 12 passed, 13 total", ""),
    ("go test ./...", "ok  \tpkg/a\t0.01s\n--- FAIL: TestB (0.00s)\n    b_test.go:9: got 2, want 3\nFAIL\tpkg/b\t0.02s\n"
                      "FAIL", True, "", ""),
    ("go test ./...", "ok  \tpkg/a\t0.01s\nok  \tpkg/b\t0.02s", False, "", "ok  \tpkg/b\t0.02s"),
    ("cargo test", "running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out", False,
     "test result: ok. 3 passed", "test result: ok. 3 passed"),
    ("pytest", "===== 1 error in 0.5s =====", True, "1 error in 0.5s", ""),
    ("pytest", "== 12 passed, 1 skipped, 2 xfailed in 3.10s ==", False, "12 passed, 1 skipped, 2 xfailed in 3.10s",
     "12 passed, 1 skipped, 2 xfailed in 3.10s"),
    ("make", "gcc -o x x.c\nx.c:3: warning: unused", False, "", "x.c:3: warning: unused"),
    ("grep -c FAIL run.log", "FAILURES: 0", False, "", "FAILURES: 0"),  # words of the output, no verdict
])
def test_a_command_without_an_exit_code_fails_by_what_its_output_says(command, text, failed, summary, outcome):
    a = recorded("Bash", {"command": command}, text)
    assert (a.failed, a.summary, a.outcome) == (failed, summary, outcome)


def test_an_unanswered_call_and_a_repeated_failure_are_described_as_such():
    from tcompact.summarizers.extractive.tools import failure_groups, failure_line

    pending = classify(0, call("x", "Bash", {"command": "sleep 100"}), round_=1, open_file=None)
    assert describe(pending) == "`sleep 100` (no result yet)"
    messages = [user("deploy")]
    for n in range(3):
        messages += [assistant("", call(f"d{n}", "Bash", {"command": "make  deploy"})),
                     result(f"d{n}", f"Exit code 2\nattempt {n}: no credentials", error=True)]
    messages += [assistant("", call("w", "WebFetch", {"url": "https://x.y"})), result("w", "Error: 403 forbidden")]
    x = Scan(messages, range(len(messages)))
    groups = failure_groups(x.work.actions)
    assert [len(g) for g in groups] == [1, 3]  # the newest group first; one key per command, blanks collapsed
    assert [failure_line(g) for g in groups] == ["WebFetch: https://x.y → Error: 403 forbidden",
                                                 "`make deploy` (Bash ×3) → exit 2: attempt 2: no credentials"]


@pytest.mark.parametrize("text,expected", [
    ("ok\r\nValueError: bad value\x0cfatal: no repo\u2028npm ERR! code 1\nfine", ["ValueError: bad value",
                                                                                "fatal: no repo", "npm ERR! code 1"]),
    ("\u0130stanbul\nERROR: disk full\nok", ["ERROR: disk full"]),  # a letter that lowers to two characters
    ("\u017ftop\nSystemExit: 1", ["SystemExit: 1"]),  # ſ, which case-insensitive patterns take for s: no word test
    ("done\nSystemExit: 2", []),  # no error word of the whole text: not looked at line by line
    ("error: build broke\x85-----\u2029ERROR: the real one\x1c", ["ERROR: the real one"]),  # a setext heading: none
    ("x\ncp: can't stat 'a': not there\nFAIL tests/test_a.py", ["cp: can't stat 'a': not there",
                                                                "FAIL tests/test_a.py"]),
])
def test_only_lines_holding_an_error_word_are_tested_wherever_the_lines_break(text, expected):
    assert error_lines(text) == expected


@pytest.mark.parametrize("line,expected", [
    ("Fixed it. Tests pass now.", ["Fixed it.", "Tests pass now."]),
    ('He said "it works. Really." Then left.', ['He said "it works. Really."', "Then left."]),
    ("Use `a. B` here (see x. Y) now. Done", ["Use `a. B` here (see x. Y) now.", "Done"]),
    ("e.g. This stays. 完成。下一步", ["e.g. This stays. 完成。", "下一步"]),  # no capital after the first stop
    ("no stop at all", ["no stop at all"]),
])
def test_sentences_split_only_at_stops_outside_quotes_brackets_and_code(line, expected):
    assert split_sentences(line) == expected
