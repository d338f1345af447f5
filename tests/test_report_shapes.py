"""The declared report shapes (inspect_shapes.py, sessions/shapes.py, evaluation/shapes.py, report.py) against the reports the code
builds: every key a report holds is declared, every declared key is there (or optional), and every value has
its declared type, on the samples, the sessions listing in each grouping, a written compaction report and the eval report of each metric.

A key added to a builder and not to its shape, or a shape that names a key no builder writes, fails here."""

from __future__ import annotations

import types
import typing
from datetime import datetime, timezone
from typing import Any, ForwardRef, NotRequired, get_args, get_origin, is_typeddict

import orjson
import pytest
from claude_lines import parallel_session
from conftest import REAL_FILES, SAMPLES, jsonl, real_file
from typer.testing import CliRunner

from tcompact.inspection import shapes as inspect_shapes
from tcompact import pages
from tcompact.compaction import report
from tcompact.app import app
from tcompact.evaluation import EvalOptions, evaluate_paths
from tcompact.evaluation import shapes as eval_shapes
from tcompact.inspection import InspectOptions, inspect_paths
from tcompact.model import Message
from tcompact.sessions import shapes
from tcompact.sessions.report import GROUPS, SessionsOptions, session_detail, sessions_report
from tcompact.sessions.stores import Session

#: the names the shapes refer to, some of them only under TYPE_CHECKING in their own module
NAMES = {**vars(typing), **vars(inspect_shapes), **vars(shapes), **vars(eval_shapes), **vars(report),
         **vars(pages)}


def mismatches(value: Any, hint: Any, where: str = "$") -> list[str]:
    """Where ``value`` differs from the type ``hint`` (a TypedDict, list, dict, union, scalar or Any)."""
    if hint is Any:
        return []
    if is_typeddict(hint):
        return _typed_dict(value, hint, where)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        found = [mismatches(value, arg, where) for arg in args]
        return [] if any(not f for f in found) else [f"{where}: {value!r:.60} is none of {hint}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [m for i, v in enumerate(value) for m in mismatches(v, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not a dict"]
        return [m for k, v in value.items() for m in mismatches(k, args[0], where) + mismatches(v, args[1], f"{where}.{k}")]
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r:.60} is not None"]
    wanted = (int, float) if hint is float else hint
    ok = isinstance(value, wanted) and (hint is bool or not isinstance(value, bool))
    return [] if ok else [f"{where}: {value!r:.60} is not {hint.__name__}"]


