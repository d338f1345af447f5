"""tcompact.compaction: the options and their checks, the chain over one transcript (nothing written),
where a run writes and the check before any work, writing the run's files, and the whole job."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, SESSION, FakeSummarizer, jsonl, msg

from tcompact.compaction import (CompactJob, CompactOptions, OutputPaths, check_paths, compact_file, compact_source,
                                 default_paths, run_failure, run_job, strict_failure, write_run)
from tcompact.compressors import parse_sets
from tcompact.errors import InputError, NotATranscriptError, OutputError, UsageError, WorkFailed
from tcompact.formats import ReadOptions, read_file
from tcompact.summarizers.base import SummarizerError

CHAT = SAMPLES / "chat_tool_session.jsonl"
CLAUDE = SAMPLES / "claude_code_session.jsonl"
CODEX = SAMPLES / "codex_rollout.jsonl"
EXISTS = "the output file exists already — pass --force to overwrite it, or choose another path"
IS_INPUT = "the output is the input file — write to another path; tcompact never replaces its input"
DIALOGUE = CompactOptions(chain="dialogue", now=True)


def _failing():
    return FakeSummarizer(SummarizerError("auth", "401 Unauthorized", status=401))


def _shape(messages):
    return [(m.role, m.text, tuple(c.id for c in m.tool_calls), m.tool_call_ids) for m in messages]


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def dialogue():
    """The chat sample compacted by a forced dialogue: one call, 33 → 17 messages."""
    return compact_file(CHAT, DIALOGUE)


# options -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("values", "error"), [
    (dict(chain="dialgue"), "unknown compressor 'dialgue' — use one of: truncate, offload, micro, "
                          "mask, current-round, dialogue, round-level, full, working-set"),
    (dict(chain=" , "), "bad compressor chain ' , ' — name one or more compressors: -c truncate,dialogue"),
    (dict(chain="truncate,"), "bad compressor chain 'truncate,' — name one or more compressors: "
                            "-c truncate,dialogue"),
    (dict(to="html"), "cannot write 'html' — use --to chat, claude-code, codex"),
    (dict(context_window=0), "--context-window must be a positive number of tokens"),
    (dict(encoding="p50k"), "unknown encoding 'p50k' — use one of: o200k_base, cl100k_base"),
    (dict(summarizer="nope"), "unknown summariser 'nope' — use extractive, openai or replay"),
    (dict(summarizer="openai"), "--summarizer openai needs --model — e.g. --model gpt-4o-mini or your "
                              "vLLM model"),
    (dict(chain="truncate", trigger_ratio=0.5), "--trigger-ratio applies to no compressor of the chain — "
     "it sets trigger_context_ratio of current-round, dialogue, round-level, full and working-set"),
    (dict(replay_dir=Path("dumps")), "--replay-dir is an option of the replay summariser, and the "
     "summariser is extractive — add --summarizer replay, or leave --replay-dir out"),
])
def test_a_bad_option_is_refused_when_the_settings_are_made(values, error):
    with pytest.raises(UsageError) as exc:
        CompactOptions(**values)
    assert (str(exc.value), exc.value.exit_code) == (error, 2)


def test_a_summariser_a_chain_does_not_call_needs_nothing():
    options = CompactOptions(chain="truncate,micro", summarizer="openai")  # no --model needed: never called
    assert (options.uses_summarizer, [c.name for c in options.compressors]) == (False, ["truncate", "micro"])


def test_the_chain_is_resolved_once_with_the_overrides_and_the_trigger_ratio():
    options = CompactOptions(chain="truncate,dialogue", overrides=parse_sets(["max_lines=20", "dialogue.summary_ratio=0.2"]),
                             trigger_ratio=0.5)
    chain, settings = options.compressors, options.settings
    assert [c.name for c in chain] == ["truncate", "dialogue"]
    assert (settings[0].max_lines, settings[1].trigger_context_ratio, settings[1].summary_ratio) == (20, 0.5, 0.2)
    assert CompactOptions(chain="dialogue").settings[0].trigger_context_ratio == 0.8


# the chain ---------------------------------------------------------------------------------------

def test_a_compacted_run_holds_everything_to_write_and_wrote_nothing(dialogue):
    run = dialogue
    assert (run.status, run.message, run.calls, run.output_format) == ("compacted", "dialogue: compacted", 1, "chat")
    assert (run.report["before"], run.report["after"], run.report["invariants"]) == (
        {"messages": 33, "tokens": 11796}, {"messages": 17, "tokens": 4964}, [])
    (stage,) = run.stages
    assert (stage.compressor.name, stage.result.applied, len(stage.before)) == ("dialogue", True, 33)
    assert stage.before == run.transcript.messages and run.messages == stage.result.messages
    back = read_file(_written(run, "out.jsonl"), ReadOptions(format="chat")).transcript()
    assert _shape(back.messages) == _shape(run.messages)
    assert run.dump_context.session == "chat_tool_session" and run.dump_context.summarizer == "extractive"
    assert [name for name, _ in run.dumps()] == [f"{int(stage.result.calls[0].started * 1000)}_dialogue_"
                                                 "chat_tool_session.json"]
    assert run.blobs == () and not CHAT.with_name("chat_tool_session.compacted.jsonl").exists()


def _written(run, name, folder=None):
    import tempfile

    path = Path(folder or tempfile.mkdtemp()) / name
    path.write_bytes(run.output.data)
    return path


def test_each_compressor_starts_from_the_one_before():
    run = compact_file(CHAT, CompactOptions(chain="truncate,dialogue", now=True,
                                            overrides=parse_sets(["truncate.max_lines=8"])))
    first, second = run.stages
    assert (run.status, run.message) == ("compacted", "truncate: truncated; dialogue: compacted")
    assert first.before == run.transcript.messages and second.before == first.result.messages
    assert first.before != second.before and run.messages == second.result.messages
    assert run.report["after"]["messages"] == len(run.messages) == 17


def test_a_failed_call_stops_the_chain_and_keeps_the_original():
    run = compact_file(CHAT, CompactOptions(chain="dialogue,truncate", now=True), summarizer=_failing())
    assert (run.status, run.message, run.calls) == ("failed", "dialogue: summariser failed: 401 Unauthorized", 1)
    assert [s.compressor.name for s in run.stages] == ["dialogue"]  # truncate never ran
    assert run.messages == run.transcript.messages and run.output is None and run.report["invariants"] == []


def test_nothing_to_do_says_how_to_compact_anyway_unless_forced():
    run = compact_file(CHAT, CompactOptions())
    assert (run.status, run.message, run.output, run.calls) == (
        "nothing to do", "working-set: below the threshold (11,796 < 160,000 tokens); --now compacts anyway", None,
        0)
    run = compact_file(CHAT, CompactOptions(chain="truncate", now=True,
                                            overrides=parse_sets(["max_chars=1000000", "max_lines=100000"])))
    assert (run.status, run.message) == ("nothing to do", "truncate: no tool output over the limits")


def test_an_empty_session_is_one_error_and_one_without_a_span_is_nothing_to_do(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(NotATranscriptError) as exc:
        compact_file(empty, DIALOGUE)
    assert str(exc.value) == f"{empty}: the file is empty — pass a transcript with at least one record"
    alone = jsonl(tmp_path / "system.jsonl", [msg("system", "You are a coding agent.")])
    for chain in ("dialogue", "full", "current-round"):
        run = compact_file(alone, CompactOptions(chain=chain, now=True))
        assert (run.status, run.message, run.calls) == ("nothing to do", f"{chain}: no compressible span", 0)


def test_a_transcript_is_chosen_by_id_and_named_in_the_dumps():
    source = read_file(CLAUDE, ReadOptions(keep_raw=True))
    assert [t.id for t in source.transcripts] == ["main", "sidechain-26dd4578"]
    sub = compact_source(source, CompactOptions(chain="truncate", now=True, transcript="sidechain-26dd4578",
                                                overrides=parse_sets(["max_lines=8"])))
    assert (sub.transcript.id, sub.output_format) == ("sidechain-26dd4578", "claude-code")
    assert sub.dump_context.session == "8d2f6c1e-4b7a-4e59-9c3d-5a1e7f0b2c64-sidechain-26dd4578"
    assert sub.dump_context.source["transcript"] == "sidechain-26dd4578"
    with pytest.raises(UsageError) as exc:
        compact_source(source, CompactOptions(transcript="nope"))
    assert str(exc.value) == f"{CLAUDE}: no transcript 'nope' in this file — choose one of: main, sidechain-26dd4578"


def test_an_output_format_that_cannot_hold_the_result_is_refused():
    with pytest.raises(UsageError) as exc:
        compact_file(CHAT, dataclasses.replace(DIALOGUE, to="claude-code"))
    assert str(exc.value) == ("claude-code cannot represent the compacted transcript: message 0 (system): Claude Code "
                              "sessions have no system messages — write it with --to chat")
    run = compact_file(CHAT, dataclasses.replace(DIALOGUE, to="codex"))
    assert (run.status, run.output_format, run.report["output_format"], run.report["notes"]) == (
        "compacted", "codex", "codex", [])
    back = read_file(_written(run, "out.jsonl"), ReadOptions(format="codex")).transcript()
    assert [m.text for m in back.messages if m.role == "user"] == [m.text for m in run.messages if m.role == "user"]


def test_a_read_only_format_is_written_as_chat():
    swe = SAMPLES.parent / "tests" / "fixtures" / "swe_agent_small.traj"
    run = compact_file(swe, CompactOptions(chain="full", now=True))
    assert (run.source.format, run.status, run.output_format, run.report["output_format"]) == (
        "swe-agent", "compacted", "chat", "chat")
    assert (run.report["before"], run.report["after"], run.dump_context.session) == (
        {"messages": 16, "tokens": 1454}, {"messages": 3, "tokens": 682}, "swe_agent_small")
    back = read_file(_written(run, "out.jsonl"), ReadOptions(format="chat")).transcript()
    assert _shape(back.messages) == _shape(run.messages)


def test_an_offloaded_original_is_stored_with_its_source_lines():
    run = compact_file(CHAT, CompactOptions(chain="offload", now=True, offload_dir="/store"))
    ((path, doc),) = run.blobs
    handle = doc["offload_handle"]
    assert path == f"/store/{handle}.json" and handle in run.output.data.decode()
    assert doc["source"] == {"path": str(CHAT), "format": "chat", "records": [10],
                             "raw": [CHAT.read_text().splitlines(keepends=True)[10]]}
    assert [m["tool_call_id"] for m in doc["messages"]] == ["call_005"]


# where a run writes ------------------------------------------------------------------------------

def test_default_paths_sit_next_to_the_output():
    assert default_paths(Path("in/s.jsonl"), output=None, dump_dir=None, store=None, report=None) == OutputPaths(
        Path("in/s.compacted.jsonl"), Path("in/s.compacted.dumps"), Path("in/s.compacted.offload"),
        Path("in/s.compacted.report.json"))
    assert default_paths(Path("s.jsonl"), output=Path("o/x.json"), dump_dir=None, store=None, report=None,
                         fmt_suffix=".json") == OutputPaths(Path("o/x.json"), Path("o/x.dumps"), Path("o/x.offload"),
                                                            Path("o/x.report.json"))
    assert default_paths(Path("s.jsonl"), output=None, dump_dir=Path("d"), store=Path("st"), report=Path("r.json")
                         ) == OutputPaths(Path("s.compacted.jsonl"), Path("d"), Path("st"), Path("r.json"))


def test_check_paths_refuses_an_existing_output_the_input_and_an_unwritable_folder(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"{}\n")
    paths = default_paths(source, output=None, dump_dir=None, store=None, report=None)
    check_paths(paths, source=source, force=False)
    assert _files(tmp_path) == ["in.jsonl"]  # the probe leaves nothing
    paths.report.write_bytes(b"old")
    with pytest.raises(OutputError) as exc:
        check_paths(paths, source=source, force=False)
    assert str(exc.value) == f"{paths.report}: {EXISTS}"
    check_paths(paths, source=source, force=True)
    for same in (dataclasses.replace(paths, output=source), dataclasses.replace(paths, report=source)):
        with pytest.raises(OutputError) as exc:
            check_paths(same, source=source, force=True)
        assert str(exc.value) == f"{source}: {IS_INPUT}"
    check_paths(dataclasses.replace(paths, report=None), source=source, force=False)  # --no-report: nothing to check
    (tmp_path / "file").write_bytes(b"")
    for bad in (dataclasses.replace(paths, dump_dir=tmp_path / "file"),
                dataclasses.replace(paths, store=tmp_path / "file" / "store"),
                dataclasses.replace(paths, output=tmp_path / "file" / "out.jsonl")):
        with pytest.raises(OutputError) as exc:
            check_paths(bad, source=source, force=True)
        assert str(exc.value) == (f"{tmp_path / 'file'}: cannot write here: Not a directory — choose another output "
                                  "folder or fix its permissions")


SAME = "give each output its own path (-o, --report, --dump-dir, --offload-dir)"


def test_check_paths_refuses_two_outputs_at_one_path(tmp_path, monkeypatch):
    # --report at the -o path wrote the report over the compacted transcript, exit 0
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"{}\n")
    paths = default_paths(source, output=Path("o.jsonl"), dump_dir=None, store=None, report=None)
    for same, error in [
        (dataclasses.replace(paths, report=Path("o.jsonl")), f"o.jsonl: the report and the transcript would be the "
                                                             f"same path — {SAME}"),
        (dataclasses.replace(paths, report=tmp_path / "o.jsonl"), f"{tmp_path / 'o.jsonl'}: the report and the "
                                                                  f"transcript would be the same path — {SAME}"),
        (dataclasses.replace(paths, dump_dir=Path("./o.jsonl")), f"o.jsonl: the dump folder and the transcript would "
                                                                 f"be the same path — {SAME}"),
        (dataclasses.replace(paths, store=Path("o.report.json")), f"o.report.json: the offload store and the report "
                                                                  f"would be the same path — {SAME}"),
    ]:
        with pytest.raises(OutputError) as exc:
            check_paths(same, source=source, force=True)
        assert (str(exc.value), exc.value.exit_code) == (error, 2)
    check_paths(dataclasses.replace(paths, store=paths.dump_dir), source=source, force=False)  # one folder for both
    assert _files(tmp_path) == ["in.jsonl"]


# writing the run's files -------------------------------------------------------------------------

def _paths(folder: Path, report: bool = True) -> OutputPaths:
    return default_paths(CHAT, output=folder / "out.jsonl", dump_dir=None, store=None,
                         report=None if report else False)


def test_a_written_run_lists_exactly_the_files_it_wrote(dialogue, tmp_path):
    paths = _paths(tmp_path)
    written, problems = write_run(dialogue, paths, force=False, source=CHAT)
    (dump_name,) = [n for n, _ in dialogue.dumps()]
    assert (written, problems) == ([paths.dump_dir / dump_name, paths.output, paths.report], [])
    assert _files(tmp_path) == sorted(p.relative_to(tmp_path).as_posix() for p in written)
    report = orjson.loads(paths.report.read_bytes())
    assert report["outputs"] == {"transcript": str(paths.output), "dumps": [str(paths.dump_dir / dump_name)],
                                 "offload_store": None, "state": None}
    assert (report["status"], report["invariants"], report["after"]) == ("compacted", [], {"messages": 17,
                                                                                          "tokens": 4964})
    assert paths.output.read_bytes() == dialogue.output.data
    assert orjson.loads(written[0].read_bytes()) == next(dialogue.dumps())[1]
    with pytest.raises(OutputError) as exc:  # the same again, not forced
        write_run(dialogue, paths, force=False, source=CHAT)
    assert str(exc.value) == f"{paths.dump_dir / dump_name}: {EXISTS}"
    again, _ = write_run(dialogue, paths, force=True, source=CHAT)
    assert again == written and _files(tmp_path) == sorted(p.relative_to(tmp_path).as_posix() for p in written)


def test_offloaded_originals_are_written_into_the_store(tmp_path):
    paths = _paths(tmp_path)
    run = compact_file(CHAT, CompactOptions(chain="offload", now=True, offload_dir=str(paths.store)))
    written, _ = write_run(run, paths, force=False, source=CHAT)
    (blob_path, blob), = run.blobs
    assert written == [Path(blob_path), paths.output, paths.report] and Path(blob_path).parent == paths.store
    assert orjson.loads(Path(blob_path).read_bytes()) == blob
    assert orjson.loads(paths.report.read_bytes())["outputs"] == {"transcript": str(paths.output), "dumps": [],
                                                                  "offload_store": str(paths.store), "state": None}


def test_nothing_to_do_writes_only_the_dumps_of_the_calls_it_made(tmp_path):
    source = jsonl(tmp_path / "s.jsonl", SESSION)
    paths = default_paths(source, output=None, dump_dir=None, store=None, report=None)
    refused = compact_file(source, DIALOGUE)  # one call, its summary refused as no smaller
    assert (refused.status, refused.calls) == ("nothing to do", 1)
    written, problems = write_run(refused, paths, force=False, source=source)
    assert (len(written), written[0].parent, problems) == (1, paths.dump_dir, [])
    assert _files(tmp_path) == ["s.compacted.dumps/" + written[0].name, "s.jsonl"]
    shutil.rmtree(paths.dump_dir)
    untouched = compact_file(source, CompactOptions(chain="truncate", now=True))
    assert write_run(untouched, paths, force=False, source=source) == ([], [])
    assert _files(tmp_path) == ["s.jsonl"]


def test_a_failed_run_writes_its_dumps_and_report_and_no_transcript(tmp_path):
    run = compact_file(CHAT, DIALOGUE, summarizer=_failing())
    paths = _paths(tmp_path)
    written, problems = write_run(run, paths, force=False, source=CHAT)
    assert ([p.parent for p in written], problems) == ([paths.dump_dir, tmp_path], [])
    assert written[1] == paths.report and not paths.output.exists()
    report = orjson.loads(paths.report.read_bytes())
    assert (report["status"], report["outputs"]["transcript"], len(report["outputs"]["dumps"])) == ("failed", None, 1)


def test_without_a_report_path_no_report_is_written(dialogue, tmp_path):
    paths = dataclasses.replace(_paths(tmp_path), report=None)
    written, _ = write_run(dialogue, paths, force=False, source=CHAT)
    assert [p.name for p in written][1:] == ["out.jsonl"] and not (tmp_path / "out.report.json").exists()


def _not_reading_back(run):
    """The run with its output's last line cut off: a file that does not read as the compacted messages."""
    data = run.output.data.rstrip(b"\n").rsplit(b"\n", 1)[0] + b"\n"
    return dataclasses.replace(run, output=dataclasses.replace(run.output, data=data))


