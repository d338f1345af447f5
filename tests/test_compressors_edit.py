"""truncate, micro and offload: exact rewrites, markers that say how to recover, byte-exact restore."""

from __future__ import annotations

import orjson
import pytest
from conftest import SAMPLES, call, jsonl, msg

from tcompact.compressors import chain_settings, get, parse_chain, parse_sets
from tcompact.compressors.base import Context
from tcompact.compressors.micro import CLEARED_MARKER
from tcompact.compressors.offload import marker_for
from tcompact.compressors.truncate import truncate_text
from tcompact.errors import UsageError
from tcompact.formats.chat import parse_message
from tcompact.model import Message, ToolCall
from tcompact.counting.tokens import TokenCounter


def ctx(**kw):
    return Context(counter=TokenCounter(), window=200_000, locator=lambda m: "session.jsonl:7", **kw)


def settings(name, **values):
    return get(name).settings_model(**values)


def run(name, messages, *, force=False, **values):
    return get(name).compress(messages, settings(name, **values), ctx(force=force))


def session(outputs):
    """A user request, then one call + result per (tool, output)."""
    msgs = [Message(role="user", content="do it")]
    for n, (tool, text) in enumerate(outputs):
        msgs.append(parse_message(msg("assistant", "", tool_calls=[call(f"c{n}", tool, {"n": n})])))
        msgs.append(Message(role="tool", content=text, tool_call_ids=(f"c{n}",)))
    msgs.append(Message(role="assistant", content="done"))
    return msgs


# ---- truncate ----------------------------------------------------------------------------------


def test_truncate_keeps_head_and_tail_lines_with_a_marker():
    text = "".join(f"line {i}\n" for i in range(1, 1001))
    s = settings("truncate", max_lines=10, max_chars=100_000, head_ratio=0.4)
    out = truncate_text(text, s, ctx(), where="s.jsonl:4")
    assert out == ("line 1\nline 2\nline 3\nline 4\n"
                   "[... tcompact truncated 990 lines / 8,810 characters of 8,893 here; the full output is in "
                   "s.jsonl:4 ...]\nline 995\nline 996\nline 997\nline 998\nline 999\nline 1000\n")
    assert truncate_text(out, s, ctx(), where="x") == out  # never truncated twice


def test_truncate_by_characters_and_by_tokens():
    text = "x" * 5000
    out = truncate_text(text, settings("truncate", max_chars=1000, head_ratio=0.5), ctx(), where="w")
    assert out.startswith("x" * 500 + "\n[... tcompact truncated 0 lines / 4,000 characters of 5,000 here")
    assert out.endswith("...]\n" + "x" * 500)
    counter = TokenCounter()
    words = " ".join(f"word{i}" for i in range(3000))
    cut = truncate_text(words, settings("truncate", max_tokens=200), ctx(), where="w")
    assert counter.count(cut) <= 200 < counter.count(words)


def test_truncate_over_both_limits_states_the_whole_cut_once():
    # issue 13 item 1: over max_lines and max_chars, the marker counted only the second cut and
    # left a fragment of the first marker in the kept tail
    text = "".join(f"row {i:03d} " + "x" * 40 + "\n" for i in range(600))  # 600 lines, 29,400 chars
    out = truncate_text(text, settings("truncate", max_lines=256, max_chars=1000, head_ratio=0.4), ctx(),
                        where="s.jsonl:9")
    assert out == (text[:400] + "\n[... tcompact truncated 579 lines / 28,400 characters of 29,400 here; the full "
                   "output is in s.jsonl:9 ...]\n" + text[-600:])


def _check_default_markers(before, after):
    """Every output the default truncate changed is its head and tail around a marker that counts exactly
    what was cut from the original; the number of outputs changed."""
    checked = 0
    for old, new in zip(before, after, strict=True):
        if new.text == old.text:
            continue
        # the defaults: the head is the first 102 lines and the tail the last 154; when they hold
        # more than 10,240 characters, at most 4,096 and 6,144 of them; the marker counts the rest
        text, lines = old.text, old.text.splitlines(keepends=True)
        head, tail = ("".join(lines[:102]), "".join(lines[-154:])) if len(lines) > 256 else (text, text)
        if len(lines) <= 256 or len(head) + len(tail) > 10240:
            head, tail = head[:4096], tail[-6144:]
        cut = text[len(head):len(text) - len(tail)]
        marker = (f"[... tcompact truncated {cut.count(chr(10)):,} lines / {len(cut):,} characters of "
                  f"{len(text):,} here; the full output is in session.jsonl:7 ...]")
        assert new.text == (head + ("" if head.endswith("\n") else "\n") + marker
                            + ("" if tail.startswith("\n") else "\n") + tail)
        checked += 1
    return checked