def _typed_dict(value: Any, hint: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: not a {hint.__name__}"]
    declared = {k: _resolved(v) for k, v in hint.__annotations__.items()}
    fields = {k: t for k, (t, _) in declared.items()}
    out = [f"{where}: {k!r} is not declared in {hint.__name__}" for k in value if k not in fields]
    out += [f"{where}: {hint.__name__} {k!r} is missing" for k, (_, needed) in declared.items() if needed and k not in value]
    return out + [m for k, v in value.items() if k in fields for m in mismatches(v, fields[k], f"{where}.{k}")]


def _resolved(annotation: Any) -> tuple[Any, bool]:
    """An annotation of a shape as a type (its names looked up in all the shapes' modules), and whether the key
    is required (not NotRequired: with postponed annotations Python cannot tell ``__required_keys__`` so)."""
    if isinstance(annotation, ForwardRef):
        annotation = annotation.__forward_arg__
    hint = eval(annotation, NAMES) if isinstance(annotation, str) else annotation  # noqa: S307 (our own annotations)
    return (get_args(hint)[0], False) if get_origin(hint) is NotRequired else (hint, True)


def test_the_checker_names_an_undeclared_key_a_missing_one_and_a_wrong_type():
    row = {"name": "Bash", "calls": 1, "argument_tokens": 2, "result_tokens": 3, "results": 1, "errors": 0}
    assert mismatches(row, inspect_shapes.ToolRow) == []
    assert mismatches({**row, "extra": 1}, inspect_shapes.ToolRow) == ["$: 'extra' is not declared in ToolRow"]
    assert mismatches({k: v for k, v in row.items() if k != "calls"}, inspect_shapes.ToolRow) == [
        "$: ToolRow 'calls' is missing"]
    assert mismatches({**row, "calls": True}, inspect_shapes.ToolRow) == ["$.calls: True is not int"]
    assert mismatches([{**row, "name": None}], list[inspect_shapes.ToolRow]) == ["$[0].name: None is not str"]
    assert mismatches({"a": "1"}, dict[str, int]) == ["$.a: '1' is not int"]
    assert mismatches(0.5, float) == [] and mismatches(1, float) == [] and mismatches(None, int | None) == []
    assert mismatches("x", int | None) == ["$: 'x' is none of int | None"]


@pytest.mark.parametrize("spans", [None, "dialogue"])
def test_inspect_reports_of_every_sample_have_the_declared_shape(spans):
    doc = inspect_paths(sorted(SAMPLES.glob("*.jsonl")), InspectOptions(spans=spans))
    assert len(doc["files"]) == 3
    assert mismatches(doc, inspect_shapes.InspectReport) == []
    spanned = [t["span"] for f in doc["files"] for t in f["transcripts"]]
    assert all(s is not None for s in spanned) if spans else all(s is None for s in spanned)


def test_a_report_with_errors_and_files_passed_over_has_the_declared_shape(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "demo"}')
    jsonl(tmp_path / "s.jsonl", parallel_session())
    doc = inspect_paths([tmp_path, tmp_path / "missing.jsonl"])
    assert (len(doc["errors"]), len(doc["not_transcripts"])) == (1, 1)
    assert mismatches(doc, inspect_shapes.InspectReport) == []


@pytest.fixture
def stored(tmp_path):
    when = datetime(2026, 1, 5, 10, tzinfo=timezone.utc)
    main = jsonl(tmp_path / "a.jsonl", parallel_session())
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role":"user"\n')
    return Session(agent="claude", id="a", main=main, subagents=(bad,), project="/repo", first=when, last=when)


@pytest.mark.parametrize("group_by", GROUPS)
@pytest.mark.parametrize("cost", [False, True])
def test_the_sessions_document_has_the_declared_shape_in_every_grouping(stored, group_by, cost):
    doc = sessions_report([stored], SessionsOptions(group_by=group_by, cost=cost, timezone="UTC"))
    assert (len(doc["sessions"]), doc["errors"], len(doc["not_transcripts"])) == (1, [], 1)  # the bad file: no transcript
    assert mismatches(doc, shapes.SessionsReport) == []
    assert (doc["groups"] is None) == (group_by == "session")


def test_a_session_detail_is_an_inspect_report_with_the_row(stored):
    report_ = inspect_paths([stored.main])
    doc = session_detail(stored, report_, read=InspectOptions().read, cost=True, timezone_name="UTC")
    assert mismatches(doc, inspect_shapes.InspectReport) == []
    assert mismatches(doc["session"], shapes.SessionRow) == [] and "cost" in doc["session"]


@pytest.mark.parametrize("chain", ["dialogue", "truncate,micro"])
def test_a_written_compaction_report_has_the_declared_shape(tmp_path, monkeypatch, chain):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", chain, "--now",
                                      "-o", "out.jsonl", "--report", "r.json"])
    assert (result.exit_code, result.stderr) == (0, "")
    doc = orjson.loads((tmp_path / "r.json").read_bytes())
    assert [s["processor"] for s in doc["stages"]] == chain.split(",")
    assert {"reason", "invariants", "notes", "outputs"} <= set(doc)
    assert mismatches(doc, report.CompactReport) == []