MISMATCH = "the output does not read back as the compacted messages"


def test_an_output_that_does_not_read_back_is_not_written_unless_allowed(dialogue, tmp_path):
    run = _not_reading_back(dialogue)
    paths = _paths(tmp_path)
    paths.output.write_bytes(b"kept\n")
    for strict, allow in ((False, False), (True, False), (True, True)):
        written, problems = write_run(run, paths, force=True, source=CHAT, strict=strict, allow_mismatch=allow)
        assert (paths.output in written, problems) == (False, [MISMATCH])
        assert paths.output.read_bytes() == b"kept\n"
        report = orjson.loads(paths.report.read_bytes())
        assert (report["invariants"], report["outputs"]["transcript"]) == ([MISMATCH], None)
    written, problems = write_run(run, paths, force=True, source=CHAT, allow_mismatch=True)
    assert (paths.output in written, problems) == (True, [MISMATCH])
    assert paths.output.read_bytes() == run.output.data
    assert orjson.loads(paths.report.read_bytes())["outputs"]["transcript"] == str(paths.output)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_strict_writes_no_transcript_for_a_broken_invariant(dialogue, tmp_path):
    run = dataclasses.replace(dialogue, report={**dialogue.report, "invariants": ["a tool call lost its result"]})
    paths = _paths(tmp_path)
    written, problems = write_run(run, paths, force=False, source=CHAT, strict=True)
    assert (paths.output in written, problems, len(written)) == (False, ["a tool call lost its result"], 2)
    written, problems = write_run(run, paths, force=True, source=CHAT)  # not strict: written, and said
    assert (paths.output in written, problems) == (True, ["a tool call lost its result"])


