"""Fuzzing read → inspect → compact → replay --verify with mutated transcripts, through the real CLI.

Every mutation of ``fuzz_mutations`` is applied to small files of every format (the samples, the
real transcripts of ../shared/transcripts — the big ones cut to a prefix of lines — and a chat
JSON document). Each case writes the mutated file, runs in-process ``inspect --json``, then
``compact`` with one compressor (extractive summariser, ``--force``) and ``replay --verify`` over
the dumps it wrote. The oracle: exit 0, or a non-zero exit (not 70, the internal-error code) with
exactly one ``Error: …`` line on stderr that names the file and holds no traceback; when compact
succeeds, its report lists no broken invariant, the written transcript reads back keeping every
tool pair, system message and the last user request, and the input is byte-identical.

The tables of ``inspect`` are rendered too, and about a third of the cases read with
``--skip-bad-lines``. The default run checks a fixed sample covering every operator × format, every
compressor and both read modes; the hypothesis test feeds records of the right shape with odd
values. The long run (``python -m pytest -m slow tests/test_fuzz.py -s``; TCOMPACT_FUZZ_CASES sets
its size, 10 000 by default, TCOMPACT_FUZZ_SEED its seed) picks random files, operators (sometimes
two at once), compressors and read modes, and prints the count of every operator × outcome.
After them, one regression test per bug the fuzzing found.
"""

from __future__ import annotations

import collections
import json
import os
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from conftest import REAL_FILES, SAMPLES, SHARED
from fuzz_mutations import OPERATORS, lines_of, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tcompact.app import app
from tcompact.compressors._edit import CUT_MARK
from tcompact.formats import ReadOptions, read_file
from tcompact.compaction.invariants import violations
from tcompact.rounds import last_real_user_index

COMPRESSORS = ("truncate", "offload", "micro", "current-round", "dialogue", "full", "round-level")
# small enough limits that every compressor has something to do on a small file
SETS = {
    "truncate": ["truncate.max_chars=300", "truncate.max_lines=8"],
    "offload": ["offload.tokens_threshold=0", "offload.large_message_tokens=40", "offload.protected_tools=[]"],
    "micro": ["micro.keep_recent_per_tool=1", "micro.min_tokens=10"],
    "round-level": ["round-level.first_pass_target_tokens=300"],
}
PREFIX_LINES = 40  # big real files are cut to this many lines
FIXTURES = Path(__file__).parent / "fixtures"


def _chat_document() -> bytes:
    """The chat sample as one JSON array of messages (the document form of the chat format)."""
    lines = (SAMPLES / "chat_tool_session.jsonl").read_bytes().splitlines()
    return orjson.dumps([orjson.loads(x) for x in lines if x.strip()], option=orjson.OPT_INDENT_2) + b"\n"


def _real(name: str) -> bytes | None:
    path = SHARED / REAL_FILES[name]
    if not path.exists():
        return None
    data = path.read_bytes()
    return data if path.suffix == ".traj" else b"".join(lines_of(data)[:PREFIX_LINES])


def bases() -> dict[str, tuple[str, bytes]]:
    """name -> (format, bytes) of every base file found (real ones only when ../shared is there)."""
    found = {
        "chat_sample": ("chat", (SAMPLES / "chat_tool_session.jsonl").read_bytes()),
        "chat_document": ("chat", _chat_document()),
        "claude_sample": ("claude-code", (SAMPLES / "claude_code_session.jsonl").read_bytes()),
        "codex_sample": ("codex", (SAMPLES / "codex_rollout.jsonl").read_bytes()),
        "sweagent_sample": ("swe-agent", (FIXTURES / "swe_agent_small.traj").read_bytes()),
    }
    for key, fmt in (("sweagent", "swe-agent"), ("ccviewer", "claude-code"), ("drmaciver", "claude-code"),
                     ("codemie", "claude-code"), ("codex", "codex")):
        data = _real(key)
        if data is not None:
            found[f"real_{key}"] = (fmt, data)
    return found


BASES = bases()
SUFFIX = {"swe-agent": ".traj"}


@dataclass
class Outcome:
    kind: str  # "ok" or "clean error"
    detail: str = ""


class Failure(AssertionError):
    pass


def _check_error(result, name: str, step: str) -> str:
    """The error of a failed command: exactly one clean line naming the file; raises Failure otherwise."""
    err = result.stderr
    lines = [x for x in err.splitlines() if not SKIPPED.search(x)]  # what --skip-bad-lines asked to hear
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise Failure(f"{step}: exception {type(result.exception).__name__}: {result.exception}")
    if result.exit_code == 70:
        raise Failure(f"{step}: internal error: {err.strip()}")
    if len(lines) != 1 or not err.endswith("\n") or not lines[0].startswith("Error: "):
        raise Failure(f"{step}: exit {result.exit_code} with {len(lines)} stderr line(s): {err[:2000]!r}")
    if "Traceback" in err or 'File "' in err:
        raise Failure(f"{step}: a traceback in the error: {err[:2000]!r}")
    if name not in lines[0]:
        raise Failure(f"{step}: the error does not name {name}: {lines[0][:500]!r}")
    return lines[0]


def _ok(result, step: str) -> None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise Failure(f"{step}: exception {type(result.exception).__name__}: {result.exception}")
    if "Traceback" in result.stderr:
        raise Failure(f"{step}: a traceback on stderr: {result.stderr[:2000]!r}")