@pytest.mark.parametrize("metric", ["canaries", "needed", "both"])
def test_the_eval_report_has_the_declared_shape(tmp_path, metric):
    (tmp_path / "notes.json").write_text('{"a": 1}')
    paths = [SAMPLES / "chat_tool_session.jsonl", SAMPLES / "codex_rollout.jsonl", tmp_path]
    doc = evaluate_paths(paths, EvalOptions(chains=("micro", "truncate,full"), metric=metric, cuts=2))
    assert (len(doc["files"]), len(doc["not_transcripts"])) == (2, 1)
    assert ("summary" in doc, "needed" in doc) == (metric != "needed", metric != "canaries")
    assert mismatches(doc, eval_shapes.EvalReport) == []


# ---- the views read only what the shapes declare ----------------------------------------------------------------


class Tracked(dict):
    """A report dict that records each key a view reads, with the shape it was given as."""

    def __init__(self, value: dict, hint: Any, reads: set) -> None:
        fields = {k: t for k, (t, _) in ((k, _resolved(v)) for k, v in hint.__annotations__.items())}
        super().__init__({k: tracked(v, fields.get(k, Any), reads) for k, v in value.items()})
        self.shape, self.reads = hint, reads

    def __getitem__(self, key):
        self.reads.add((self.shape.__name__, key))
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.reads.add((self.shape.__name__, key))
        return super().get(key, default)

    def __contains__(self, key):
        self.reads.add((self.shape.__name__, key))
        return super().__contains__(key)


def tracked(value: Any, hint: Any, reads: set) -> Any:
    """``value`` with every dict of a declared shape in it :class:`Tracked` (a union: the branch it conforms to)."""
    if is_typeddict(hint) and isinstance(value, dict):
        return Tracked(value, hint, reads)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return next((tracked(value, a, reads) for a in args if not mismatches(value, a)), value)
    if origin is list and isinstance(value, list):
        return [tracked(v, args[0], reads) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: tracked(v, args[1], reads) for k, v in value.items()}
    return value


def undeclared(reads: set) -> list[tuple[str, str]]:
    fields = {}
    for module in (inspect_shapes, shapes, eval_shapes, report, pages):
        for name, hint in vars(module).items():
            if is_typeddict(hint):
                fields[name] = set(hint.__annotations__)
    return sorted((shape, key) for shape, key in reads if key not in fields[shape])


def test_the_inspect_views_read_only_declared_keys(capsys):
    from tcompact import render

    reads: set = set()
    doc = inspect_paths(sorted(SAMPLES.glob("*.jsonl")), InspectOptions(spans="dialogue"))
    render.inspect_report(tracked(doc, inspect_shapes.InspectReport, reads))
    one = inspect_paths([SAMPLES / "claude_code_session.jsonl"], InspectOptions(spans="dialogue"))
    render.inspect_report(tracked(one, inspect_shapes.InspectReport, reads), transcript="main")
    assert capsys.readouterr().out.count("Tokens by content kind") == 1  # the one file's detail
    assert len(reads) > 60 and undeclared(reads) == []


@pytest.mark.parametrize("group_by", GROUPS)
def test_the_sessions_view_reads_only_declared_keys(stored, group_by, capsys):
    from tcompact.render.sessions_view import session_lines, sessions_table

    reads: set = set()
    doc = sessions_report([stored], SessionsOptions(group_by=group_by, cost=True, timezone="UTC"))
    sessions_table(tracked(doc, shapes.SessionsReport, reads))
    session_lines(tracked(doc["sessions"][0], shapes.SessionRow, reads))
    assert "a" in capsys.readouterr().out
    assert len(reads) > 15 and undeclared(reads) == []