# the job -----------------------------------------------------------------------------------------

class Heard:
    def __init__(self):
        self.warnings, self.skipped = [], []

    def run(self, job):
        return run_job(job, warn=self.warnings.append, warn_skipped=lambda p, s: self.skipped.append((p, list(s))))


def _copy(tmp_path, source=CHAT):
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    return path


def test_a_job_writes_the_run_and_its_document_says_what(tmp_path):
    source = _copy(tmp_path)
    heard = Heard()
    out = heard.run(CompactJob(source, DIALOGUE))
    stem = tmp_path / "chat_tool_session.compacted"
    assert (out.run.status, out.failure, out.problems, out.dry_run, out.stored, out.session, out.page) == (
        "compacted", None, (), False, False, None, None)
    assert out.paths == OutputPaths(Path(f"{stem}.jsonl"), Path(f"{stem}.dumps"), Path(f"{stem}.offload"),
                                    Path(f"{stem}.report.json"))
    assert _files(tmp_path) == sorted(p.relative_to(tmp_path).as_posix() for p in (*out.written, source))
    doc = out.document()
    assert (doc["written"], doc["dry_run"], doc["invariants"], doc["status"], "session" in doc) == (
        [str(p) for p in out.written], False, [], "compacted", False)
    assert (heard.warnings, heard.skipped) == ([], [(str(source), [])])
    # the offload store is named absolute: the run's markers point at it from wherever the agent resumes
    assert out.run.stages[0].result.processor == "dialogue" and Path(out.run.dump_context.source["path"]) == source