@pytest.mark.parametrize("key", ["codemie", "codex"])
def test_truncate_markers_on_real_sessions_count_what_was_cut_from_the_original(key):
    from conftest import real_file

    from tcompact.formats import read_file

    (main, *_) = read_file(real_file(key)).transcripts
    result = get("truncate").compress(main.messages, settings("truncate"), ctx())
    assert _check_default_markers(main.messages, result.messages) == {"codemie": 6, "codex": 21}[key]


#: Outputs of every shape the limits meet: many short lines, a few long ones, one line, a leading newline,
#: one under both limits, and one whose cut would be smaller than its marker.
SHAPES = ["".join(f"line {i:03d}\n" for i in range(300)), "".join("y" * 400 + "\n" for _ in range(50)),
          "\n" + "z" * 12000, "".join(f"{i} " * 30 + "\n" for i in range(2000)), "x" * 10240, "a\n" * 257]


def test_truncate_markers_count_what_was_cut_from_outputs_of_every_shape():
    msgs = session([("bash", text) for text in SHAPES])
    result = run("truncate", msgs)
    assert _check_default_markers(msgs, result.messages) == 4 and result.figures == {"truncated": 4}
    markers = [m.text.split("[... tcompact truncated ")[1].split(" here;")[0] for m in result.messages
               if "[... tcompact" in m.text]
    assert markers == ["44 lines / 396 characters of 2,700", "24 lines / 9,810 characters of 20,050",
                       "0 lines / 1,761 characters of 12,001", "1,911 lines / 258,460 characters of 268,700"]
    assert [m.text for m in result.messages][10:13:2] == SHAPES[4:6]  # under the limits; a cut longer than its marker


def test_truncate_compressor_touches_only_big_tool_outputs_outside_keep_recent():
    big = "".join(f"{i}\n" for i in range(600))
    msgs = session([("bash", big), ("bash", "small"), ("grep", big)])
    result = run("truncate", msgs, keep_recent=1)
    assert result.applied and result.reason == "truncated" and result.figures == {"truncated": 1}
    assert [m.text for m in result.messages][4:] == ["small", "", big, "done"]
    assert "tcompact truncated 344 lines" in result.messages[2].text
    assert result.tokens_after < result.tokens_before
    only_grep = run("truncate", msgs, tools=["grep"])
    assert only_grep.figures == {"truncated": 1} and only_grep.messages[2].text == big
    assert run("truncate", session([("bash", "short")])).reason == "no tool output over the limits"


def test_truncate_settings_are_validated():
    with pytest.raises(UsageError, match=r"truncate setting head_ratio must be less than 1, not 1.5"):
        chain_settings(parse_chain("truncate"), overrides=parse_sets(["head_ratio=1.5"]))
    with pytest.raises(UsageError, match="truncate setting colour is not known"):
        chain_settings(parse_chain("truncate"), overrides=parse_sets(["truncate.colour=red"]))


# ---- micro -------------------------------------------------------------------------------------


def test_micro_clears_all_but_the_newest_per_tool(ntok):
    big = "result " * 200
    msgs = session([("grep", big + "1"), ("read", big + "2"), ("grep", big + "3"), ("grep", big + "4"),
                    ("read", big + "5")])
    result = run("micro", msgs, keep_recent_per_tool=1)
    texts = [m.text for m in result.messages if m.role == "tool"]
    assert [t.startswith(CLEARED_MARKER) for t in texts] == [True, True, True, False, False]
    assert texts[0] == (f"{CLEARED_MARKER}\ngrep output of {4 + ntok(big + '1')} tokens, cleared by tcompact micro. "
                        "The full result is "
                        'in session.jsonl:7; run the call again if you need it: grep({"n":0})')
    again = run("micro", result.messages, keep_recent_per_tool=1)
    assert again.applied is False and again.reason == "no old tool results to clear"


