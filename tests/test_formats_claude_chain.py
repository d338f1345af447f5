"""formats/claude_chain.py: which lines form the active context — groups, roots, the leaf, the walk, the notes."""

from __future__ import annotations

import pytest

from tcompact.formats.claude_chain import Line, groups, leaf, line_of, outside_notes, root, walk


def L(uuid, parent=None, kind="user", ts="2026-01-05T10:00:00.000Z", index=None, **kw) -> Line:
    fields = {"logical_parent": None, "subtype": None, "sidechain": False, "agent": None, "message_id": None, **kw}
    return Line(index=index if index is not None else int(uuid[1:]), uuid=uuid, parent=parent, kind=kind,
                timestamp=ts, **fields)


def lines_of(*ls: Line) -> dict[str, Line]:
    return {ln.uuid: ln for ln in ls}


def t(second: int) -> str:
    return f"2026-01-05T10:00:{second:02d}.000Z"


def test_line_of_takes_only_values_of_the_right_type():
    d = {"type": "assistant", "uuid": "a", "parentUuid": "p", "logicalParentUuid": 3, "subtype": 5,
         "isSidechain": "true", "agentId": "x", "timestamp": "2026-01-05T10:00:00Z", "message": {"id": "m1"}}
    assert line_of(4, "a", d, "clock") == Line(index=4, uuid="a", parent="p", logical_parent=None, kind="assistant",
                                               subtype=None, sidechain=False, agent="x",
                                               timestamp="2026-01-05T10:00:00Z", message_id="m1")
    boundary = {"type": "system", "subtype": "compact_boundary", "parentUuid": None, "logicalParentUuid": "old",
                "isSidechain": True, "message": "x"}
    assert line_of(0, "b", boundary, "2026-01-05T09:00:00Z") == Line(
        index=0, uuid="b", parent=None, logical_parent="old", kind="system", subtype="compact_boundary",
        sidechain=True, agent=None, timestamp="2026-01-05T09:00:00Z", message_id=None, compact=(None, None))
    # a message id names a reply only on assistant lines
    assert line_of(1, "u", {"type": "user", "message": {"id": "m"}}, "").message_id is None


def test_groups_put_main_first_then_each_agent_and_sidechain_tree():
    ls = lines_of(L("s1", sidechain=True, index=0), L("s2", "s1", sidechain=True, index=1),
                  L("x1", sidechain=True, agent="abc", index=2), L("m1", index=3),
                  L("s3", "m1", sidechain=True, index=4))  # a sidechain under a main line: its own root
    assert {k: [ln.uuid for ln in v] for k, v in groups(ls).items()} == {
        "main": ["m1"], "sidechain-s1": ["s1", "s2"], "agent-abc": ["x1"], "sidechain-s3": ["s3"]}
    assert list(groups(lines_of(L("x1", sidechain=True, agent="abc")))) == ["agent-abc"]


def test_root_is_the_top_of_the_tree_segment():
    ls = lines_of(L("r0"), L("a1", "r0"), L("a2", "a1"), L("d3", "gone"), L("c4", "c5"), L("c5", "c4"))
    memo: dict[str, str] = {}
    assert [root(ls[u], ls, memo) for u in ("a2", "a1", "r0", "d3", "c4")] == ["r0", "r0", "r0", "d3", "c5"]
    assert memo == {"a2": "r0", "a1": "r0", "r0": "r0", "d3": "d3", "c4": "c5", "c5": "c5"}
    side = lines_of(L("m0"), L("s1", "m0", sidechain=True), L("s2", "s1", sidechain=True))
    assert root(side["s2"], side, {}, sidechain_only=True) == "s1"
    assert root(side["s2"], side, {}) == "m0"