def test_the_compact_and_eval_views_read_only_declared_keys(tmp_path, monkeypatch, capsys):
    from tcompact.render.compact_view import compact_report
    from tcompact.render.eval_view import eval_report

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "truncate,micro",
                                      "--now", "-o", "out.jsonl", "--report", "r.json"])
    assert result.exit_code == 0
    reads: set = set()
    compact_report(tracked(orjson.loads((tmp_path / "r.json").read_bytes()), report.CompactReport, reads),
                   written=[], dry_run=True)
    doc = evaluate_paths([SAMPLES / "chat_tool_session.jsonl", SAMPLES / "codex_rollout.jsonl"],
                         EvalOptions(chains=("micro",), metric="both", cuts=2))
    eval_report(tracked(doc, eval_shapes.EvalReport, reads))
    assert "Compacted" in capsys.readouterr().out
    assert len(reads) > 30 and undeclared(reads) == []


# ---- the README documents every declared key -----------------------------------------------------------------------


def _declared_keys(hint: Any, seen: set, *, skip: set = frozenset()) -> set[str]:
    """Every key of a shape (but ``skip``) and of the shapes inside it."""
    if is_typeddict(hint):
        if hint in seen:
            return set()
        seen.add(hint)
        keys = set()
        for k, v in hint.__annotations__.items():
            keys |= {k} | _declared_keys(_resolved(v)[0], seen) if k not in skip else set()
        return keys
    return {k for arg in get_args(hint) for k in _declared_keys(arg, seen)}


def _section(heading: str) -> str:
    text = (SAMPLES.parent / "README.md").read_text()
    start = text.index(f"\n{heading}\n")
    level = heading.split(" ")[0]
    ends = [i for i in (text.find(f"\n{h} ", start + 1) for h in ("#" * n for n in range(1, len(level) + 1))) if i > 0]
    return text[start:min(ends)]


@pytest.mark.parametrize(("heading", "shape", "elsewhere"), [
    ("## `inspect --json` schema", inspect_shapes.InspectReport, {"session", "prices"}),  # inspect --session's
    ("### Sessions `--json` schema", shapes.SessionsReport, set()),
    ("## Compaction report", report.CompactReport, set()),
    ("### `tcompact eval [PATH...]`", eval_shapes.EvalReport, set()),
])
def test_the_readme_documents_every_key_a_shape_declares(heading, shape, elsewhere):
    section = _section(heading)
    missing = sorted(k for k in _declared_keys(shape, set(), skip=elsewhere) if f'"{k}"' not in section)
    assert missing == []


# ---- what the HTML pages draw beyond the reports ----------------------------------------------------------------


def test_the_page_data_have_their_declared_shapes():
    from test_report import AFTER, BEFORE, _stages

    from tcompact.formats import read_file

    t = read_file(SAMPLES / "chat_tool_session.jsonl").transcript()
    totals = [10] * len(t.messages)
    layouts = pages.span_layouts(t.messages, totals, ["dialogue", "full"], keep_recent=None)
    assert [x["compressor"] for x in layouts] == ["dialogue", "full"]
    assert all(sum(x[p]["messages"] for p in ("prefix", "body", "tail")) == len(t.messages) for x in layouts)
    assert mismatches(layouts, list[pages.SpanLayout]) == []
    facts = pages.call_facts(_stages())
    assert [f["usage"] for f in facts] == [None, {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57},
                                           {"prompt_tokens": 40, "completion_tokens": "9", "cached": 3}]
    assert mismatches(facts[:2], list[pages.CallFacts]) == []  # (the third reports a count as text: kept as it came)
    block = Message(role="user", content="<memory_block_dialogue>\nthe work so far\n</memory_block_dialogue>")
    made = pages.memory_blocks_made(BEFORE, (AFTER[0], block, *AFTER[1:]))
    assert [(b["index"], b["kind"]) for b in made] == [(1, "memory_block_dialogue")]
    assert mismatches(made, list[pages.MemoryBlock]) == []
    assert pages.memory_blocks_made((block,), (block,)) == []  # a block the input held already is not made