def test_micro_trigger_threshold_min_tokens_and_force():
    msgs = session([("grep", "r " * 300), ("grep", "tiny"), ("grep", "r " * 300)])
    assert run("micro", msgs, keep_recent_per_tool=1, trigger_threshold=5).applied is False
    assert run("micro", msgs, force=True, keep_recent_per_tool=1, trigger_threshold=5).figures == {"cleared": 1}
    cleared = run("micro", msgs, keep_recent_per_tool=0, min_tokens=0)
    assert cleared.figures == {"cleared": 2}  # "tiny" stays: its marker would be longer than it
    assert [m.text for m in cleared.messages if m.role == "tool"][1] == "tiny"


# ---- offload -----------------------------------------------------------------------------------


def test_offload_replaces_big_results_with_a_preview_and_a_handle():
    big = "payload line\n" * 400
    msgs = session([("bash", big), ("read_file", big), ("bash", "small")])
    result = run("offload", msgs, force=True, preview_chars=12)
    (blob,) = result.blobs
    assert blob.message is msgs[2] and blob.path == f"offload/{blob.handle}.json"
    assert result.messages[2].text == "payload line...\n" + marker_for(blob.handle, blob.path)
    assert result.messages[4].text == big  # read_file is protected by default
    assert result.messages[2].tool_call_ids == ("c0",)
    assert run("offload", msgs).reason == "below the threshold"
    rerun = run("offload", result.messages, force=True)
    assert rerun.applied is False and rerun.reason == "no message over the size limit"


def test_offload_protection_patterns_and_last_round():
    big = "x " * 2000
    msgs = session([("bash", big), ("bash", big)])
    msgs[3] = parse_message(msg("assistant", "", tool_calls=[call("c1", "bash", {"command": "cat secrets.env"})]))
    result = run("offload", msgs, force=True, protected_tools=["bash:cat *"])
    assert [m.text == big for m in result.messages if m.role == "tool"] == [False, True]
    tail = msgs + [Message(role="user", content="more"), *session([("bash", big)])[1:3]]
    result = run("offload", tail, force=True, keep_last_round=True)
    assert len(result.blobs) == 2  # the result after the last plain answer is the current round: kept
    with pytest.raises(UsageError, match=r"offload setting roles: unknown role\(s\) \['robot'\]"):
        chain_settings(parse_chain("offload"), overrides=parse_sets(['roles=["robot"]']))


@pytest.mark.parametrize("name", ["chat_tool_session.jsonl", "claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_offload_then_restore_is_byte_identical(tmp_path, name):
    from typer.testing import CliRunner

    from tcompact.app import app

    src = SAMPLES / name
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["compact", str(src), "-c", "offload", "--now", "-o", str(out),
                                 "--set", "large_message_tokens=200", "--set", "protected_tools=[]"])
    assert result.exit_code == 0, result.stderr
    store = tmp_path / "out.offload"
    blobs = sorted(store.iterdir())
    assert blobs and out.read_bytes() != src.read_bytes()
    doc = orjson.loads(blobs[0].read_bytes())
    assert set(doc) == {"offload_handle", "messages", "source"} and doc["source"]["format"] in name.replace("_", "-")
    back = tmp_path / "back.jsonl"
    result = runner.invoke(app, ["restore", str(out), "--store", str(store), "-o", str(back)])
    assert (result.exit_code, result.stdout) == (0, f"Restored {len(blobs)} offloaded line(s) into {back}\n")
    assert back.read_bytes() == src.read_bytes()
    result = runner.invoke(app, ["restore", str(out), "-o", str(tmp_path / "back2.jsonl")])  # paths in markers
    assert result.exit_code == 0 and (tmp_path / "back2.jsonl").read_bytes() == src.read_bytes()


_BIG = "".join(f"collected item {i}\n" for i in range(400))
_DOC = [msg("system", "You are a coding agent."), msg("user", "run the tests"),
        msg("assistant", "", tool_calls=[call("c1", "bash", {"cmd": "pytest"})]),
        msg("tool", _BIG, tool_call_id="c1"), msg("assistant", "All 400 pass."), msg("user", "thanks")]


@pytest.mark.parametrize("name, doc", [
    ("array.json", _DOC),
    ("wrapped.json", {"messages": _DOC}),
    ("run.traj", {"trajectory": [], "history": _DOC, "info": {}}),
    ("results.json", [{"task_id": 7, "trial": 0, "reward": 1.0, "info": {}, "traj": _DOC}]),
])
def test_offload_then_restore_of_a_json_document_gives_its_chat_file(tmp_path, name, doc):
    # issue 13 item 2: a one-document input has no lines of its own; its blobs held "raw": [] and
    # restore said "no offload markers in this transcript" over a file full of them
    from typer.testing import CliRunner

    from tcompact.app import app

    src = tmp_path / name
    src.write_bytes(orjson.dumps(doc))
    out, back, chat = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "chat.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["compact", str(src), "-c", "offload", "--now", "-o", str(out),
                                 "--set", "large_message_tokens=200"])
    assert result.exit_code == 0, result.stderr
    (blob,) = (tmp_path / "out.offload").iterdir()
    assert orjson.loads(blob.read_bytes())["messages"] == [_DOC[3]]
    assert out.read_bytes().count(b"[[OFFLOAD: handle=") == 1
    result = runner.invoke(app, ["restore", str(out), "-o", str(back)])
    assert (result.exit_code, result.stdout) == (0, f"Restored 1 offloaded line(s) into {back}\n")
    assert runner.invoke(app, ["convert", str(src), "--to", "chat", "-o", str(chat)]).exit_code == 0
    assert back.read_bytes() == chat.read_bytes() == b"".join(orjson.dumps(m) + b"\n" for m in _DOC)