def run_case(runner: CliRunner, folder: Path, fmt: str, data: bytes, compressor: str, skip: bool = False) -> Outcome:
    """Run the pipeline over ``data`` (with --skip-bad-lines when ``skip``); the outcome, or Failure naming what broke."""
    name = f"case{SUFFIX.get(fmt, '.jsonl')}"
    source = folder / name
    source.write_bytes(data)
    try:
        return _pipeline(runner, folder, source, name, compressor, skip)
    finally:
        if source.read_bytes() != data:
            raise Failure("the input file was modified")


def _warnings(result, skip: bool) -> list[str]:
    """Warning lines on stderr, but the skipped-lines notice --skip-bad-lines asks for."""
    return [x for x in result.stderr.splitlines() if not (skip and SKIPPED.search(x))]


SKIPPED = re.compile(r"^Warning: .*: skipped \d+ bad line\(s\)")


def _pipeline(runner: CliRunner, folder: Path, source: Path, name: str, compressor: str, skip: bool) -> Outcome:
    flags = ["--skip-bad-lines"] if skip else []
    result = runner.invoke(app, ["inspect", str(source), "--json", *flags])
    _ok(result, "inspect")
    if result.exit_code != 0:
        return Outcome("clean error", _check_error(result, name, "inspect"))
    report = orjson.loads(result.stdout)
    if report["errors"] or len(report["files"]) != 1 or sum(t["messages"] for t in report["files"][0]["transcripts"]) < 1:
        raise Failure(f"inspect: exit 0 but the report says {report['errors']} / {len(report['files'])} file(s)")
    if _warnings(result, skip):
        raise Failure(f"inspect: exit 0 with warnings: {result.stderr[:2000]!r}")
    result = runner.invoke(app, ["inspect", str(source), *flags])  # the tables too
    _ok(result, "inspect (tables)")
    if result.exit_code != 0 or _warnings(result, skip):
        raise Failure(f"inspect (tables): exit {result.exit_code} after --json read the file: {result.stderr[:2000]!r}")

    out, dumps, rep = folder / "out.jsonl", folder / "dumps", folder / "report.json"
    args = ["compact", str(source), "-c", compressor, "--now", "-o", str(out), "--dump-dir", str(dumps),
            "--report", str(rep), "--offload-dir", str(folder / "store"), "--json", *flags]
    for s in SETS.get(compressor, []):
        args += ["--set", s]
    result = runner.invoke(app, args)
    _ok(result, "compact")
    if result.exit_code != 0:
        return Outcome("clean error", _check_error(result, name, "compact"))
    summary = orjson.loads(result.stdout)
    if rep.exists() == (summary["status"] == "nothing to do"):  # "nothing to do" writes no report
        raise Failure(f"compact: status {summary['status']!r} and the report {'is' if rep.exists() else 'is not'} "
                      "written")
    if rep.exists():
        summary = orjson.loads(rep.read_bytes())  # with the read-back check of the written transcript
    if _warnings(result, skip):
        raise Failure(f"compact: exit 0 with warnings: {result.stderr[:2000]!r}")
    if summary["invariants"]:
        raise Failure(f"compact: invariants broken: {summary['invariants']}")
    if summary["status"] == "compacted":
        _check_output(source, out, summary, compressor, skip)
    elif out.exists():
        raise Failure(f"compact: status {summary['status']!r} but a transcript was written")

    if dumps.exists() and any(dumps.iterdir()):
        result = runner.invoke(app, ["replay", str(dumps), "--verify"])
        _ok(result, "replay")
        if result.exit_code != 0:
            raise Failure(f"replay --verify: exit {result.exit_code}: {(result.stdout + result.stderr)[-2000:]!r}")
    return Outcome("ok", summary["status"])


def _check_output(source: Path, out: Path, summary: dict, compressor: str, skip: bool) -> None:
    """The compacted transcript reads back and keeps what every compaction must keep."""
    read = read_file(source, ReadOptions(skip_bad_lines=skip))
    before = read.transcript(None)
    again = read_file(out, ReadOptions(format=summary.get("output_format") or None, skip_bad_lines=skip))
    bad_in = {read.records[n].raw.rstrip(b"\r\n") for n, r in enumerate(read.records) if r.line in dict(read.skipped)}
    bad_out = [r.raw for r in again.records if r.line in dict(again.skipped)]
    if any(raw.rstrip(b"\r\n") not in bad_in for raw in bad_out):
        raise Failure(f"compact: the output has bad lines that are not skipped lines of the input: {bad_out[:3]!r}")
    (after,) = [t for t in again.transcripts if t.id == before.id] or again.transcripts[:1]
    found = violations(before.messages, after.messages)
    lost = "the last real user request is not kept verbatim"
    if compressor in ("full", "round-level") and lost in found:  # may cut an over-budget request: head and mark kept
        request = before.messages[last_real_user_index(before.messages)].text
        if any(m.text.startswith(request[:200]) and CUT_MARK in m.text for m in after.messages):
            found.remove(lost)
    if found:
        raise Failure(f"compact: the output read back breaks {found}")
    if not summary["after"]["tokens"] < summary["before"]["tokens"]:
        raise Failure(f"compact: not smaller: {summary['before']} -> {summary['after']}")


def _case_folder(tmp_path: Path, n: int) -> Path:
    folder = tmp_path / f"c{n}"
    folder.mkdir()
    return folder


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("TCOMPACT_DEBUG", raising=False)
    return CliRunner()


# -- the default sample: every operator × every format, every compressor --------------------------