def test_a_dry_run_writes_nothing_and_checks_no_output(tmp_path):
    source = _copy(tmp_path)
    (tmp_path / "chat_tool_session.compacted.jsonl").write_bytes(b"kept\n")  # would be refused if written
    out = Heard().run(CompactJob(source, DIALOGUE, dry_run=True))
    assert (out.written, out.failure, out.dry_run, out.run.status) == ((), None, True, "compacted")
    assert out.document()["dry_run"] is True and out.document()["written"] == []
    assert _files(tmp_path) == ["chat_tool_session.compacted.jsonl", "chat_tool_session.jsonl"]
    assert (tmp_path / "chat_tool_session.compacted.jsonl").read_bytes() == b"kept\n"


@pytest.mark.parametrize(("make", "error"), [
    (lambda t: t / "missing.jsonl", "{p}: no such file — pass the transcript file to compact"),
    (lambda t: t, "{p}: is a folder — pass the transcript file to compact"),
])
def test_a_job_without_a_transcript_file_is_one_error(tmp_path, make, error):
    path = make(tmp_path)
    with pytest.raises(InputError) as exc:
        Heard().run(CompactJob(path, DIALOGUE))
    assert (str(exc.value), exc.value.exit_code) == (error.format(p=path), 2)


def test_a_job_checks_options_then_the_input_then_the_outputs(tmp_path):
    source = _copy(tmp_path)
    with pytest.raises(UsageError) as exc:  # a bad option first, though the input is missing too
        Heard().run(CompactJob(tmp_path / "missing.jsonl", CompactOptions(chain="dialgue")))
    assert str(exc.value).startswith("unknown compressor 'dialgue'")
    (tmp_path / "out.jsonl").write_bytes(b"kept\n")
    with pytest.raises(OutputError) as exc:
        Heard().run(CompactJob(source, DIALOGUE, output=tmp_path / "out.jsonl"))
    assert str(exc.value) == f"{tmp_path / 'out.jsonl'}: {EXISTS}"
    with pytest.raises(OutputError) as exc:  # the input as the output, even with --force
        Heard().run(CompactJob(source, DIALOGUE, output=source, force=True))
    assert str(exc.value) == f"{source}: {IS_INPUT}"
    with pytest.raises(OutputError) as exc:  # an output folder that is a file: before any work
        Heard().run(CompactJob(source, DIALOGUE, output=tmp_path / "out.jsonl" / "x.jsonl"))
    assert str(exc.value) == (f"{tmp_path / 'out.jsonl'}: cannot write here: Not a directory — choose another output "
                              "folder or fix its permissions")
    assert _files(tmp_path) == ["chat_tool_session.jsonl", "out.jsonl"]
    assert (tmp_path / "out.jsonl").read_bytes() == b"kept\n" and source.read_bytes() == CHAT.read_bytes()


