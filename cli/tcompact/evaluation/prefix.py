"""The session as it stood at a cut point: the file as it was when the agent was about to act.

Claude Code sessions, Codex rollouts and chat JSON Lines are written one record at a time, so the
session at a cut is the file's records before the first record of the message at the cut — the
same bytes the file held then, with the same line numbers. A JSON document (a SWE-agent
trajectory, tau-bench results, a chat array) is a copy whose message list ends before that
message. Either is read back with the file's own reader and must give exactly the messages before
the cut; it is then compacted as ``tcompact compact --now`` would compact that file.
"""

from __future__ import annotations

import copy

import orjson

from ..errors import TcompactError
from ..formats import ReadOptions, read_bytes
from ..model import SourceFile, Transcript
from .editors import document_items

__all__ = ["prefix_source"]


def prefix_source(source: SourceFile, transcript: Transcript, *, cut: int, read: ReadOptions) -> SourceFile:
    """``source`` as it stood before message ``cut`` of ``transcript`` (read with ``read``, raw records
    kept, under the file's own path so that markers name the original's lines)."""
    at = transcript.messages[cut]
    if source.meta.get("document"):
        doc = copy.deepcopy(source.records[0].data)
        items = document_items(doc, source, transcript)
        del items[at.meta["item"]:]
        data = orjson.dumps(doc)
    else:
        data = b"".join(r.raw or b"" for r in source.records[:min(at.source)])
    options = ReadOptions(format=source.format, full_history=read.full_history, skip_bad_lines=read.skip_bad_lines,
                          keep_raw=True)
    back = read_bytes(data, source.path, options)
    if _shape(back.transcript(transcript.id).messages) != _shape(transcript.messages[:cut]):
        raise TcompactError(f"the session before message {cut} does not read back as its first {cut} messages",
                            path=source.path, hint="please report it: tcompact eval --metric needed cannot cut "
                                                   "this session")
    return back


def _shape(messages):
    return [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_ids) for m in messages]