# the real SWE-agent trajectory, or in a clone without ../shared a small one of tests/fixtures
DEFAULT_BASES = ["chat_sample", "chat_document", "claude_sample", "codex_sample",
                 "real_sweagent" if "real_sweagent" in BASES else "sweagent_sample"]
DEFAULT_CASES = [(op, base, COMPRESSORS[(i * 3 + j) % len(COMPRESSORS)], (i + j) % 3 == 0)
                 for i, op in enumerate(OPERATORS) for j, base in enumerate(DEFAULT_BASES)]


# what some operators must give on every base of the sample (the others depend on where they strike)
EXPECTED = {"crlf": "ok", "duplicate_id": "ok",
            "empty": "case.{}: the file is empty — pass a transcript with at least one record",
            "whitespace_only": "case.{}: the file is empty — pass a transcript with at least one record",
            "invalid_utf8": "bytes that are not UTF-8 ("}


@pytest.mark.parametrize("op,base,compressor,skip", DEFAULT_CASES)
def test_mutated_file_gives_output_or_one_clean_error(runner, tmp_path, op, base, compressor, skip):
    fmt, data = BASES[base]
    seed = sum(map(ord, op + base))  # fixed (hash() would follow PYTHONHASHSEED)
    mutated = mutate(data, op, seed)
    outcome = run_case(runner, tmp_path, fmt, mutated, compressor, skip)
    if op in EXPECTED:
        expected = EXPECTED[op].format(SUFFIX.get(fmt, ".jsonl")[1:])
        assert outcome.kind == "ok" if expected == "ok" else expected in outcome.detail, outcome


def test_default_sample_covers_every_operator_format_and_compressor():
    assert {op for op, _, _, _ in DEFAULT_CASES} == set(OPERATORS)
    assert {BASES[b][0] for _, b, _, _ in DEFAULT_CASES} == {"chat", "claude-code", "codex", "swe-agent"}
    assert {c for _, _, c, _ in DEFAULT_CASES} == set(COMPRESSORS)
    assert {s for _, _, _, s in DEFAULT_CASES} == {True, False}


def test_unmutated_bases_compact_with_every_compressor(runner, tmp_path):
    """The oracle passes the bases as they are (so a fuzz failure is the mutation's doing)."""
    outcomes = collections.Counter()
    for n, (name, (fmt, data)) in enumerate(sorted(BASES.items())):
        if not name.endswith("sample"):
            continue
        for compressor in COMPRESSORS:
            outcome = run_case(runner, _case_folder(tmp_path, n * 10 + COMPRESSORS.index(compressor)), fmt, data,
                               compressor)
            outcomes[outcome.detail] += 1
    # dialogue declines the Claude sample: its history before the last request is one earlier compact
    # summary, and a dialogue summary of it would keep too few of its facts (the benefit check); on the
    # SWE-agent one (one request) dialogue's summary is no smaller, and micro finds no older result to clear
    assert outcomes == {"compacted": 25, "nothing to do": 3}


# -- the long run ---------------------------------------------------------------------------------

def _long_cases(count: int, seed: int):
    rng = random.Random(seed)
    names, ops = sorted(BASES), sorted(OPERATORS)
    for n in range(count):
        op = rng.choice(ops)
        if rng.random() < 0.15:
            op = f"{op}+{rng.choice(ops)}"
        yield n, op, rng.choice(names), rng.choice(COMPRESSORS), rng.random() < 0.3, rng.randrange(1 << 30)


@pytest.mark.slow
def test_long_fuzz_run(runner, tmp_path):
    count = int(os.environ.get("TCOMPACT_FUZZ_CASES", "10000"))
    seed = int(os.environ.get("TCOMPACT_FUZZ_SEED", "20261130"))
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    reasons: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures: list[str] = []
    started = time.monotonic()
    for n, op, base, compressor, skip, case_seed in _long_cases(count, seed):
        fmt, data = BASES[base]
        folder = _case_folder(tmp_path, n)
        try:
            result = run_case(runner, folder, fmt, mutate(data, op, case_seed), compressor, skip)
            outcome = result.kind
            if outcome == "clean error":  # the error, without file, line and hint
                reasons[op if "+" not in op else "combined"][re.sub(r"^Error: \S+?(:\d+)?: ", "", result.detail)
                                                             .split(" — ")[0][:70]] += 1
        except Exception as exc:  # Failure, or a bug of the harness itself: both reported, the run goes on
            outcome = "failure"
            failures.append(f"case {n}: {op} on {base} with {compressor}{' --skip-bad-lines' * skip} "
                            f"(seed {case_seed}): {type(exc).__name__}: {exc}"[:1500])
            print("FAIL", failures[-1], flush=True)
        table[op if "+" not in op else "combined"][outcome] += 1
        table["ALL"][outcome] += 1
        _remove(folder)
    elapsed = time.monotonic() - started
    print(f"\nfuzz: {count} cases in {elapsed:.0f} s (seed {seed})")
    print(f"{'operator':<18}{'ok':>8}{'clean error':>13}{'failure':>9}")
    for key in sorted(table, key=lambda k: (k == "ALL", k)):
        c = table[key]
        print(f"{key:<18}{c['ok']:>8}{c['clean error']:>13}{c['failure']:>9}")
    print("most frequent clean errors:")
    for key in sorted(reasons):
        print(f"  {key}: " + "; ".join(f"{n}× {r}" for r, n in reasons[key].most_common(3)))
    assert not failures, f"{len(failures)} failing case(s); first: {failures[0]}"