def test_the_html_views_read_only_declared_keys(tmp_path, monkeypatch):
    from test_report import _stages

    from tcompact.inspection import inspect_counted
    from tcompact.render.html_compact import compact_html, calls_rows
    from tcompact.render.html_inspect import inspect_html

    reads: set = set()
    many = inspect_paths(sorted(SAMPLES.glob("*.jsonl")))
    assert "<table" in inspect_html(tracked(many, inspect_shapes.InspectReport, reads))
    one, counted = inspect_counted([SAMPLES / "claude_code_session.jsonl"])
    page = pages.file_page(tracked(one, inspect_shapes.InspectReport, reads), counted, spans="dialogue")
    assert page is not None and page.layouts[0]["compressor"] == "dialogue"
    assert "Largest messages" in inspect_html(one, page)
    monkeypatch.chdir(tmp_path)
    CliRunner().invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "dialogue", "--now",
                             "-o", "out.jsonl", "--report", "r.json"])
    done = tracked(orjson.loads((tmp_path / "r.json").read_bytes()), report.CompactReport, reads)
    facts = tracked(pages.call_facts(_stages()), list[pages.CallFacts], reads)
    assert "dialogue" in compact_html(done, page_dir=tmp_path, calls=calls_rows(done, facts[:1]))
    assert len(reads) > 60 and undeclared(reads) == []


# ---- more of the branches: the real sessions, every sample compacted, nothing to do, a failed call ----------------


@pytest.mark.parametrize("key", sorted(REAL_FILES))
def test_the_real_sessions_reports_have_the_declared_shape(key):
    path = real_file(key)
    doc = inspect_paths([path], InspectOptions(spans="round-level"))
    (f,) = doc["files"]
    assert f["transcripts"] and all(t["span"] is not None for t in f["transcripts"])
    assert mismatches(doc, inspect_shapes.InspectReport) == []