def test_a_failed_job_reports_its_failure_after_writing_the_dumps(tmp_path, monkeypatch):
    from tcompact.compaction import job as job_module

    real = job_module.compact_file
    monkeypatch.setattr(job_module, "compact_file", lambda path, options, **kw: real(path, options, summarizer=_failing(), **kw))
    source = _copy(tmp_path)
    out = Heard().run(CompactJob(source, DIALOGUE))
    assert isinstance(out.failure, WorkFailed) and out.failure.exit_code == 1
    assert str(out.failure) == ("dialogue: summariser failed: 401 Unauthorized — the input is untouched; the failed "
                                f"call(s) are dumped in {out.paths.dump_dir}")
    assert [p.parent for p in out.written] == [out.paths.dump_dir, tmp_path]
    assert source.read_bytes() == CHAT.read_bytes()
    dry = Heard().run(CompactJob(source, DIALOGUE, dry_run=True))
    assert str(dry.failure) == "dialogue: summariser failed: 401 Unauthorized — the input is untouched"


def test_a_job_whose_output_does_not_read_back_fails_and_strict_says_why(tmp_path, monkeypatch):
    from tcompact.compaction import job as job_module

    real = job_module.compact_file
    monkeypatch.setattr(job_module, "compact_file", lambda path, options, **kw: _not_reading_back(real(path, options, **kw)))
    source = _copy(tmp_path)
    heard = Heard()
    out = heard.run(CompactJob(source, DIALOGUE))
    assert (out.problems, heard.warnings) == ((MISMATCH,), [f"invariant: {MISMATCH}"])
    assert str(out.failure) == (f"{out.paths.output}: the compaction was not written: {MISMATCH} — nothing was "
                                "replaced; the report says why (--allow-read-back-mismatch writes it anyway)")
    strict = Heard().run(CompactJob(source, DIALOGUE, strict=True, force=True))
    assert str(strict.failure) == (f"the compaction breaks 1 invariant(s): {MISMATCH} — the compacted transcript was "
                                   "not written (--strict)")
    allowed = Heard().run(CompactJob(source, DIALOGUE, allow_mismatch=True, force=True))
    assert (allowed.failure, allowed.paths.output in allowed.written) == (None, True)