def _remove(folder: Path) -> None:
    for p in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        p.rmdir() if p.is_dir() else p.unlink()
    folder.rmdir()


# -- hypothesis: structured records with odd values -----------------------------------------------
# Records of the right shape, each field now and then replaced by an odd value: the readers must
# take them or refuse them in one line, and what they take must compact and replay.

ODD = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
    st.sampled_from(["", "\u0000", "\u202e", "\ud800", "😀", "<system-reminder>x</system-reminder>", "[]", "{}",
                     "null", "\r\n", "a" * 3000]),
    st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
WORDS = st.lists(st.sampled_from(["fix", "the", "bug", "in", "módulo", "函数", "😀", "\n", "\t", "<tag>", "{}",
                                  "\"quoted\"", "\\", "x" * 50]), min_size=1, max_size=30).map(" ".join)
TEXT = st.one_of(WORDS, WORDS.map(lambda w: w * 40), st.text(max_size=80))


@st.composite
def maybe(draw, strategy, odds=12):
    """Mostly a value of ``strategy``; one time in ``odds`` an odd value of any type."""
    return draw(ODD) if draw(st.integers(min_value=1, max_value=odds)) == 1 else draw(strategy)


@st.composite
def chat_records(draw):
    out = [{"role": "system", "content": draw(maybe(TEXT))}] if draw(st.booleans()) else []
    pending: list = []
    for step in range(draw(st.integers(min_value=2, max_value=30))):
        kind = draw(st.sampled_from(["user", "call", "result", "result", "answer"]))
        if kind == "user":
            out.append({"role": draw(maybe(st.just("user"))), "content": draw(maybe(TEXT))})
        elif kind == "call":
            ids = [draw(maybe(st.sampled_from([f"c{step}_{k}", "dup", ""]))) for k in range(draw(st.integers(1, 3)))]
            out.append({"role": "assistant", "content": draw(maybe(st.one_of(st.none(), TEXT))),
                        "tool_calls": [{"id": i, "type": "function", "function": {
                            "name": draw(maybe(st.sampled_from(["bash", "read_file", "grep"]))),
                            "arguments": draw(maybe(TEXT.map(lambda t: json.dumps({"q": t}))))}} for i in ids]})
            pending.extend(ids)
        elif kind == "result" and pending:
            out.append({"role": "tool", "tool_call_id": draw(maybe(st.just(pending.pop(0)))),
                        "content": draw(maybe(TEXT))})
        else:
            out.append({"role": "assistant", "content": draw(maybe(TEXT))})
    return out


@st.composite
def claude_records(draw):
    out = []
    parent = None
    pending: list = []
    for i in range(draw(st.integers(min_value=2, max_value=30))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "result", "system", "summary"]))
        if kind in ("user", "result"):
            if kind == "result" and pending:
                content = [{"type": "tool_result", "tool_use_id": draw(maybe(st.just(pending.pop(0)))),
                            "content": draw(maybe(st.one_of(TEXT, st.just([{"type": "text", "text": "ok"}])))),
                            "is_error": draw(maybe(st.booleans()))}]
            else:
                content = draw(maybe(st.one_of(TEXT, st.just([{"type": "text", "text": "please go on"}]))))
            message = {"role": "user", "content": content}
            kind = "user"
        elif kind in ("assistant", "call"):
            block = {"type": "text", "text": draw(maybe(TEXT))}
            if kind == "call":
                cid = draw(maybe(st.sampled_from([f"toolu_{i}", "toolu_dup"])))
                pending.append(cid)
                block = {"type": "tool_use", "id": cid, "name": draw(maybe(st.just("Bash"))),
                         "input": draw(maybe(st.fixed_dictionaries({"command": TEXT})))}
            message = {"role": "assistant", "id": draw(maybe(st.just(f"msg_{i}"))), "model": "claude-x",
                       "content": [draw(maybe(st.just(block)))],
                       "usage": draw(maybe(st.fixed_dictionaries({"input_tokens": st.integers(0, 10**6),
                                                                  "output_tokens": st.integers(0, 10**4)})))}
            kind = "assistant"
        else:
            message = None
        uuid = draw(maybe(st.sampled_from([f"u{i}", "u0"])))
        rec = {"type": draw(maybe(st.just(kind))), "uuid": uuid, "parentUuid": draw(maybe(st.just(parent))),
               "sessionId": "s1", "timestamp": draw(maybe(st.just(f"2025-01-01T00:00:{i:02d}Z"))),
               "isSidechain": draw(maybe(st.just(False)))}
        if message is not None:
            rec["message"] = draw(maybe(st.just(message)))
        elif kind == "system":
            rec.update(subtype=draw(maybe(st.sampled_from(["compact_boundary", "info"]))), content="note")
        parent = uuid
        out.append(rec)
    return out


