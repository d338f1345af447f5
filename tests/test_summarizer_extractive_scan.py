"""The scan of a transcript: tool calls classified by name and shape (shell lines parsed, never run),
results read for exit codes, test summaries, key errors, gists and symbols, the working directory
and open file tracked, the plan read, failures paired with their fixes, earlier checkpoints carried,
and whether the latest request is answered."""

from __future__ import annotations

import pytest

from tcompact.model import Message
from tcompact.summarizers.extractive.scan import Scan, carry, in_progress, next_step, todos
from tcompact.summarizers.extractive.tools import classify
from tcompact.summarizers.extractive.tools.errors import key_error
from tcompact.summarizers.extractive.tools.outputs import exit_code_of, gist_of, symbols_of, summary_line_of
from tcompact.summarizers.extractive.tools.shell import normalise_command, _pathish, shell_segments, ran_tests, _words

from test_summarizer_extractive import assistant, call, result, user


def shape(name, args, kind="function", open_file="/r/open.py"):
    a = classify(0, call("x", name, args, kind), round_=1, open_file=open_file)
    return None if a is None else (a.kind, a.label, a.paths, a.test, a.quiet)


@pytest.mark.parametrize(("name", "args", "expected"), [
    ("Bash", {"command": "cd /r && python -m pytest -q tests/test_a.py::test_b 2>&1 | tail -5"},
     ("command", "`python -m pytest -q tests/test_a.py::test_b 2>&1 | tail -5`", [],
      (("pytest", frozenset({"tests/test_a.py::test_b"})),), False)),
    ("Bash", {"command": "sed -n 10,20p src/a.py"}, ("command", "`sed -n 10,20p src/a.py`", [("src/a.py", "read")],
                                                      None, True)),
    ("Bash", {"command": "cat a.txt | grep foo > out.log"},
     ("command", "`cat a.txt | grep foo > out.log`", [("a.txt", "read"), ("out.log", "written")], None, False)),
    ("Bash", {"command": "rm -rf build/ && mv a.py b.py"},
     ("command", "`rm -rf build/ && mv a.py b.py`", [("build/", "deleted"), ("b.py", "written"), ("a.py", "moved")],
      None, False)),
    ("exec_command", {"cmd": "uv run pytest -x"}, ("command", "`uv run pytest -x`", [], (("pytest", frozenset()),),
                                                    False)),
    ("shell", {"command": ["bash", "-lc", "cargo test --lib parser"]},
     ("command", "`cargo test --lib parser`", [], (("cargo test", frozenset()),), False)),
    ("Read", {"file_path": "/r/a.py", "offset": 40}, ("read", "Read /r/a.py", [("/r/a.py", "read")], None, False)),
    ("str_replace_based_edit_tool", {"command": "create", "path": "/r/n.py", "file_text": "def f(): pass"},
     ("edit", "str_replace_based_edit_tool /r/n.py", [("/r/n.py", "created")], None, False)),
    ("edit", {"search": "a", "replace": "b"}, ("edit", "edit /r/open.py", [("/r/open.py", "edited")], None, False)),
    ("Grep", {"pattern": "TODO", "path": "src"}, ("search", "Grep TODO in src", [], None, True)),
    ("TodoWrite", {"todos": []}, None),
    ("WebFetch", {"url": "https://x.y/z"}, ("other", "WebFetch: https://x.y/z", [], None, False)),
    ("run_tests", {"args": ["-q", "tests/t.py"]},
     ("command", "`run_tests -q tests/t.py`", [], (("run_tests", frozenset({"tests/t.py"})),), False)),
])
def test_calls_are_classified_by_name_and_arguments(name, args, expected):
    assert shape(name, args) == expected


def test_patches_edit_every_file_they_name():
    patch = ("*** Begin Patch\n*** Update File: src/a.py\n@@\n+def added():\n*** Add File: src/b.py\n+x = 1\n"
             "*** Delete File: old.py\n*** Update File: src/c.py\n*** Move to: src/d.py\n*** End Patch\n")
    a = classify(0, call("p", "apply_patch", patch, kind="custom"), round_=1, open_file=None)
    assert (a.kind, a.label) == ("edit", "apply_patch src/a.py, src/b.py, old.py, src/c.py")
    assert a.paths == [("src/a.py", "edited"), ("src/b.py", "created"), ("old.py", "deleted"), ("src/c.py", "edited"),
                       ("src/d.py", "created")]
    assert a.path_symbols["src/a.py"] == ("added",)