def test_a_job_warns_the_lines_it_skipped_and_what_the_format_leaves_out(tmp_path):
    source = tmp_path / "rollout.jsonl"
    source.write_bytes(CODEX.read_bytes() + b"{not json\n")
    options = CompactOptions(chain="truncate", now=True, to="chat", overrides=parse_sets(["max_lines=8"]),
                             read=ReadOptions(skip_bad_lines=True))
    heard = Heard()
    out = heard.run(CompactJob(source, options, output=tmp_path / "out.jsonl"))
    assert out.failure is None and heard.skipped == [(str(source), list(out.run.source.skipped))]
    assert [line for line, _ in heard.skipped[0][1]] == [50]
    assert heard.warnings == out.run.report["notes"][1:] and heard.warnings[-1] == (
        "4 encrypted reasoning item(s) are opaque and cannot be carried over")
    # issue 23 item 2: the report says where the skipped line went (stderr said it was skipped, just before)
    assert out.run.report["notes"][0] == ("1 line(s) skipped in reading as unreadable (50) are not in the output (a "
                                          "chat file has no place for them) (line 50: not valid JSON (unexpected "
                                          "character, expected a string key at column 2))")


def test_fork_and_in_place_exclude_each_other(tmp_path):
    with pytest.raises(UsageError) as exc:
        Heard().run(CompactJob(None, DIALOGUE, fork=True, in_place=True))
    assert str(exc.value) == "--fork and --in-place exclude each other — choose one of them"