def test_restore_refuses_an_original_it_cannot_place(tmp_path):
    from typer.testing import CliRunner

    from tcompact.app import app

    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    assert runner.invoke(app, ["compact", str(SAMPLES / "claude_code_session.jsonl"), "-c", "offload", "--now",
                               "-o", str(out), "--to", "codex", "--set", "large_message_tokens=200",
                               "--set", "protected_tools=[]"]).exit_code == 0
    blob = min((tmp_path / "out.offload").iterdir(), key=lambda p: p.stem[-6:])  # the first in the file
    result = runner.invoke(app, ["restore", str(out), "-o", str(tmp_path / "back.jsonl")])
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {out}: the offloaded original {blob.stem} (claude-code) cannot be put back into a codex file "
           "— restore the file the compaction wrote, in the format it wrote\n")


def test_restore_skips_bad_lines_as_compact_did(tmp_path):
    # issue 13 item 17: a file compacted with --skip-bad-lines could not be restored
    from typer.testing import CliRunner

    from tcompact.app import app

    src = jsonl(tmp_path / "s.jsonl", [msg("user", "run"), "{not json",
                                       msg("assistant", "", tool_calls=[call("c1", "bash", {})]),
                                       msg("tool", _BIG, tool_call_id="c1"), msg("assistant", "ok")])
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    runner = CliRunner()
    assert runner.invoke(app, ["compact", str(src), "-c", "offload", "--now", "-o", str(out), "--skip-bad-lines",
                               "--set", "large_message_tokens=200"]).exit_code == 0
    result = runner.invoke(app, ["restore", str(out), "-o", str(back)])
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {out}:2: not valid JSON (unexpected character, expected a string key at column 2) — fix or "
           "remove that line, or pass --skip-bad-lines to read on without it\n")
    result = runner.invoke(app, ["restore", str(out), "-o", str(back), "--skip-bad-lines"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, f"Restored 1 offloaded line(s) into {back}\n",
        f"Warning: {out}: skipped 1 bad line(s) (2); line 2: not valid JSON (unexpected character, expected a "
        "string key at column 2)\n")
    assert back.read_bytes() == src.read_bytes()


def test_restore_errors(tmp_path):
    from typer.testing import CliRunner

    from tcompact.app import app

    plain = jsonl(tmp_path / "plain.jsonl", [msg("user", "hi")])
    result = CliRunner().invoke(app, ["restore", str(plain), "-o", str(tmp_path / "r.jsonl")])
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {plain}: no offload markers in this transcript — pass a file written by "
           "`tcompact compact -c offload`\n")
    marked = jsonl(tmp_path / "m.jsonl", [msg("tool", "x...\n" + marker_for("abc123", "/nowhere/abc123.json"),
                                              tool_call_id="c")])
    result = CliRunner().invoke(app, ["restore", str(marked), "--store", str(tmp_path), "-o", str(tmp_path / "r.jsonl")])
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {marked}: the offloaded original abc123 is missing ({tmp_path}/abc123.json) — pass --store "
           "with the folder the compaction wrote\n")