@st.composite
def codex_records(draw):
    out = [{"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta",
            "payload": {"id": draw(maybe(st.just("sess"))), "cwd": "/w", "instructions": draw(maybe(TEXT))}}]
    pending: list = []
    for i in range(draw(st.integers(min_value=2, max_value=30))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "output", "reasoning", "event", "compacted"]))
        if kind in ("user", "assistant"):
            item = {"type": "message", "role": draw(maybe(st.just(kind))),
                    "content": draw(maybe(st.just([{"type": "input_text" if kind == "user" else "output_text",
                                                    "text": draw(maybe(TEXT))}])))}
        elif kind == "call":
            cid = draw(maybe(st.sampled_from([f"call_{i}", "call_dup"])))
            pending.append(cid)
            item = {"type": "function_call", "name": draw(maybe(st.just("shell"))), "call_id": cid,
                    "arguments": draw(maybe(TEXT.map(lambda t: json.dumps({"command": [t]}))))}
        elif kind == "output" and pending:
            item = {"type": "function_call_output", "call_id": draw(maybe(st.just(pending.pop(0)))),
                    "output": draw(maybe(st.one_of(TEXT, st.fixed_dictionaries({"content": TEXT}))))}
        elif kind == "reasoning":
            item = {"type": "reasoning", "summary": draw(maybe(st.just([{"type": "summary_text", "text": "hm"}])))}
        elif kind == "event":
            out.append({"timestamp": "t", "type": "event_msg", "payload": draw(maybe(st.fixed_dictionaries({
                "type": st.sampled_from(["token_count", "user_message", "context_compacted"]),
                "message": maybe(TEXT), "info": maybe(st.just({"last_token_usage": {"input_tokens": 5}}))})))})
            continue
        elif kind == "compacted":
            out.append({"timestamp": "t", "type": "compacted", "payload": {"message": draw(maybe(TEXT)),
                        "replacement_history": draw(maybe(st.just([{"type": "message", "role": "user", "content": [
                            {"type": "input_text", "text": "earlier"}]}])))}})
            continue
        else:
            continue
        out.append({"timestamp": draw(maybe(st.just("2025-01-01T00:00:01Z"))), "type": "response_item",
                    "payload": draw(maybe(st.just(item)))})
    return out