def test_strict_failure_and_run_failure(dialogue, tmp_path):
    assert strict_failure([]) is None
    failure = strict_failure(["one", "two"])
    assert (str(failure), failure.exit_code) == (
        "the compaction breaks 2 invariant(s): one — the compacted transcript was not written (--strict)", 1)
    paths = _paths(tmp_path)
    assert run_failure(dialogue, paths, dry_run=False) is None
    failed = dataclasses.replace(dialogue, status="failed", message="dialogue: boom", stages=())
    assert str(run_failure(failed, paths, dry_run=False)) == "dialogue: boom — the input is untouched"  # no call made
    assert str(run_failure(failed, paths, dry_run=True)) == "dialogue: boom — the input is untouched"
    with_call = dataclasses.replace(dialogue, status="failed", message="dialogue: boom")
    assert (str(run_failure(with_call, paths, dry_run=False)), run_failure(with_call, paths, dry_run=False).exit_code) == (
        f"dialogue: boom — the input is untouched; the failed call(s) are dumped in {paths.dump_dir}", 1)


def test_an_existing_dump_folder_is_reused_and_keeps_what_it_holds(dialogue, tmp_path):
    paths = _paths(tmp_path)
    paths.dump_dir.mkdir()
    (paths.dump_dir / "earlier.json").write_bytes(b"{}")
    written, _ = write_run(dialogue, paths, force=False, source=CHAT)
    assert sorted(p.name for p in paths.dump_dir.iterdir()) == sorted(["earlier.json", written[0].name])
    assert (paths.dump_dir / "earlier.json").read_bytes() == b"{}"