@pytest.mark.parametrize(("ls", "expected"), [
    # the newest message line with no message under it
    ([L("u0", ts=t(0)), L("a1", "u0", "assistant", t(1)), L("a2", "u0", "assistant", t(5))], "a2"),
    # a tie on the time: the first in file order (as Claude Code 2.0.76 resumes)
    ([L("u0", ts=t(0)), L("a1", "u0", "assistant", t(5)), L("a2", "u0", "assistant", t(5))], "a1"),
    # a progress record newer than every message ends nothing: it maps up to the message above it
    ([L("u0", ts=t(0)), L("a1", "u0", "assistant", t(1)), L("u2", "a1", ts=t(2)), L("p3", "a1", "progress", t(9))],
     "u2"),
    # ... unless nothing else is a leaf: then the message above it is the leaf
    ([L("u0", ts=t(0)), L("a1", "u0", "assistant", t(1)), L("p2", "a1", "progress", t(9))], "a1"),
    # a timestamp that does not parse sorts first
    ([L("u0", ts=t(0)), L("a1", "u0", "assistant", "yesterday"), L("a2", "u0", "assistant", t(1))], "a2"),
    # no message line at all: the newest line
    ([L("p0", kind="progress", ts=t(3)), L("p1", kind="progress", ts=t(1))], "p0"),
])
def test_the_leaf_claude_code_resumes_from(ls, expected):
    assert leaf(ls, lines_of(*ls)).uuid == expected


def test_walk_stops_at_the_last_boundary_or_goes_through_it_with_full_history():
    ls = lines_of(L("u0"), L("a1", "u0", "assistant"), L("b2", None, "system", subtype="compact_boundary",
                                                         logical_parent="a1"),
                  L("s3", "b2"), L("a4", "s3", "assistant"))
    assert walk(ls["a4"], ls, False) == ([ls["b2"], ls["s3"], ls["a4"]], [])
    assert walk(ls["a4"], ls, True) == ([ls[u] for u in ("u0", "a1", "b2", "s3", "a4")], [])


def test_walk_names_a_parent_that_is_not_in_the_file_and_stops_at_a_loop():
    ls = lines_of(L("a1", "lost"), L("a2", "a1"))
    assert walk(ls["a2"], ls, False) == ([ls["a1"], ls["a2"]], ["chain stops at a parent that is not in the file "
                                                                 "(lost)"])
    loop = lines_of(L("c1", "c2"), L("c2", "c1"))
    assert walk(loop["c2"], loop, False) == ([loop["c1"], loop["c2"]], [])


def test_outside_notes_name_stray_messages_and_newer_records():
    ls = [L("u0", ts=t(0)), L("a1", "u0", "assistant", t(1)), L("x2", ts=t(0)),  # x2: a tree of its own
          L("p3", "u0", "progress", t(8)),  # newer than the last message, under a message that is not the end
          L("u4", "gone", ts=t(0))]  # its parent is not in the file: a tree of its own too
    lines = lines_of(*ls)
    chain = [lines["u0"], lines["a1"]]
    line_no = {ln.index: ln.index + 1 for ln in ls}
    assert outside_notes(ls, lines, chain, {0, 1}, line_no) == [
        "2 message line(s) outside the active context, neither before a compaction nor on an abandoned branch (not "
        "connected to the chain that ends at line 2): lines 3, 5",
        "1 record(s) that are not messages (progress) are newer than the last message but do not end the context, "
        "which ends at line 2: lines 4"]


def test_outside_notes_leave_out_history_before_a_compaction_and_abandoned_branches():
    ls = [L("u0", ts=t(0)), L("a1", "u0", "assistant", t(1)),
          L("a2", "u0", "assistant", t(2)),  # a branch abandoned by a rewind: on the chain's tree
          L("b3", None, "system", t(3), subtype="compact_boundary", logical_parent="a2"),
          L("s4", "b3", ts=t(4)), L("a5", "s4", "assistant", t(5))]
    lines = lines_of(*ls)
    chain = [lines["b3"], lines["s4"], lines["a5"]]
    assert outside_notes(ls, lines, chain, {4, 5}, {ln.index: ln.index + 1 for ln in ls}) == []


def test_a_long_list_of_lines_is_cut_after_ten():
    strays = [L(f"x{n}", ts=t(0), index=n) for n in range(2, 14)]
    ls = [L("u0", ts=t(0), index=0), L("a1", "u0", "assistant", t(1), index=1), *strays]
    lines = lines_of(*ls)
    (note,) = outside_notes(ls, lines, [lines["u0"], lines["a1"]], {0, 1}, {ln.index: ln.index + 1 for ln in ls})
    assert note.endswith("(not connected to the chain that ends at line 2): lines 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 …")
    assert note.startswith("12 message line(s)")