def test_shell_lines_are_read_without_running_them():
    assert _words("echo 'a b' \"c\\\"d\" e\\ f # comment") == ["echo", "a b", 'c"d', "e f"]
    assert shell_segments("cd /r && bash -lc 'ls x; cat y' | wc -l") == [["cd", "/r"], ["ls", "x"], ["cat", "y"],
                                                                    ["wc", "-l"]]
    assert ran_tests(shell_segments("npm run test:unit && go test ./... && make check")) == (
        ("npm run", frozenset()), ("go test", frozenset({"./..."})), ("make check", frozenset()))
    assert normalise_command("cd /r && ls  -la 2>/dev/null | head -5") == "ls -la"
    assert [t for t in ("src/a.py", "Makefile", "-v", "$HOME", "1,20p", ".payload.type", "https://x", "a*b")
            if _pathish(t)] == ["src/a.py", "Makefile"]


def test_results_are_read_for_exit_code_summary_error_gist_and_symbols():
    assert exit_code_of("Exit code 2\nboom") == 2
    assert exit_code_of("Chunk ID: 1\nProcess exited with code 0\nOutput:\nok") == 0
    assert exit_code_of('{"output": "x", "metadata": {"exit_code": 3}}') == 3
    assert exit_code_of("no code here") is None
    assert summary_line_of("....\n===== 2 failed, 15 passed in 0.63s =====\n") == "2 failed, 15 passed in 0.63s"
    assert summary_line_of("test result: ok. 29 passed; 0 failed; 0 ignored") == "test result: ok. 29 passed"
    assert key_error("Traceback (most recent call last):\n  File x\nKeyError: 'a'\nValueError: b") == "ValueError: b"
    assert key_error("<tool_use_error>File does not exist.</tool_use_error>") == "File does not exist."
    assert gist_of('"""CSV export of the member roster."""\nimport csv') == "CSV export of the member roster."
    assert gist_of("# Copyright 2024 Acme\n# Licensed under MIT\nimport os\n# Parses the config files.\nx = 1") == (
        "Parses the config files.")
    assert symbols_of("def a():\n    pass\nclass B:\n    def test_c(self): pass\npub fn d() {}") == [
        "a", "B", "d", "test_c"]


def test_the_scan_follows_the_working_directory_and_the_open_file():
    messages = (
        Message(role="user", content="<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>",
                internal=True),
        user("fix it"),
        assistant("", call("a", "open", {"path": "src/m.py"})),
        result("a", "[File: src/m.py (10 lines total)]\n1:x = 1\n(Open file: /testbed/src/m.py)\n"
                    "(Current directory: /testbed)\nbash-$"),
        assistant("", call("b", "edit", {"search": "x = 1", "replace": "x = 2"})),
        result("b", "Text replaced."),
    )
    x = Scan(messages, range(1, len(messages)))
    assert x.work.cwd == "/testbed"
    assert sorted(x.work.files) == ["/home/dev/app/src/m.py", "/testbed/src/m.py"]
    assert x.work.files["/testbed/src/m.py"].status() == "edited"


def test_the_plan_is_the_latest_and_gives_the_next_step():
    plan = {"todos": [{"content": "Port a", "status": "completed"}, {"content": "Port b", "status": "in_progress"},
                      {"content": "Port c", "status": "pending"}]}
    messages = (user("port it"), assistant("", call("t", "TodoWrite", {"todos": [{"content": "x", "status": "pending"}]})),
                result("t", "ok"), assistant("", call("u", "TodoWrite", plan)), result("u", "ok"))
    x = Scan(messages, range(len(messages)))
    assert (in_progress(x.plan), next_step(x)) == ("Port b", "Port c")
    assert todos(x.plan, ("pending",)) == [("[pending] Port c", 2)]
    said = (user("go"), assistant("Done with the parser.\n\nNext steps:\n1. **Run the benchmarks** on main\n2. Tag"))
    assert next_step(Scan(said, range(2))) == "Run the benchmarks on main"


