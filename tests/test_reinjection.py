"""State re-injection: the shared tool vocabulary, whole file entries within the budget (never two files
stitched under one header), the small sections kept whole."""

from __future__ import annotations

import orjson

from tcompact.compressors.reinjection import MAX_SECTION_CHARS, recovered_context
from tcompact.model import Message, ToolCall


def read(cid, name, path, text):
    return [Message(role="assistant", tool_calls=(ToolCall(cid, name, orjson.dumps({"path": path}).decode()),)),
            Message(role="tool", content=text, tool_call_ids=(cid,))]


def files(message):
    return [line.removeprefix("Recently read file: ") for line in message.text.splitlines()
            if line.startswith("Recently read file: ")]


def test_read_tools_of_every_harness_are_recognised():
    source = (read("a", "Read", "/r/a.py", "A" * 100) + read("b", "open", "b.py", "B" * 100)
              + read("c", "view", "c.py", "C" * 100) + read("d", "read_file", "d.py", "D" * 100))
    got = recovered_context(source, [], ("read_file",))
    assert files(got) == ["/r/a.py", "b.py", "c.py", "d.py"]


def test_files_are_added_whole_newest_first_and_never_stitched():
    source = read("a", "Read", "old.py", "o" * 9000) + read("b", "Read", "new.py", "n" * 9000)
    got = recovered_context(source, [], ("read_file",), max_chars=12_000)
    # the newer file whole; the older one, in session order before it, cut in its own middle under its own header
    old, new = got.text.split("Recently read file: ")[1:]
    assert old.startswith("old.py\nLines returned: 1\n\n" + "o" * 1000) and "...[READ_FILE_TRUNCATED]..." in old
    assert new.startswith("new.py\nLines returned: 1\n\n" + "n" * 9000 + "\n</section>")
    assert "o" not in new.replace("</section>", "").replace("Lines returned", "").replace("recovered_context", "")
    got = recovered_context(source, [], ("read_file",), max_chars=3_000)
    assert files(got) == ["new.py"] and "...[READ_FILE_TRUNCATED]..." in got.text  # cut in its own middle
    assert recovered_context(source, [], ("read_file",), max_chars=1_500) is None  # no useful excerpt fits
    assert MAX_SECTION_CHARS == 12_000


def test_todo_and_plan_sections_keep_their_own_caps():
    todos = {"todos": [{"content": "write test", "status": "in_progress"}, {"content": "ship", "status": "pending"}]}
    source = [Message(role="assistant", tool_calls=(ToolCall("t", "TodoWrite", orjson.dumps(todos).decode()),)),
              Message(role="tool", content="ok", tool_call_ids=("t",))] + read("r", "Read", "x.py", "x" * 5000)
    got = recovered_context(source, [], ("todo", "read_file"), max_chars=400)
    assert '<section name="todo">\nActive todo items:\n- [in_progress] 1: write test\n- [pending] 2: ship\n' \
           "Status counts: in_progress: 1, pending: 1\n</section>" in got.text
    assert files(got) == []  # the budget left nothing for the file


def call(cid, name, args, result="ok"):
    return [Message(role="assistant", tool_calls=(ToolCall(cid, name, orjson.dumps(args).decode()),)),
            Message(role="tool", content=result, tool_call_ids=(cid,))]


def test_a_file_changed_after_its_read_is_never_shown_as_it_was_read():
    # a read, then a whole write: the written text is shown, under a header that says so
    source = (read("r1", "Read", "/p/lib.rs", "pub fn add() {}") + call("w1", "Write", {
        "file_path": "/p/lib.rs", "content": "pub mod utils;\n"}, "File created successfully"))
    got = recovered_context(source, [], ("read_file",))
    assert got.text.endswith('<section name="read_file">\nRecently written file: /p/lib.rs (its whole text as last '
                             "written; it changed after it was read)\n\npub mod utils;\n\n</section>\n"
                             "</recovered_context>")
    assert "pub fn add" not in got.text
    # a read, then an edit: the read text is stale and nothing better is known, so the file is left out
    edited = read("r2", "Read", "/p/a.py", "x = 1") + call("e2", "Edit", {
        "file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert recovered_context(edited, [], ("read_file",)) is None
    # an edit before the read does not matter: the read shows the file as it now is
    assert files(recovered_context(edited[2:] + edited[:2], [], ("read_file",))) == ["/p/a.py"]
    # a write the kept messages show is not repeated: the read is stale, so the file is left out
    assert recovered_context(source, source[2:], ("read_file",)) is None


def test_a_harness_reminder_appended_to_a_read_is_not_part_of_the_file():
    text = ("     1→x = 1\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
            "considered malware.\n</system-reminder>\n")
    got = recovered_context(read("r", "Read", "/p/a.py", text), [], ("read_file",))
    assert got.text.endswith("Recently read file: /p/a.py\nLines returned: 1\n\n     1→x = 1\n</section>\n"
                             "</recovered_context>")
