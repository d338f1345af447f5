"""The golden-output tooling of tests/golden/: the normaliser and the code metrics.

``record.py`` itself runs the whole CLI for minutes and is run by hand; what it relies on is
tested here: that two runs' run-dependent fields normalise to the same text and nothing else
changes, and that ``metrics.py`` counts exactly on a module tree written for the test.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(GOLDEN))  # the scripts import each other by name (_normalise, _tree), as when run by hand


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"golden_{name}", GOLDEN / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


normalise = _load("_normalise")
metrics = _load("metrics")

START = datetime(2026, 12, 1, 23, 26, 40, tzinfo=timezone.utc).timestamp()  # the recording's first second
INPUT_ID = "8d2f6c1e-4b7a-4e59-9c3d-5a1e7f0b2c64"
#: one run's output, its run-dependent fields as {names}; everything else comes from the inputs
TEMPLATE = (
    "Wrote <ROOT>/work/a/{ms}_full_{input_id}.json and {ms2}_full_{input_id}.json ({ms}-full-run)\n"
    '{{"latency_s": {latency}, "created_at": "{iso}", "timestamp": {epoch}, "session": "{new}", '
    '"input": "{input_id}", "first": "2026-01-02T14:21:21.196Z", "tokens": 8079, "version": "0.1.0", '
    '"id": "{message}", "again": "{message}", "kept": "msg_01vBZBpdzncvFHdC7DBUs2hF"}}\n'
    "Forked as {new}: x.jsonl.tcompact-backup-{stamp}, sessions/{day}/rollout-{filetime}-{new}.jsonl\n"
    "codex  {short}  2026-03-09 16:02 – {month_day}  gpt-5-codex  5\n"
    "{clock}  full                  134,099→7,532    94%    {table_latency}s      1            yes\n"
    "16:02:11  not a table row of this run: 0.60s\n"
    'Batch eval: 3 tasks in {seconds} s ({rate}/s); "seconds": {seconds}, "tasks_per_second": {rate}\n'
    '"hashes": {{"request": "{sha_a}", "response": "{sha_b}"}}; tcompact 0.1.0; kept 2026-12-01T00:00:00Z\n'
)
RUN_1 = dict(ms=1796167612345, ms2=1796167612350, latency=0.036955, iso="2026-12-01T23:26:52.345+00:00",
             epoch=1796167612.345678, new="4b2e6300-ca06-409e-a8df-3c3f0c72158d", stamp="20261201T232653Z",
             day="2026/12/01", filetime="2026-12-01T23-26-53", short="4b2e6300", month_day="12-01 23:26",
             clock="23:26:52", table_latency="0.04", seconds=1.7, rate=1.1, sha_a="a" * 64, sha_b="b" * 64,
             message="msg_tc6ef67accb1cb536a97b8ea05")
RUN_2 = dict(RUN_1, ms=1796168010001, ms2=1796168010002, latency=2.5, iso="2026-12-01T23:33:30.001Z",
             epoch=1796168010.0012, new="019ad2ff-1b2c-7d3e-8f40-5a6b7c8d9e0f", stamp="20261201T233331Z",
             day="2026/12/01", filetime="2026-12-01T23-33-31", short="019ad2ff", month_day="12-01 23:33",
             clock="23:33:30", table_latency="12.50", seconds=2.25, rate=0.9, sha_b="c" * 64,
             message="msg_tc549cc76f12ee5f26bc17d17b")
EXPECTED = (
    f"Wrote <ROOT>/work/a/<DUMP-1>_full_{INPUT_ID}.json and <DUMP-2>_full_{INPUT_ID}.json (<MS>-full-run)\n"
    '{"latency_s": <SECONDS>, "created_at": "<TIME>", "timestamp": <EPOCH>, "session": "<UUID-1>", '
    f'"input": "{INPUT_ID}", "first": "2026-01-02T14:21:21.196Z", "tokens": 8079, "version": "<VERSION>", '
    '"id": "<MSG-1>", "again": "<MSG-1>", "kept": "msg_01vBZBpdzncvFHdC7DBUs2hF"}\n'
    "Forked as <UUID-1>: x.jsonl.tcompact-backup-<STAMP>, sessions/<DAY>/rollout-<FILETIME>-<UUID-1>.jsonl\n"
    "codex  <ID-1>  2026-03-09 16:02 – <TIME>  gpt-5-codex  5\n"
    "<HH:MM:SS>  full                  134,099→7,532    94%    <LATENCY>      1            yes\n"
    "16:02:11  not a table row of this run: 0.60s\n"
    'Batch eval: 3 tasks in <SECONDS> s (<RATE>/s); "seconds": <SECONDS>, "tasks_per_second": <RATE>\n'
    f'"hashes": {{"request": "{"a" * 64}", "response": "<SHA256>"}}; tcompact <VERSION>; kept 2026-12-01T00:00:00Z\n'
)


def _normalised(values: dict, *, path: str | None = None, text: str | None = None) -> str:
    owner = normalise.Normaliser(literals={"/tmp/tcompact-golden": "<ROOT>"}, window=(START - 60, START + 3600),
                                 version="0.1.0", known_uuids=frozenset({INPUT_ID}))
    text = TEMPLATE.format(input_id=INPUT_ID, **values) if text is None else text
    case = owner.case([text])
    return case.file(path, text) if path else case.text(text)


def test_two_runs_normalise_alike_and_the_inputs_stay():
    first, second = _normalised(RUN_1), _normalised(RUN_2)
    assert TEMPLATE.format(input_id=INPUT_ID, **RUN_1) != TEMPLATE.format(input_id=INPUT_ID, **RUN_2)
    assert first == EXPECTED
    assert second == EXPECTED


def test_a_dump_name_of_the_same_millisecond_keeps_its_order():
    # two calls in one millisecond: the second name ends in -<call> (dump/writing.py)
    same = "a/1796167612345_full_s-1.json b/1796167612345_full_s-1-2.json"
    apart = "a/1796167612345_full_s-1.json b/1796167612399_full_s-1.json"
    assert _normalised({}, text=same) == _normalised({}, text=apart) == "a/<DUMP-1>_full_s-1.json b/<DUMP-2>_full_s-1.json"


def test_an_input_id_after_an_escape_stays_and_a_new_one_goes():
    text = f'"text": "line\\n{INPUT_ID}/141-2", "fork": "sessions/claude-{RUN_1["new"]}-x"'
    owner = normalise.Normaliser(literals={}, window=(START, START), version="0.1.0",
                                 known_uuids=frozenset(normalise.uuids_in(text.split(",")[0].encode())))
    assert owner.case([text]).text(text) == f'"text": "line\\n{INPUT_ID}/141-2", "fork": "sessions/claude-<UUID-1>-x"'


def test_a_hash_of_a_settings_file_and_a_progress_line_of_a_slow_batch_go():
    text = ('batch inspect: 1 of 6 done, 0 failed, 0.1/s, ETA 56 s\nbatch inspect: 6 files\n'
            f'"written": "{"c" * 64}", "sha256": "{"d" * 64}"')
    assert _normalised({}, text=text) == f'batch inspect: 6 files\n"written": "<SHA256>", "sha256": "{"d" * 64}"'


def test_a_batch_lists_its_totals_in_one_order():
    terminal = "│ kind │\n│ role tool      │ 9 │\n│ role assistant │ 7 │\n│ role user      │ 2 │\n└──┘\n"
    assert normalise.batch_order(terminal) == \
        "│ kind │\n│ role assistant │ 7 │\n│ role tool      │ 9 │\n│ role user      │ 2 │\n└──┘\n"
    doc = '{\n  "kind": "inspect",\n  "totals": {\n    "by_role": {\n      "tool": 9,\n      "assistant": 7\n    }\n  },\n' \
          '  "z": [\n    2,\n    1\n  ]\n}\n'
    assert normalise.batch_order(doc) == doc.replace('"tool": 9,\n      "assistant": 7', '"assistant": 7,\n      "tool": 9')
    assert normalise.batch_order(doc.replace("  ", " ")) == doc.replace("  ", " ")  # not as tcompact prints: as it is


def test_files_of_a_kind():
    lines = '{"path": "b", "seconds": 1.5}\n{"path": "a", "seconds": 0.25}\n'
    assert _normalised({}, path="out/results.jsonl", text=lines) == \
        '{"path": "a", "seconds": <SECONDS>}\n{"path": "b", "seconds": <SECONDS>}\n'
    log = "<TIME> session-start claude s ok: handoff of 7,876 bytes (1.11 s)\n"
    assert _normalised({}, path="state/tcompact/hooks.log", text=log) == log.replace("1.11", "<SECONDS>")
    assert _normalised({}, text='{"client": "31288:914268", "offset": 6}') == '{"client": "<PROCESS>", "offset": 6}'
    page = ('<table class="sortable" id="calls"><thead><tr><th>#</th><th class=num>latency s</th><th>dump</th></tr>'
            '</thead><tbody><tr><td class="num" data-v="1">1</td><td class="num" data-v="0.036955">0.037</td>'
            '<td>d</td></tr></tbody></table>"latency":{"data":[{"type":"bar","x":["1. full"],"y":[0.036955]}]}'
            '<td class="num" data-v="0.5">0.5</td>')
    assert _normalised({}, path="page.html", text=page) == page.replace(
        'data-v="0.036955">0.037<', 'data-v="<SECONDS>"><SECONDS><').replace('"y":[0.036955]', '"y":[<SECONDS>]')


FILES = {
    "cli/tcompact/__init__.py": '"""Package."""\n',
    "cli/tcompact/util.py": ('"""Util."""\nfrom typing import Any\n\n\ndef _helper(x: dict[str, Any]) -> dict[str, Any]:\n'
                             "    return x\n\n\ndef big(a, b, *, c, d, e):\n    total = 0\n"
                             + "    total += 1\n" * 39 + "    return total\n"),
    "cli/tcompact/lone.py": '"""Lone."""\n_secret = 1\n\n\ndef f():\n    return _secret\n',
    "cli/tcompact/long.py": '"""Long."""\n' + "".join(f"X{n} = {n}\n" for n in range(300)),
    "cli/tcompact/pkg/__init__.py": '"""Pkg."""\n',
    "cli/tcompact/pkg/_private.py": '"""Private."""\nVALUE = 1\n',
    "cli/tcompact/pkg/mod.py": ('"""Mod."""\nfrom typing import Any, Dict\n\nfrom .. import lone\nfrom ..util import '
                                "_helper, big\nfrom . import _private\n\n\nclass C:\n"
                                "    def m(self, x: Dict[str, Any]) -> int:\n"
                                "        return lone._secret + _private.VALUE + len(_helper(x)) + big(1, 2, c=3, d=4, e=5)\n"
                                "\n    @staticmethod\n    def s(first, y):\n        return y\n"),
    "tests/test_a.py": "x = 1\n" * 10,
    "tests/golden/script.py": "y = 1\n" * 5,
}


def test_metrics_count_exactly(tmp_path, capsys):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert metrics.main(["--root", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {
        "files": {"code": 7, "tests": 1},
        "files_over_300_lines": [{"path": "cli/tcompact/long.py", "lines": 301}],
        "functions": {"count": 5, "median_lines": 2,
                      "over_40_lines": [{"function": "cli/tcompact/util.py:9 big", "lines": 42}],
                      "longest": [{"function": "cli/tcompact/util.py:9 big", "lines": 42},
                                  {"function": "cli/tcompact/lone.py:5 f", "lines": 2},
                                  {"function": "cli/tcompact/pkg/mod.py:10 m", "lines": 2},
                                  {"function": "cli/tcompact/pkg/mod.py:14 s", "lines": 2},
                                  {"function": "cli/tcompact/util.py:5 _helper", "lines": 2}]},
        "parameters": {"p90": 5, "max": 5, "at_max": ["cli/tcompact/util.py:9 big"]},
        "private_cross_imports": {"count": 3, "names": 1, "modules": 1, "attributes": 1, "list": [
            "cli/tcompact/pkg/mod.py:5 tcompact.util._helper",
            "cli/tcompact/pkg/mod.py:6 tcompact.pkg._private (module)",
            "cli/tcompact/pkg/mod.py:11 tcompact.lone._secret (attribute)"]},
        "dict_str_any": {"count": 3},
        "top_level_modules": {"count": 3, "used_by_one": 2,
                              "users": {"lone": ["pkg"], "long": [], "util": ["pkg"]}},
        "lines": {"code": 1 + 50 + 6 + 301 + 1 + 2 + 15, "tests": 10, "scripts_run_by_hand": 5,
                  "tests_over_code": round(10 / 376, 3)},
    }
    assert metrics.main(["--root", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "parameters per function: p90 5, max 5\n" in text
    assert "private names imported across modules: 3 (1 names, 1 private modules, 1 x._y uses)\n" in text


def test_compare_lists_what_differs(tmp_path, capsys):
    tree = _load("_tree")
    for name, stdout in (("a", '{"tokens": 1}\n'), ("b", '{"tokens": 2}\n')):
        for case in ("inspect/x", f"only/{name}"):
            (tmp_path / name / "cases" / case).mkdir(parents=True)
            (tmp_path / name / "cases" / case / "stdout").write_text(stdout)
            (tmp_path / name / "cases" / case / "exit").write_text("0\n")
        (tmp_path / name / "cases.txt").write_text("inspect/x: exit 0\n")
    assert tree.compare(tmp_path / "a", tmp_path / "a") == 0
    assert capsys.readouterr().out == "identical: 2 cases\n"
    assert tree.compare(tmp_path / "a", tmp_path / "b") == 1
    assert capsys.readouterr().out == (
        "1 differ, 1 only in a, 1 only in b:\n  differs: inspect/x\n  only in a: only/a\n  only in b: only/b\n\n"
        "=== inspect/x\n--- a/cases/inspect/x/stdout\n+++ b/cases/inspect/x/stdout\n@@ -1,3 +1,3 @@\n {\n"
        '-  "tokens": 1\n+  "tokens": 2\n }\n')