def test_failures_are_fixed_by_the_same_command_or_a_covering_test_run():
    messages = (
        user("go"),
        assistant("", call("a", "Bash", {"command": "pytest -q tests/test_x.py"})), result("a", "Exit code 1\n1 failed",
                                                                                          error=True),
        assistant("", call("b", "Bash", {"command": "make lint"})), result("b", "Exit code 2\nlint: 3 errors",
                                                                           error=True),
        assistant("", call("c", "Bash", {"command": "pytest -q"})), result("c", "42 passed in 1.0s"),
    )
    x = Scan(messages, range(len(messages)))
    assert [(a.label, a.failed, a.resolved_by) for a in x.work.actions] == [
        ("`pytest -q tests/test_x.py`", True, "`pytest -q`"), ("`make lint`", True, None), ("`pytest -q`", False, None)]


def test_earlier_checkpoints_are_carried_by_section():
    text = ("<memory_block_dialogue>\n<summary>\n1. Historical User Requests and Outcomes\n- “ship v2”\n\n"
            "6. Decisions, Constraints, Corrections, and Findings\n- we pin the client to 4.2\n\n"
            "11. Failed Attempts — Do Not Retry\n- `make deploy` → exit 2\n- (+2 omitted for budget)\n\n"
            "13. Resume\nlast request: ship v2; answered: no; active: (none); next: (none)\n</summary>")
    assert carry(text) == [("requests", "“ship v2”"), ("facts", "we pin the client to 4.2"),
                           ("failed", "`make deploy` → exit 2")]
    assert carry("just some old notes\nwithout headings") == [("history", "just some old notes"),
                                                              ("history", "without headings")]


def test_answered_by_a_final_text_or_a_successful_finishing_call():
    asked = (user("fix it"),)
    assert Scan(asked + (assistant("Fixed."),), range(2)).answered()
    assert not Scan(asked + (assistant("Looking", call("a", "Bash", {"command": "ls"})), result("a", "x")),
                    range(3)).answered()
    submitted = asked + (assistant("", call("s", "submit", {})), result("s", "diff"))
    assert Scan(submitted, range(3)).answered()
    failed = asked + (assistant("", call("s", "submit", {})), result("s", "Error: nothing to submit", error=True))
    assert not Scan(failed, range(3)).answered()
    assert not Scan((assistant("hello"),), range(1)).answered()  # no request at all


# ---- the scan's parts on their own -------------------------------------------------------------


def test_a_full_contract_checkpoint_is_carried_by_its_headings():
    from tcompact.summarizers.extractive.scan import carry

    text = ("<state_snapshot>\n1. Primary Request and Intent\n- port it\n2. Key Technical Concepts\n- rust\n"
            "3. Files and Code Sections\n- /a.rs — created\n4. Errors and Fixes\n- E0425 fixed\n5. Pending Tasks\n"
            "- tests\n- (none)\n6. All User Messages\n- “port it”\n7. Optional Next Step\n- run cargo\n"
            "8. Errors and Fixes\n- latest test run: `cargo test` → ok\n- Status: answered.\n- E0425 fixed\n"
            "9. Resume\nlast request: x; answered: yes\n</state_snapshot>")
    # the old primary request goes (the user's messages are listed), as do stale and repeated lines
    assert carry(text) == [("history", "rust"), ("files", "/a.rs — created"), ("facts", "E0425 fixed"),
                           ("pending", "tests"), ("requests", "“port it”"), ("pending", "run cargo")]


def test_what_counts_as_an_earlier_checkpoint():
    from tcompact.summarizers.extractive.scan import is_checkpoint

    assert is_checkpoint(user("  <memory_block_dialogue>\nx", internal=True))
    assert is_checkpoint(user("[ROUND_LEVEL_MEMORY_BLOCK]\nprocessor: RoundLevelCompressor"))
    assert is_checkpoint(user("notes\n<state_snapshot>x</state_snapshot>", internal=True))
    assert not is_checkpoint(user("notes\n<state_snapshot>x</state_snapshot>"))  # a user pasting one is no checkpoint


