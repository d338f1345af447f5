"""working-set (the default chain): full's handoff, a raw tail sized in tokens whose older outputs are masked,
and the working set re-injected — with every tool call kept with its result and the user's requests whole."""

from __future__ import annotations

import re

import orjson

from tcompact.compressors import build_span, get
from tcompact.compressors.base import Context
from tcompact.compressors.mask import MASK_MARKER
from tcompact.model import Message, ToolCall, index_tool_calls
from tcompact.spans import legal_cut_points
from tcompact.summarizers.extractive import ExtractiveSummarizer
from tcompact.counting.tokens import TokenCounter

SOURCE = "\n".join(f"def handler_{n:02d}(request):\n    return route_table_{n:02d}[request.path]" for n in range(40))


def session(turns=12):
    """A system prompt, a request, then per turn a read of a ~600-token file and an edit of it."""
    msgs = [Message(role="system", content="You are a coding agent."),
            Message(role="user", content="Route the new endpoints through the handler table.")]
    for n in range(turns):
        path = f"/srv/app/routes_{n:02d}.py"
        msgs += [Message(role="assistant", content=f"Reading routes {n}.", tool_calls=(
                     ToolCall(f"r{n}", "Read", orjson.dumps({"file_path": path}).decode()),)),
                 Message(role="tool", content=SOURCE.replace("route_table", f"table{n}"), tool_call_ids=(f"r{n}",),
                         meta={"line": 100 + n}),
                 Message(role="assistant", tool_calls=(ToolCall(f"e{n}", "Edit", orjson.dumps(
                     {"file_path": path, "old_string": "handler_00", "new_string": f"endpoint_{n:02d}"}).decode()),)),
                 Message(role="tool", content="The file has been updated.", tool_call_ids=(f"e{n}",))]
    msgs.append(Message(role="assistant", content="All routes go through the table now."))
    return msgs


def run(messages, **values):
    counter = TokenCounter()
    ctx = Context(counter=counter, window=200_000, summarizer=ExtractiveSummarizer(counter), force=True,
                  locator=lambda m: f"s.jsonl:{m.meta.get('line', '?')}")
    compressor = get("working-set")
    return compressor.compress(messages, compressor.settings_model(**values), ctx), counter


def test_the_tail_is_sized_in_tokens_and_its_older_outputs_are_masked():
    msgs = session()
    result, counter = run(msgs, keep_recent_tokens=2500, keep_recent_share=1.0, keep_recent_turns=2)
    assert result.applied, result.reason
    tail = list(result.messages[len(result.messages) - len(result.span.tail):])
    assert result.span.tail.start in legal_cut_points(msgs)  # never between a call and its result
    assert counter.total(tail) <= 2500
    outputs = [m.text for m in tail if m.role == "tool" and len(m.text) > 100]
    masked = [t for t in outputs if t.startswith(MASK_MARKER)]
    assert len(outputs) - len(masked) == 1 and masked  # only the newest turns keep their outputs
    assert all(re.search(r"\nThe whole output is in s\.jsonl:1\d\d; run the call again if you need it now\.\]$", t)
               for t in masked)
    # the same messages otherwise: calls and the assistant's words as they were
    assert [m.tool_calls for m in tail] == [m.tool_calls for m in msgs[result.span.tail.start:]]
    assert index_tool_calls(result.messages).unanswered == () and index_tool_calls(result.messages).orphan_results == ()


def test_the_tail_takes_at_most_its_share_of_a_small_session():
    msgs = session(turns=3)
    result, counter = run(msgs)  # 8,000 tokens would keep all of it raw; 10% of it is the limit
    assert result.applied and counter.total(msgs[result.span.tail.start:]) <= 0.1 * counter.total(msgs)


def test_the_system_prompt_the_request_the_summary_and_the_working_set_are_kept():
    msgs = session()
    result, counter = run(msgs, keep_recent_tokens=1500, keep_recent_share=1.0)
    head = result.messages[: 4]
    assert head[0] == msgs[0] and head[1] == msgs[1]  # the system prompt, the request verbatim
    assert head[2].meta.get("memory_block") == "full" and "<state_snapshot>" not in head[2].text
    context = head[3].text
    assert head[3].meta.get("reinjected") and '<section name="working_set">' in context
    # the file edited last whose text the tail does not show, as it now is; terms of the other outputs
    assert "Recently edited file: /srv/app/routes_" in context and "def endpoint_" in context
    assert "Names, paths and values the tools returned" in context
    assert result.tokens_after < 0.5 * result.tokens_before


def test_what_needs_no_summary_is_made_while_the_summariser_answers_and_used(monkeypatch):
    """The files, the ranking of the index's terms and the benefit check's facts but the outputs' are made once,
    beforehand (``ahead_of_answer``), and taken afterwards: none is made again (the same compaction either way)."""
    import tcompact.compressors._benefit as benefit_module
    import tcompact.compressors.working_set as compressor_module
    import tcompact.working_set as working_set_module
    import tcompact.working_set.index as index_module

    msgs = session()
    plain, _ = run(msgs, keep_recent_tokens=1500, keep_recent_share=1.0)
    made = []

    def counted(module, name):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: made.append(name) or real(*a, **k))

    for module, name in ((compressor_module, "rank_terms"), (index_module, "rank_terms"),
                         (compressor_module, "working_files"), (working_set_module, "working_files"),
                         (benefit_module, "_facts")):
        counted(module, name)
    result, _ = run(msgs, keep_recent_tokens=1500, keep_recent_share=1.0)
    assert result.applied and result.messages == plain.messages and result.figures == plain.figures
    # _facts twice: the words beforehand, the outputs after
    assert sorted(made) == ["_facts", "_facts", "rank_terms", "working_files"]


def test_the_inspect_preview_is_the_layout_it_compacts():
    msgs = session()
    result, _ = run(msgs)
    assert build_span("working-set", msgs) == result.span