def _compact(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return CliRunner().invoke(app, ["compact", *args])


@pytest.mark.parametrize("sample", ["claude_code_session.jsonl", "codex_rollout.jsonl"])
@pytest.mark.parametrize("chain", ["full", "dialogue"])
def test_every_format_compacted_reports_the_declared_shape(tmp_path, monkeypatch, sample, chain):
    result = _compact(tmp_path, monkeypatch, str(SAMPLES / sample), "-c", chain, "--now", "-o", "out.jsonl",
                      "--to", "chat", "--json")
    assert result.exit_code == 0
    doc = orjson.loads(result.stdout)
    assert doc["status"] in ("compacted", "nothing to do") and doc["summarizer"]["calls"] == 1
    assert mismatches({k: v for k, v in doc.items() if k not in ("written", "dry_run")}, report.CompactReport) == []


def test_nothing_to_do_in_json_is_the_report_with_what_was_written(tmp_path, monkeypatch):
    result = _compact(tmp_path, monkeypatch, str(SAMPLES / "chat_tool_session.jsonl"), "-c", "dialogue", "--json")
    assert result.exit_code == 0
    doc = orjson.loads(result.stdout)
    assert (doc["status"], doc["written"], doc["dry_run"]) == ("nothing to do", [], False)
    assert mismatches({k: v for k, v in doc.items() if k not in ("written", "dry_run")}, report.CompactReport) == []


def test_a_failed_call_is_a_report_of_the_declared_shape(tmp_path, monkeypatch):
    from openai_server import FakeOpenAI, error

    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        server.enqueue(error(401, "Incorrect API key provided"))
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(app, [
            "compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "dialogue", "--now", "--summarizer", "openai",
            "--model", "fake-model", "--base-url", server.base_url, "--timeout", "5", "-o", "out.jsonl", "--json"])
    assert result.exit_code == 1
    doc = orjson.loads(result.stdout)
    (stage,) = doc["stages"]
    assert (doc["status"], stage["failed"], stage["calls"][0]["error_kind"]) == ("failed", True, "authentication")
    assert mismatches({k: v for k, v in doc.items() if k not in ("written", "dry_run")}, report.CompactReport) == []


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    from session_stores import small_home

    return small_home(tmp_path_factory.mktemp("home"))


def _inspect_json(home, *args):
    from session_stores import env_for

    result = CliRunner().invoke(app, ["inspect", "--json", *args], env=env_for(home))
    assert result.exit_code == 0, result.stderr
    return orjson.loads(result.stdout)


@pytest.mark.parametrize("args", [(), ("--group-by", "model"), ("--group-by", "tool"), ("--group-by", "day", "--no-cost")])
def test_the_sessions_of_a_machine_list_in_the_declared_shape(machine, args):
    doc = _inspect_json(machine, *args)
    assert {r["agent"] for r in doc["sessions"]} == {"claude", "codex"}
    assert mismatches(doc, shapes.SessionsReport) == []


@pytest.mark.parametrize("which", ["last", "a1b"])
def test_a_stored_session_in_detail_is_the_declared_shape(machine, which):
    from session_stores import B, D

    doc = _inspect_json(machine, "--session", which)
    assert doc["session"]["id"] == {"last": D, "a1b": B}[which] and doc["prices"] is not None
    assert mismatches(doc, inspect_shapes.InspectReport) == []
    assert mismatches(doc["session"], shapes.SessionRow) == [] and "cost" in doc["session"]


# ---- kept and grown reports: the same shape as a report just made ------------------------------------------------


@pytest.mark.parametrize("sample", ["claude_code_session.jsonl", "codex_rollout.jsonl"])
def test_a_kept_report_and_one_read_on_from_a_kept_state_have_the_declared_shape(sample, tmp_path, monkeypatch):
    from tcompact.inspection import growing
    from tcompact.counting import cache as tokencache
    from tcompact.inspection import inspect_file

    monkeypatch.setenv(tokencache.CACHE_ENV, str(tmp_path / "cache"))
    how: list[str] = []
    resumed = growing._resumed

    def spy(*args, **kwargs):
        report_ = resumed(*args, **kwargs)
        how.append("resumed" if report_ is not None else "read whole")
        return report_

    monkeypatch.setattr(growing, "_resumed", spy)
    lines = (SAMPLES / sample).read_bytes().splitlines(keepends=True)
    path = tmp_path / sample
    path.write_bytes(b"".join(lines[:-1]))
    made, kept = inspect_file(path), inspect_file(path)  # the second: the report kept for the same bytes
    assert kept == made and mismatches(kept, inspect_shapes.FileReport) == []
    with open(path, "ab") as fh:
        fh.write(lines[-1])
    grown = inspect_file(path)  # read on from the state the first read kept
    assert how == ["resumed"] and grown["records"] == made["records"] + 1
    assert mismatches(grown, inspect_shapes.FileReport) == []


@pytest.mark.parametrize("metric", ["canaries", "needed"])
def test_an_eval_whose_chain_failed_is_the_declared_shape(tmp_path, monkeypatch, metric):
    from openai_server import FakeOpenAI, error

    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        for _ in range(8):  # every call of every cut refused
            server.enqueue(error(401, "Incorrect API key provided"))
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(app, [
            "eval", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "dialogue", "-c", "micro", "--metric", metric,
            "--cuts", "2", "--summarizer", "openai", "--model", "fake-model", "--base-url", server.base_url,
            "--timeout", "5", "--max-retries", "0", "--json"])
    assert result.exit_code == 1
    doc = orjson.loads(result.stdout)
    (entry,) = doc["files"]
    runs = entry["results"] if metric == "canaries" else [r for c in entry["needed"]["cuts"] for r in c["results"]]
    failed = [r for r in runs if r["status"] == "failed"]
    assert failed and all(r["chain"] == "dialogue" and r["tokens_after"] is None for r in failed)
    assert mismatches(doc, eval_shapes.EvalReport) == []