def test_a_checkpoint_saying_answered_answers_the_request_before_it():
    old = ("<memory_block_current>\n<summary>\n1. Active Task\n- fix it\n14. Resume\nlast request: fix it; "
           "answered: yes; active: (none); next: (none)\n</summary>\n</memory_block_current>")
    assert Scan((user("fix it"), user(old, internal=True)), range(2)).answered()
    assert not Scan((user("fix it"), user(old.replace("answered: yes", "answered: no"), internal=True)),
                    range(2)).answered()


def test_the_plan_of_the_last_plan_call():
    import orjson

    from tcompact.model import ToolCall
    from tcompact.summarizers.extractive.scan import plan_of

    codex = ToolCall("a", "update_plan", orjson.dumps({"explanation": "  Do it\n step by step ", "plan": [
        {"step": "a", "status": "completed"}, {"title": "t"}, {"text": "  "}, "x"]}).decode())
    assert plan_of([codex, ToolCall("b", "Bash", "{}")]) == ([("a", "completed"), ("t", "pending")],
                                                             "Do it step by step")
    assert plan_of([ToolCall("a", "TodoWrite", '{"todos": "nope"}')]) is None
    later = ToolCall("c", "TodoWrite", '{"todos": [{"content": "b", "status": "in_progress"}]}')
    assert plan_of([codex, later]) == ([("b", "in_progress")], "")


def test_the_scan_tracks_rounds_the_request_it_answers_and_the_working_directory():
    messages = (user("first request that is long enough to be substantive, yes."), assistant("Which file?"),
                user("a.py"), assistant("", call("c", "Bash", {"command": "cat a.py", "workdir": "/srv"})),
                result("c", "x=1"), assistant("", call("d", "Bash", {"command": "cat ../etc/b.cfg"})),
                result("d", "y=2"))
    x = Scan(messages, range(2, len(messages)))
    assert (x.user.round, x.user.last, x.user.previous_text, x.work.cwd) == (2, (2, "a.py"), "Which file?", "/srv")
    assert x.user.substantive == [(0, "first request that is long enough to be substantive, yes.")]
    assert x.user.requests == [(2, 2, "a.py")]  # the prefix is context only
    assert sorted(x.work.files) == ["/etc/b.cfg", "/srv/a.py"]  # relative paths made absolute against the workdir


def test_a_file_state_says_every_operation_and_what_it_now_is():
    from tcompact.summarizers.extractive.scan import FileState

    messages = (user("go"),
                assistant("", call("a", "Write", {"file_path": "/r/a.py", "content": "def one(): ..."})),
                result("a", "File created successfully at: /r/a.py"),
                assistant("", call("b", "Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"})),
                result("b", "<tool_use_error>String to replace not found</tool_use_error>"),
                assistant("", call("c", "Read", {"file_path": "/r/b.py"})),
                result("c", "File does not exist.", error=True),
                assistant("", call("d", "Bash", {"command": "rm /r/a.py"})), result("d", ""))
    x = Scan(messages, range(len(messages)))
    a, b = x.work.files["/r/a.py"], x.work.files["/r/b.py"]
    assert (a.status(), a.status(latest=True), a.symbols) == ("created, deleted, edited failed",
                                                              "now deleted (earlier: created, deleted, edited failed)",
                                                              ["one"])
    assert (b.status(), b.last_op) == ("read failed", "")
    assert FileState("/x").status() == "touched"


def test_a_passing_run_fixes_only_failures_it_covers():
    messages = (user("go"),
                assistant("", call("a", "Bash", {"command": "pytest -q tests/a.py"})), result("a", "1 failed"),
                assistant("", call("b", "Bash", {"command": "cargo test"})), result("b", "test result: ok. 2 passed"),
                assistant("", call("c", "Bash", {"command": "pytest tests/b.py"})), result("c", "1 passed"),
                assistant("", call("d", "Bash", {"command": "pytest tests/a.py tests/b.py"})), result("d", "2 passed"))
    x = Scan(messages, range(len(messages)))
    assert [(a.label, a.failed, a.resolved_by) for a in x.work.actions][0] == (
        "`pytest -q tests/a.py`", True, "`pytest tests/a.py tests/b.py`")  # not cargo's run, nor one of b.py alone
