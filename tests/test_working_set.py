"""The working set: each file's text as it now is (reads with later edits replayed), the files picked by
relevance to the open task, and the index of the exact terms the hidden tool outputs returned."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.model import Message, ToolCall
from tcompact.counting.tokens import TokenCounter
from tcompact.working_set import file_views, pick_files, terms, working_set
from tcompact.working_set.index import build_index, rank_terms
from tcompact.working_set.picking import _FILE_NAME, _names_in

READ = "     1→def parse(text):\n     2→    return text.split(',')\n\n<system-reminder>\nConsider malware.\n" \
       "</system-reminder>\n"


def step(cid, name, args, result="ok", *, error=False, kind="function"):
    arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
    return [Message(role="assistant", tool_calls=(ToolCall(cid, name, arguments, kind),)),
            Message(role="tool", content=result, tool_call_ids=(cid,), is_error=error)]


def test_a_read_with_its_later_edits_replayed_is_the_files_text():
    msgs = (step("r", "Read", {"file_path": "/p/a.py"}, READ)
            + step("e", "Edit", {"file_path": "/p/a.py", "old_string": "split(',')", "new_string": "split(';')"})
            + step("m", "MultiEdit", {"file_path": "/p/a.py", "edits": [
                {"old_string": "def parse", "new_string": "def parse_row"},
                {"old_string": "text", "new_string": "line", "replace_all": True}]}))
    view = file_views(msgs)["/p/a.py"]
    assert (view.text, view.whole, view.state, view.reads, view.changes) == (
        "def parse_row(line):\n    return line.split(';')", True, "edited", 1, 2)
    assert view.new_texts == [(2, "split(';')"), (4, "def parse_row"), (4, "line")]


def test_an_edit_that_does_not_apply_makes_the_text_unknown_and_a_failed_one_changes_nothing():
    msgs = (step("r", "Read", {"file_path": "/p/a.py"}, READ)
            + step("f", "Edit", {"file_path": "/p/a.py", "old_string": "zzz", "new_string": "y"},
                   "<tool_use_error>String to replace not found in file.</tool_use_error>", error=True))
    assert file_views(msgs)["/p/a.py"].text == "def parse(text):\n    return text.split(',')"
    msgs += step("e", "Edit", {"file_path": "/p/a.py", "old_string": "not there", "new_string": "y"})
    assert file_views(msgs)["/p/a.py"].text is None  # a stale text is never shown


def test_writes_shell_reads_patches_and_editor_windows():
    patch = ("*** Begin Patch\n*** Update File: /r/app.py\n@@\n def main():\n-    run(1)\n+    run(2)\n"
             "*** Add File: /r/new.py\n+x = 1\n+y = 2\n*** End Patch\n")
    msgs = (step("w", "Write", {"file_path": "/r/doc.md", "content": "# Doc\n"}, "File created successfully")
            + step("c", "exec_command", {"cmd": "cat /r/app.py"},
                   "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 9\n"
                   "Output:\ndef main():\n    run(1)\n")
            + step("p", "apply_patch", patch, '{"output": "Success."}', kind="custom")
            + step("o", "open", {"path": "/r/big.py", "line_number": 40},
                   "[File: /r/big.py (90 lines total)]\n(39 more lines above)\n40:a = 1\n41:b = 2\n"
                   "(49 more lines below)\n(Open file: /r/big.py)\n(Current directory: /r)\nbash-$"))
    views = file_views(msgs)
    assert (views["/r/doc.md"].text, views["/r/doc.md"].state) == ("# Doc\n", "created")
    assert (views["/r/app.py"].text, views["/r/app.py"].state) == ("def main():\n    run(2)", "edited")
    assert views["/r/new.py"].text == "x = 1\ny = 2\n"
    assert (views["/r/big.py"].text, views["/r/big.py"].whole) == ("a = 1\nb = 2", False)


def test_files_are_picked_by_relevance_not_recency():
    msgs = (step("a", "Read", {"file_path": "/p/lib.py"}, "def helper(): pass")
            + step("w", "Write", {"file_path": "/p/spec.md", "content": "# Spec\nThe plan."})
            + step("b", "Read", {"file_path": "/p/old.py"}, "x = 1")
            + [Message(role="assistant", content="lib.py is where the helper lives.")]
            + step("c", "Read", {"file_path": "/p/personas.csv"}, "name,title\nann,dev"))
    picked = pick_files(msgs, 10_000, hidden=range(len(msgs)))
    # most relevant last: the spec the session wrote, then lib.py (named again), then old.py; never the CSV
    assert [(f.path, f.state) for f in picked] == [("/p/old.py", "read"), ("/p/lib.py", "read"),
                                                   ("/p/spec.md", "created")]
    named = [*msgs, Message(role="user", content="Use the titles from personas.csv")]
    assert "/p/personas.csv" in [f.path for f in pick_files(named, 10_000, hidden=range(len(msgs)))]
    assert pick_files(msgs, 10_000, hidden={7, 8}) == []  # only files whose text is hidden


def test_the_index_lists_hidden_terms_by_output_named_again_first_within_the_budget():
    counter = TokenCounter()
    listing = "\n".join(f"/srv/app/src/module_{n:02d}/handler.py" for n in range(40))
    msgs = (step("g", "Glob", {"pattern": "**/*.py"}, listing)
            + step("r", "Read", {"file_path": "/srv/app/config.py"}, "DATABASE_URL = 'x'\nretry_backoff_ms = 250")
            + [Message(role="assistant", content="module_17/handler.py holds the retry; see retry_backoff_ms.")])
    assert terms("see src/app.py, parse_config() and 019b7f04-0b04, not read-only or Traceback.") == {
        "src/app.py", "parse_config", "019b7f04-0b04"}
    entries = build_index(msgs, counter, 50, hidden=range(len(msgs)), locator=lambda m: "s.jsonl:3")
    # a tight budget: the terms the assistant named again come first
    assert [(e.label, e.where, e.terms) for e in entries] == [
        ("Glob **/*.py", "s.jsonl:3", ("/srv/app/src/module_17/handler.py",)),
        ("Read /srv/app/config.py", "s.jsonl:3", ("retry_backoff_ms",))]
    everything = build_index(msgs, counter, 10_000, hidden=range(len(msgs)), shown="DATABASE_URL")
    assert sum(len(e.terms) for e in everything) == 41 and "DATABASE_URL" not in everything[1].terms
    assert build_index(msgs, counter, 10_000, hidden={5}) == []  # only outputs at hidden indices
    # the ranking made beforehand (working-set: while the summariser answers) gives the same index
    ranked = rank_terms(msgs, range(len(msgs)))
    assert ranked.terms[:2] == ["retry_backoff_ms", "/srv/app/src/module_17/handler.py"] and len(ranked.terms) == 42
    assert build_index(msgs, counter, 50, hidden=range(len(msgs)), locator=lambda m: "s.jsonl:3",
                       ranked=ranked) == entries
    assert build_index(msgs, counter, 10_000, hidden=range(len(msgs)), shown="DATABASE_URL",
                       ranked=ranked) == everything
    assert build_index(msgs, counter, 0, hidden=range(len(msgs)), ranked=ranked) == []


def test_working_set_is_files_then_index_as_one_text_within_its_budget():
    counter = TokenCounter()
    msgs = (step("r", "Read", {"file_path": "/p/a.py"}, READ)
            + step("e", "Edit", {"file_path": "/p/a.py", "old_string": "split(',')", "new_string": "split(';')"})
            + step("g", "Grep", {"pattern": "parse"}, "/p/tests/test_parse.py:3: assert parse_row('a;b')"))
    ws = working_set(msgs, counter, 400)
    assert ws.text == (
        "Recently edited file: /p/a.py (its text as read, with every later edit applied)\n\n"
        "def parse(text):\n    return text.split(';')\n\n"
        "Names, paths and values the tools returned (verbatim; the whole output is where each line says):\n"
        "- Grep parse: /p/tests/test_parse.py, parse_row")
    assert ws.tokens == counter.count(ws.text) and ws.tokens <= 400
    assert working_set(msgs, counter, 0).text == ""


def test_terms_shown_are_found_in_the_text_as_a_plain_substring_test_finds_them():
    from tcompact.working_set.index import _Shown

    text = ("see src/app/module_17/handler.py and parse_config_value; url https://host.example/a?b=1 "
            "(HttpClientFactory)\nid 019b7f04-0b04\n")
    shown = _Shown(text)
    for term in ["module_17/handler.py", "app/module_17", "parse_config_value", "parse_config", "config_value;",
                 "https://host.example/a?b=1", "https://host.example/a?b=2", "HttpClientFactory",
                 "ClientFactory)", "019b7f04-0b04", "b7f04-0b0", "handler.py and", "src/app/module_18"]:
        assert (term in shown) == (term in text), term
    assert "\n" not in shown.runs.replace("\n", "") and "and" not in shown.runs.split("\n")


def test_a_read_is_cleaned_once_when_read_again_and_before_an_edit_uses_it():
    later = READ.replace("split(',')", "split(',', 1)")
    msgs = (step("r1", "Read", {"file_path": "/p/a.py"}, READ) + step("r2", "Read", {"file_path": "/p/a.py"}, later)
            + step("e", "Edit", {"file_path": "/p/a.py", "old_string": "', 1)", "new_string": "', 2)"})
            + step("r3", "Read", {"file_path": "/p/b.py"}, "     1→x = 1\n"))
    views = file_views(msgs)
    assert views["/p/a.py"].text == "def parse(text):\n    return text.split(',', 2)"
    assert (views["/p/b.py"].text, views["/p/b.py"].state) == ("x = 1", "read")


_NAME_PIECES = ["a", "Zq", "_", ".", "-", "/", "1", " ", "\n", "\t", "`", "\u00a0", "é", "日", ".py", "x.tar.gz",
                "README.md", "...", ".e", "a.b-c"]


@settings(max_examples=800, deadline=None, database=None)
@given(st.lists(st.sampled_from(_NAME_PIECES), max_size=30).map("".join))
def test_the_file_names_of_a_text_are_those_of_its_runs_with_a_dot(text):
    """Only the runs of name characters holding a dot before a letter are read, each once: the same names as
    the regex over the whole text."""
    runs: dict[str, list[str]] = {}
    assert _names_in(text, runs) == set(_FILE_NAME.findall(text)) == _names_in(text, runs)