@settings(max_examples=int(os.environ.get("TCOMPACT_FUZZ_EXAMPLES", "60")), deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(st.one_of(st.tuples(st.just("chat"), chat_records()), st.tuples(st.just("claude-code"), claude_records()),
                 st.tuples(st.just("codex"), codex_records())),
       st.sampled_from(COMPRESSORS))
def test_generated_records_with_odd_values(runner, tmp_path_factory, records, compressor):
    fmt, recs = records
    data = b"".join(json.dumps(r).encode() + b"\n" for r in recs)  # json: ints beyond 64 bits, lone surrogates
    run_case(runner, tmp_path_factory.mktemp("gen"), fmt, data, compressor)


# -- regressions: each bug the fuzzing found, as the smallest input that showed it -----------------

def _invoke(runner, *args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _lines(path: Path, *records: str) -> Path:
    path.write_text("".join(r + "\n" for r in records), encoding="utf-8")
    return path


SKIP_HINT = "fix or remove that line, or pass --skip-bad-lines to read on without it"


def test_codex_content_and_reasoning_of_the_wrong_type(runner, tmp_path):
    """Was: internal error (TypeError: 'int' object is not iterable), exit 70."""
    meta = '{"type":"session_meta","payload":{"id":"s","instructions":"be brief"}}'
    _lines(tmp_path / "a.jsonl", meta, '{"type":"response_item","payload":{"type":"message","role":"user","content":1}}')
    result = _invoke(runner, "inspect", "a.jsonl")
    assert (result.exit_code, result.stderr) == (
        2, f'Error: a.jsonl:2: response_item message needs a "role" and a "content" list — {SKIP_HINT}\n')
    _lines(tmp_path / "b.jsonl", meta, '{"type":"response_item","payload":{"type":"reasoning","summary":5,'
           '"content":{"text":1}}}', '{"type":"response_item","payload":{"type":"message","role":"user",'
           '"content":"hi"}}')
    (back,) = read_file(tmp_path / "b.jsonl").transcripts
    assert [(m.role, m.text, [r.text for r in m.reasoning]) for m in back.messages] == [
        ("system", "be brief", []), ("assistant", "", [""]), ("user", "hi", [])]


def test_a_type_that_is_a_list_or_object_is_an_unknown_record(runner, tmp_path):
    """Was: internal error (TypeError: unhashable type: 'list') while detecting the format."""
    _lines(tmp_path / "c.jsonl", '{"type":["user"],"uuid":"u1","sessionId":"s","message":{"role":"user","content":"x"}}',
           '{"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"s","message":{"role":"user","content":"hello"}}')
    _lines(tmp_path / "x.jsonl", '{"type":"session_meta","payload":{"id":"s","instructions":"be brief"}}',
           '{"type":{"a":1},"payload":{}}', '{"type":"response_item","payload":{"type":["message"]}}')
    _lines(tmp_path / "h.jsonl", '{"role":"user","content":"hi"}', '{"type":[1],"data":2}')
    got = {}
    for name in ("c.jsonl", "x.jsonl", "h.jsonl"):
        result = _invoke(runner, "inspect", name, "--json")
        assert (result.exit_code, result.stderr) == (0, "")
        (f,) = orjson.loads(result.stdout)["files"]
        got[name] = (f["format"], f["unknown_records"], [t["messages"] for t in f["transcripts"]])
    assert got == {"c.jsonl": ("claude-code", {'("type" is list)': 1}, [1]),
                   "x.jsonl": ("codex", {'("type" is dict)': 1, "response_item/(list)": 1}, [1]),
                   "h.jsonl": ("chat", {'("type" is list)': 1}, [1])}


def test_a_content_part_whose_type_is_an_object(runner, tmp_path):
    """Was: internal error (TypeError: unhashable type: 'dict') looking for images."""
    _lines(tmp_path / "p.jsonl", '{"role":"user","content":[{"type":{"a":1},"text":"look"},{"type":"text","text":"x"}]}',
           '{"role":"assistant","content":"ok"}')
    result = _invoke(runner, "inspect", "p.jsonl", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert read_file(tmp_path / "p.jsonl").transcript(None).messages[0].images == ()


def test_a_codex_message_with_an_empty_role_is_refused(runner, tmp_path):
    """Was: read as a message of role "", which its dump could not hold: replay --verify exit 70 (ShapeError)."""
    _lines(tmp_path / "e.jsonl", '{"type":"session_meta","payload":{"id":"s","instructions":"be brief"}}',
           '{"type":"response_item","payload":{"type":"message","role":"","content":"x"}}')
    result = _invoke(runner, "inspect", "e.jsonl")
    assert (result.exit_code, result.stderr) == (
        2, f'Error: e.jsonl:2: response_item message needs a "role" and a "content" list — {SKIP_HINT}\n')


def test_a_file_whose_every_line_is_skipped(runner, tmp_path):
    """Was: "cannot tell the format (first record has keys: none)"."""
    (tmp_path / "b.jsonl").write_bytes(b"oops\n\n[1]\n")
    result = _invoke(runner, "inspect", "b.jsonl", "--skip-bad-lines")
    assert (result.exit_code, result.stderr) == (2, "Error: b.jsonl: no line of the file is a JSON record (all are "
                                                    "blank or were skipped) — check that this is a JSONL transcript\n")


@pytest.mark.parametrize("depth", [300, 1000, 5000])
def test_deep_nesting_is_one_error_line(runner, tmp_path, depth):
    """Was: 300 and 1000 levels read, then internal error (TypeError: Recursion limit reached) writing JSON."""
    _lines(tmp_path / "d.jsonl", '{"role":"user","content":"hi"}',
           '{"role":"user","content":[{"type":"x","v":' + "[" * depth + "]" * depth + "}]}")
    for command in (["inspect"], ["compact", "--now"]):
        result = _invoke(runner, *command, "d.jsonl")
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", f"Error: d.jsonl:2: JSON nested more than 200 levels deep — {SKIP_HINT}\n")
    (tmp_path / "d.json").write_text('{"messages": [{"role": "user", "content": ' + "[" * depth + "]" * depth + "}]}")
    result = _invoke(runner, "inspect", "d.json")
    expected = ("d.json: JSON nested more than 200 levels deep — this is no transcript tcompact can read; pass a "
                "transcript file") if depth <= 1024 else (  # beyond orjson's limit: read as one JSON line
                f"d.json:1: JSON nested more than 200 levels deep — {SKIP_HINT}")
    assert (result.exit_code, result.stderr) == (2, f"Error: {expected}\n")


def test_nesting_within_the_limit_compacts_and_replays(runner, tmp_path):
    deep = "[" * 150 + "]" * 150
    _lines(tmp_path / "n.jsonl", '{"role":"system","content":"sys"}', '{"role":"user","content":"first ' + "a " * 400
           + '"}', '{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"x","v":' + deep + "}]}",
           '{"role":"user","content":"second"}', '{"role":"assistant","content":"done"}')
    result = _invoke(runner, "compact", "n.jsonl", "-c", "dialogue", "--now", "-o", "o.jsonl", "--dump-dir", "dumps")
    assert (result.exit_code, result.stderr) == (0, "")
    assert _invoke(runner, "replay", "dumps", "--verify").exit_code == 0


def test_lone_surrogates_are_read_as_replacement_characters_and_written_back_as_they_were(runner, tmp_path):
    """Was: internal error (TypeError: str is not valid UTF-8: surrogates not allowed) in inspect --json."""
    big = "\\n".join(f"line {i}" for i in range(40))
    _lines(tmp_path / "s.jsonl", '{"role":"user","content":"fix \\ud800 now","n":123456789012345678901234567890}',
           '{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash",'
           '"arguments":"{}"}}]}', '{"role":"tool","tool_call_id":"c1","content":"' + big + '"}',
           '{"role":"assistant","content":"done"}')
    result = _invoke(runner, "inspect", "s.jsonl", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    (t,) = orjson.loads(result.stdout)["files"][0]["transcripts"]
    assert [m["preview"] for m in t["top_messages"] if m["role"] == "user"] == ["fix \ufffd now"]
    result = _invoke(runner, "compact", "s.jsonl", "-c", "truncate", "--set", "truncate.max_lines=8", "--now",
                     "-o", "o.jsonl")
    assert (result.exit_code, result.stderr) == (0, "")
    assert (tmp_path / "o.jsonl").read_bytes().splitlines()[0] == (tmp_path / "s.jsonl").read_bytes().splitlines()[0]


def test_a_marker_longer_than_what_it_replaces_is_not_applied(tmp_path):
    """Was: "truncate/micro/offload: applied but not smaller" — a small result replaced by a longer marker."""
    from tcompact.compressors import get
    from tcompact.compressors.base import Context
    from tcompact.model import Message, ToolCall
    from tcompact.counting.tokens import TokenCounter

    nine = "\n".join("ok" for _ in range(9))  # one line over max_lines=8: the marker is longer than the cut
    msgs = [Message(role="user", content="go")]
    for n in range(3):
        msgs += [Message(role="assistant", content="", tool_calls=(ToolCall(f"c{n}", "bash", "{}"),)),
                 Message(role="tool", content=nine, tool_call_ids=(f"c{n}",))]
    msgs.append(Message(role="assistant", content="done"))
    ctx = Context(counter=TokenCounter(), window=200_000, summarizer=None, force=True, offload_dir=str(tmp_path))
    got = {}
    for name, values in (("truncate", {"max_lines": 8}), ("micro", {"keep_recent_per_tool": 0, "min_tokens": 0}),
                           ("offload", {"large_message_tokens": 1, "protected_tools": [], "keep_last_round": False})):
        c = get(name)
        r = c.compress(msgs, c.settings_model(**values), ctx)
        got[name] = (r.applied, r.reason, r.tokens_after <= r.tokens_before)
    assert got == {"truncate": (False, "no tool output over the limits", True),
                   "micro": (False, "no old tool results to clear", True),
                   "offload": (False, "no message over the size limit", True)}


def test_codex_base_instructions_come_first_wherever_session_meta_is(tmp_path):
    """Was: compacting a rollout whose session_meta is not the first line wrote a file that read back reordered
    (and, in the middle of an assistant turn, split that turn in two)."""
    lines = (SAMPLES / "codex_rollout.jsonl").read_bytes().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if b'"session_meta"' in x)
    moved = lines[:at] + lines[at + 1:]
    moved.insert(next(i for i, x in enumerate(moved) if b'"type":"reasoning"' in x) + 1, lines[at])
    (tmp_path / "r.jsonl").write_bytes(b"".join(moved))
    original = read_file(SAMPLES / "codex_rollout.jsonl").transcript(None).messages
    again = read_file(tmp_path / "r.jsonl").transcript(None).messages
    assert [(m.role, m.text) for m in again] == [(m.role, m.text) for m in original]


def test_a_duplicated_uuid_that_leads_the_main_chain_into_a_sidechain(runner, tmp_path):
    """Was: internal error (IndexError: list index out of range) reading the file."""
    def line(uuid, parent, kind, side, content, mid=None):
        message = {"role": kind, "content": content, **({"id": mid} if mid else {})}
        return orjson.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isSidechain": side,
                             "timestamp": f"2025-01-01T00:00:0{uuid[-1]}Z", "message": message}).decode()
    _lines(tmp_path / "c.jsonl", line("u1", None, "user", False, "start"),
           line("s2", "u1", "assistant", True, [{"type": "text", "text": "side"}], mid="m1"),
           line("u3", "s2", "user", False, "go on"))
    result = _invoke(runner, "inspect", "c.jsonl", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert [(t["id"], t["messages"]) for t in orjson.loads(result.stdout)["files"][0]["transcripts"]] == [
        ("main", 3), ("sidechain-s2", 2)]


def test_a_system_prompt_not_on_the_first_line_keeps_its_place_in_the_output(runner, tmp_path):
    """Was: "the output does not read back as the compacted messages" (full moved the system prompt first;
    the chat writer put its unchanged line back where it was in the file)."""
    lines = (SAMPLES / "chat_tool_session.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "c.jsonl").write_bytes(lines[1] + lines[0] + b"".join(lines[2:]))
    result = _invoke(runner, "compact", "c.jsonl", "-c", "full", "--now", "-o", "o.jsonl", "--strict")
    assert (result.exit_code, result.stderr) == (0, "")
    assert [m.role for m in read_file(tmp_path / "o.jsonl").transcript(None).messages][:3] == [
        "system", "user", "user"]


def test_a_tool_result_without_a_call_id_replays(runner, tmp_path):
    """Was: replay --verify MISMATCH — the dump stored tool_call_id "" and read it back as no id at all."""
    data = (SAMPLES / "codex_rollout.jsonl").read_bytes().replace(b'"call_id":"call_65zHC09JFeyc1WdAXBeAOqV1",', b"", 1)
    (tmp_path / "r.jsonl").write_bytes(data)
    result = _invoke(runner, "compact", "r.jsonl", "-c", "current-round", "--now", "-o", "o.jsonl",
                     "--dump-dir", "dumps")
    assert (result.exit_code, result.stderr) == (0, "")
    result = _invoke(runner, "replay", "dumps", "--verify")
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "1 dump(s): 1 OK, 0 mismatched")


def test_an_extractive_answer_the_reply_checks_would_refuse_replays(runner, tmp_path):
    """Was: replay --verify MISMATCH (context_after.messages[0].role) — verify's wrapper around the replayed
    answers did not say they came from the extractive summariser, so its summary of a session repeating
    "fix" was checked as a model's reply, refused as a loop, and asked for again; there was no second answer."""
    fix40 = "fix fix fix fix fix fix " + "x" * 50
    records = [{"role": "assistant", "content": None},
               {"role": "assistant", "content": "\x7f\x17\x97O\U0002d5c3M\U000595a3N\x08\U00016dc31H,PO9\x95\x90C-"},
               {"role": "assistant", "content": "\U00026e1b\U000df85a\x10U\x1a\U000de9de"},
               {"role": "user", "content": fix40 * 40}, {"role": "assistant", "content": None},
               {"role": "assistant", "content": None}, {"role": "user", "content": "fix"},
               {"role": "user", "content": None}, {"role": "assistant", "content": None},
               {"role": "assistant", "content": "fix"}, {"role": "assistant", "content": "fix" * 40},
               {"role": "assistant", "content": "fix"}, {"role": "assistant", "content": "fix fix fix fix" * 40},
               {"role": "assistant", "content": ""}, {"role": "assistant", "content": "0"},
               {"role": "user", "content": None}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = _invoke(runner, "compact", "c.jsonl", "-c", "dialogue", "--now", "-o", "o.jsonl", "--dump-dir", "dumps")
    assert (result.exit_code, result.stderr) == (0, "")
    result = _invoke(runner, "replay", "dumps", "--verify")
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "1 dump(s): 1 OK, 0 mismatched")


def test_a_claude_reply_whose_lines_are_out_of_order_compacts_and_reads_back(runner, tmp_path):
    """Was: "the output does not read back": the new chain ended on a line older than the file's newest leaf."""
    lines = (SAMPLES / "claude_code_session.jsonl").read_bytes().splitlines(keepends=True)[:40]
    lines[38], lines[39] = lines[39], lines[38]  # the two lines of the last reply, newest first
    (tmp_path / "c.jsonl").write_bytes(b"".join(lines))
    result = _invoke(runner, "compact", "c.jsonl", "-c", "dialogue", "--now", "-o", "o.jsonl", "--strict")
    assert (result.exit_code, result.stderr) == (0, "")


def test_skipped_lines_are_kept_and_the_output_reads_back(runner, tmp_path):
    """Was (outputs.py, fixed by its owner): "Warning: invariant: the output does not read back" — the check read
    the written transcript, which keeps the skipped lines, without --skip-bad-lines."""
    lines = (SAMPLES / "chat_tool_session.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "c.jsonl").write_bytes(b"".join(lines[:3]) + b"not json\n" + b"".join(lines[3:]))
    result = _invoke(runner, "compact", "c.jsonl", "-c", "dialogue", "--now", "-o", "o.jsonl", "--skip-bad-lines")
    assert (result.exit_code, result.stderr) == (0, "Warning: c.jsonl: skipped 1 bad line(s) (4); line 4: not valid "
                                                    "JSON (invalid literal, expected 'null' at column 1)\n")
    assert b"\nnot json\n" in (tmp_path / "o.jsonl").read_bytes()  # the skipped line is kept, byte for byte


def test_a_claude_tool_result_without_its_id_is_truncated_in_place(runner, tmp_path):
    """Was: "the output does not read back": the in-place rewrite matched blocks by id and missed this one."""
    data = (SAMPLES / "claude_code_session.jsonl").read_bytes()
    (tmp_path / "c.jsonl").write_bytes(data.replace(b'"tool_use_id":"toolu_01xdkufVqrDJaGCd2wL7BJXb",', b"", 1))
    result = _invoke(runner, "compact", "c.jsonl", "-c", "truncate", "--set", "truncate.max_chars=300", "--now",
                     "-o", "o.jsonl", "--strict")
    assert (result.exit_code, result.stderr) == (0, "")
    (tool,) = [m for m in read_file(tmp_path / "o.jsonl").transcript(None).messages if m.tool_call_ids == ("",)]
    assert "[... tcompact truncated " in tool.text and len(tool.text) < 600


def test_a_dump_holding_a_message_tcompact_cannot_read(runner, tmp_path):
    """Was: replay --verify exit 70 (internal error, ShapeError) — met through a Codex message of role ""."""
    from tcompact.dump import content_hashes

    result = _invoke(runner, "compact", SAMPLES / "chat_tool_session.jsonl", "-c", "dialogue", "--now",
                     "-o", "o.jsonl", "--dump-dir", "dumps")
    assert result.exit_code == 0
    (path,) = (tmp_path / "dumps").iterdir()
    doc = orjson.loads(path.read_bytes())
    doc["context_before"]["messages"][1]["role"] = ""
    doc["hashes"] = content_hashes(doc)  # as if a tool had written it so
    path.write_bytes(orjson.dumps(doc))
    result = _invoke(runner, "replay", "dumps", "--verify")  # the run cannot be rebuilt: its dump's one line
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, f'FAILED {path.name}: field context_before.messages holds a message tcompact cannot read ("role" must be a '
           'non-empty string) — the dump was edited or written by another tool; compact again to get a new one\n'
           '1 dump(s): 0 OK, 0 mismatched, 1 failed\n', "")


def test_round_level_keeps_the_head_of_an_over_budget_request(runner, tmp_path):
    """Was (round_level, fixed by its owner): "Warning: invariant: the last real user request is not kept verbatim"."""
    _lines(tmp_path / "big.jsonl", '{"role":"system","content":"You are an agent."}',
           '{"role":"user","content":"fix it: ' + "word " * 170_000 + '"}', '{"role":"assistant","content":"done"}')
    result = _invoke(runner, "compact", "big.jsonl", "-c", "round-level", "--now", "-o", "o.jsonl", "--strict")
    assert (result.exit_code, result.stderr) == (0, "")


def test_round_level_keeps_the_request_after_an_over_budget_system_prompt(runner, tmp_path):
    """Was: hard truncation dropped the last request into its cut text when the system prompt alone
    was over the target ("the last real user request is not kept verbatim")."""
    lines = (SAMPLES / "chat_tool_session.jsonl").read_text(encoding="utf-8").splitlines()
    first = orjson.loads(lines[0])
    lines[0] = orjson.dumps({**first, "content": "rule " * 170_000}).decode()
    _lines(tmp_path / "s.jsonl", *lines)
    result = _invoke(runner, "compact", "s.jsonl", "-c", "round-level", "--now", "-o", "o.jsonl")
    assert (result.exit_code, result.stderr) == (0, "")
    source = read_file(tmp_path / "s.jsonl").transcript(None).messages
    out = read_file(tmp_path / "o.jsonl").transcript(None).messages
    request = source[last_real_user_index(source)]
    assert [m.role for m in out] == ["system", "user", "user"] and out[0].text == source[0].text
    assert out[2].text == request.text and out[1].text.startswith("[ROUND_LEVEL_MEMORY_BLOCK]")