# ---- _edit: the helpers of in-place rewrites -----------------------------------------------------

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


@pytest.mark.parametrize(("content", "text"), [
    ("plain output", "plain output"), ("", ""),
    (({"type": "text", "text": "first"}, IMAGE, {"type": "text", "text": "second"}), "first\nsecond"),
    ((IMAGE,), None), (None, None),
])
def test_result_text_is_the_text_a_rewrite_can_replace(content, text):
    from tcompact.compressors._edit import result_text

    assert result_text(Message(role="tool", content=content, tool_call_ids=("c",))) == text


def test_with_text_keeps_images_after_the_new_text_and_everything_else_of_the_message():
    from tcompact.compressors._edit import with_text

    parts = Message(role="tool", content=({"type": "text", "text": "old"}, IMAGE), tool_call_ids=("c9",),
                    is_error=True, source=(4,))
    new = with_text(parts, "new")
    assert new.content == ({"type": "text", "text": "new"}, IMAGE)
    assert (new.tool_call_ids, new.is_error, new.source) == (("c9",), True, (4,))
    assert with_text(Message(role="tool", content="old"), "new").content == "new"


def test_tool_names_maps_each_result_to_its_call_and_a_one_line_preview():
    from tcompact.compressors._edit import call_preview, tool_names

    msgs = [Message(role="user", content="go"),
            parse_message(msg("assistant", "", tool_calls=[call("a", "grep", {"pattern": "TODO"}),
                                                            call("b", "Read", {"file_path": "x.py"})])),
            Message(role="tool", content="1 hit", tool_call_ids=("a",)),
            Message(role="tool", content="x = 1", tool_call_ids=("b",)),
            Message(role="tool", content="orphan", tool_call_ids=("zz",))]
    assert tool_names(msgs) == {2: ("grep", 'grep({"pattern":"TODO"})'), 3: ("Read", 'Read({"file_path":"x.py"})')}
    assert call_preview("grep", '{"pattern":\n   "x",  "path": "src"}') == 'grep({"pattern": "x", "path": "src"})'
    long = call_preview("Bash", '{"command": "' + "a" * 300 + '"}')
    assert len(long) == 120 and long == ('Bash({"command": "' + "a" * 300)[:119] + "…"
    assert len(call_preview("Bash", "x" * 10, width=12)) == 12


def test_cut_head_keeps_the_head_within_the_budget_and_says_how_much_was_cut():
    from tcompact.compressors._edit import CUT_MARK, cut_head

    counter = TokenCounter()
    words = " ".join(f"word{i}" for i in range(500))
    original = Message(role="user", content=words, source=(3,))
    out = cut_head(original, 100, counter, by="round-level", why="fit the target")
    head, marker = out.text.split("\n[... the rest of this message (")
    rest = words[len(head):]
    assert words.startswith(head) and head.startswith("word0 word1 ")
    assert marker == f"{counter.count(rest):,} tokens) {CUT_MARK} round-level to fit the target ...]"
    assert counter.count(out.text) <= 100 and out.source == (3,) and out.role == "user"
    assert not words[len(head)].isalnum() or not head[-1].isalnum()  # never inside a word


# ---- truncate: more of its contract ------------------------------------------------------------


def test_truncate_cuts_the_text_of_a_multipart_output_and_keeps_its_image():
    big = "".join(f"{i}\n" for i in range(600))
    msgs = session([("bash", "x")])
    msgs[2] = Message(role="tool", content=({"type": "text", "text": big}, IMAGE), tool_call_ids=("c0",))
    result = run("truncate", msgs)
    text, image = result.messages[2].content
    assert image == IMAGE and text["text"].startswith("0\n1\n") and "tcompact truncated 344 lines" in text["text"]


def test_truncate_keeps_every_output_when_keep_recent_covers_them_all():
    big = "".join(f"{i}\n" for i in range(600))
    result = run("truncate", session([("bash", big), ("grep", big)]), keep_recent=5)
    assert (result.applied, result.reason) == (False, "no tool output over the limits")