@pytest.mark.parametrize(("args", "error"), [
    (["-o", "d"], "d: the output path is a folder — name a file, not a folder"),
    (["-o", "out.jsonl", "--report", "d"], "d: the output path is a folder — name a file, not a folder"),
    (["-o", "f/out.jsonl"], "f: cannot write here: Not a directory — choose another output folder or fix its "
                            "permissions"),
    (["-o", "out.jsonl", "--report", "f/r.json"], "f: cannot write here: Not a directory — choose another output "
                                                  "folder or fix its permissions"),
    (["-o", "out.jsonl", "--dump-dir", "f"], "f: cannot write here: Not a directory — choose another output folder "
                                             "or fix its permissions"),
    (["-o", "out.jsonl", "--report", "out.jsonl"], f"out.jsonl: the report and the transcript would be the same path "
                                                   f"— {SAME}"),
    (["-o", "out.jsonl", "--dump-dir", "out.jsonl"], f"out.jsonl: the dump folder and the transcript would be the "
                                                     f"same path — {SAME}"),
])
def test_compact_refuses_an_output_it_cannot_write_before_any_work(tmp_path, monkeypatch, args, error):
    # all were found only after the run (its dumps and transcript written, then exit 2 on the report), or
    # not at all: a --report at the -o path replaced the compacted transcript, exit 0
    from typer.testing import CliRunner

    from tcompact.app import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_bytes(b"kept")
    result = CliRunner().invoke(app, ["compact", str(CHAT), "-c", "dialogue", "--now", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {error}\n")
    assert _files(tmp_path) == ["f"] and list((tmp_path / "d").iterdir()) == []
    assert (tmp_path / "f").read_bytes() == b"kept"


def test_a_job_writes_its_html_page_last_and_a_dry_run_writes_only_the_page(tmp_path):
    source = _copy(tmp_path)
    out = Heard().run(CompactJob(source, DIALOGUE, html=tmp_path / "r.html"))
    assert (out.page, out.written[-1], out.failure) == (tmp_path / "r.html", tmp_path / "r.html", None)
    page = out.page.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and out.paths.output.name in page  # it links the run's outputs
    dry = Heard().run(CompactJob(source, DIALOGUE, html=tmp_path / "dry.html", dry_run=True))
    assert (dry.written, dry.page) == ((tmp_path / "dry.html",), tmp_path / "dry.html")


def test_a_job_refuses_a_page_that_would_replace_an_input_or_an_output_before_any_work(tmp_path):
    source = _copy(tmp_path)
    for html, force, error in [
        (source, True, f"{source}: the HTML report would replace the input or another output — choose another path "
                       "for --html"),
        (tmp_path / "chat_tool_session.compacted.jsonl", True, f"{tmp_path / 'chat_tool_session.compacted.jsonl'}: "
         "the HTML report would replace the input or another output — choose another path for --html"),
        (tmp_path / "chat_tool_session.compacted.dumps", True, f"{tmp_path / 'chat_tool_session.compacted.dumps'}: "
         "the HTML report would replace the input or another output — choose another path for --html"),  # it failed
        # only after the run, its outputs written, on the dump folder it had made where the page was to go
        (tmp_path / "no" / "r.html", True, f"{tmp_path / 'no'}: the output folder does not exist — create it first"),
        (tmp_path, True, f"{tmp_path}: the HTML report path is a folder — name a file, e.g. report.html"),
        (tmp_path / "old.html", False, f"{tmp_path / 'old.html'}: {EXISTS}"),
    ]:
        (tmp_path / "old.html").write_text("old")
        with pytest.raises(OutputError) as exc:
            Heard().run(CompactJob(source, DIALOGUE, html=html, force=force))
        assert str(exc.value) == error
        assert _files(tmp_path) == ["chat_tool_session.jsonl", "old.html"]