def test_truncate_by_tokens_keeps_head_and_tail_in_their_ratio():
    counter = TokenCounter()
    words = " ".join(f"w{i}" for i in range(4000))
    cut = truncate_text(words, settings("truncate", max_tokens=300, head_ratio=0.25), ctx(), where="s:1")
    head, rest = cut.split("\n[... tcompact truncated ")
    tail = rest.split(" ...]\n", 1)[1]
    assert words.startswith(head) and words.endswith(tail) and counter.count(cut) <= 300
    assert 2.0 < len(tail) / len(head) < 4.0  # a quarter from the head, the rest from the tail
    assert truncate_text("short", settings("truncate", max_tokens=300), ctx(), where="s:1") == "short"


# ---- offload: more of its contract -------------------------------------------------------------


def test_offload_handles_name_the_content_and_the_place_and_the_notes_say_where():
    import hashlib

    big = "payload line\n" * 400
    msgs = session([("bash", big), ("bash", big)])
    result = get("offload").compress(msgs, settings("offload", preview_chars=0), ctx(force=True, offload_dir="o.d"))
    digest = hashlib.sha256(big.encode()).hexdigest()[:16]
    assert [b.handle for b in result.blobs] == [f"{digest}000002", f"{digest}000004"]  # oldest first
    assert [m.text for m in result.messages if m.role == "tool"] == [
        f"...\n[[OFFLOAD: handle={digest}00000{i}, type=filesystem, path=o.d/{digest}00000{i}.json]]" for i in (2, 4)]
    assert result.notes == ("offloaded 2 message(s) to o.d/",) and result.figures == {"offloaded": 2}


def test_offload_acts_only_over_its_threshold():
    msgs = session([("bash", "payload line\n" * 400)])
    total = TokenCounter().total(msgs)
    assert run("offload", msgs, tokens_threshold=total).reason == "below the threshold"
    assert run("offload", msgs, tokens_threshold=total - 1).figures == {"offloaded": 1}


def test_offload_keep_recent_roles_and_the_last_round():
    big = "x " * 2000
    msgs = session([("bash", big), ("bash", big), ("bash", big)])
    assert len(run("offload", msgs, force=True, keep_recent=4).blobs) == 1  # the last two results are kept
    asked = [Message(role="user", content=big)] + msgs[1:]
    assert [b.message.role for b in run("offload", asked, force=True, roles=["user"]).blobs] == ["user"]
    open_round = msgs[:3] + [Message(role="assistant", content="first part done")] + msgs[3:-1]
    assert [b.message for b in run("offload", open_round, force=True).blobs] == [msgs[2]]  # the round after the answer
    assert len(run("offload", open_round, force=True, keep_last_round=False).blobs) == 3
    assert len(run("offload", msgs[:-1], force=True).blobs) == 3  # no answer at all: no round is protected


def test_offload_protection_matches_raw_arguments_too():
    big = "x " * 2000
    msgs = session([("bash", big)])
    msgs[1] = Message(role="assistant", tool_calls=(ToolCall("c0", "bash", "cat notes.txt", type="custom"),))
    assert run("offload", msgs, force=True, protected_tools=["bash:cat *"]).applied is False
    assert run("offload", msgs, force=True, protected_tools=["bash:rm *"]).figures == {"offloaded": 1}
    assert run("offload", msgs, force=True, protected_tools=["bash"]).applied is False


# ---- micro: more of its contract ---------------------------------------------------------------


def test_micro_clears_only_the_tools_named_and_says_what_it_did():
    big = "result " * 200
    msgs = session([("grep", big), ("grep", big), ("read", big), ("read", big)])
    result = run("micro", msgs, keep_recent_per_tool=1, tools=["read"])
    assert [m.text.startswith(CLEARED_MARKER) for m in result.messages if m.role == "tool"] == [False, False, True,
                                                                                               False]
    assert result.notes == ("cleared 1 old tool result(s)",) and result.figures == {"cleared": 1}
    assert result.tokens_after < result.tokens_before


def test_micro_keeps_the_image_of_a_cleared_result():
    msgs = session([("shot", "x"), ("shot", "y")])
    msgs[2] = Message(role="tool", content=({"type": "text", "text": "result " * 200}, IMAGE), tool_call_ids=("c0",))
    result = run("micro", msgs, keep_recent_per_tool=1)
    text, image = result.messages[2].content
    assert image == IMAGE and text["text"].startswith(CLEARED_MARKER + "\nshot output of ")
