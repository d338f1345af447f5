"""The settings of one compaction (compaction/options.py, commands/_compaction.py): one option table feeds
compact, batch compact and eval; the value is checked once, when it is made, and trusted below (the chain
resolved once per command, not again per run or per file); outcomes are values; defaults written once."""

from __future__ import annotations

import inspect
import shutil

import pytest
from conftest import SAMPLES
from typer.testing import CliRunner

from tcompact import defaults
from tcompact.app import app
from tcompact.batch.kinds import CompactTask, compact_figures
from tcompact.commands import batch, compact, eval as eval_command
from tcompact.commands._compaction import COMPACTION
from tcompact.compaction import CompactOptions, Status, compact_file
from tcompact.compaction import options as options_module
from tcompact.compressors import parse_sets
from tcompact.compressors.base import Context
from tcompact.evaluation import EvalOptions, evaluate_paths
from tcompact.summarizers import RunSettings

CHAT = SAMPLES / "chat_tool_session.jsonl"
#: truncate's limits so high that no output of the sample is over them
LOOSE = parse_sets(["truncate.max_chars=10000000", "truncate.max_lines=100000"])


def _params(command) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(command).parameters)


@pytest.mark.parametrize(("command", "left_out"), [
    (compact.compact, set()),
    (batch.batch_compact, {"transcript"}),
    (eval_command.eval_, {"compressor", "to", "trigger_ratio"}),  # eval: -c repeatable, no output, always --now
])
def test_every_command_that_compacts_takes_its_options_from_the_one_table(command, left_out):
    params = _params(command)
    taken = {name for name in COMPACTION if name in params}
    assert taken == set(COMPACTION) - left_out
    for name in taken:  # the same declaration (option, help) and the same default
        assert (params[name].annotation, params[name].default) == COMPACTION[name], name


def test_the_table_s_options_read_the_same_in_every_command_s_help():
    def help_of(*command):
        result = CliRunner().invoke(app, [*command, "--help"], terminal_width=300)
        assert result.exit_code == 0
        return result.stdout

    helps = [help_of("compact"), help_of("batch", "compact"), help_of("eval")]
    line = "Deadline in seconds for each summariser attempt (the whole answer). Default: twice the time the call's " \
           "size takes at the server's measured speed, plus 30 s, at least 60 s."
    assert all(line in h for h in helps)
    assert all("Summariser calls run at once (round-level).  [default: 4]" in h for h in helps)
    assert all("Retries of a transient summariser error.  [default: 2]" in h for h in helps)


@pytest.mark.parametrize(("args", "error"), [
    (["--max-retries", "-1"], "Error: --max-retries must be 0 or more\n"),
    (["--concurrency", "0"], "Error: --concurrency must be 1 or more\n"),
    (["-c", "nope"], "Error: unknown compressor 'nope' — use one of: truncate, offload, micro, mask, current-round, "
                     "dialogue, round-level, full, working-set\n"),
    (["--set", "nokey"], "Error: bad --set 'nokey' — write --set key=value or --set compressor.key=value\n"),
    (["--request-mode", "x"], "Error: unknown --request-mode 'x' — use conversation or serialized\n"),
    (["--encoding", "p50k"], "Error: unknown encoding 'p50k' — use one of: o200k_base, cl100k_base\n"),
])
def test_a_bad_value_is_one_error_line_and_exit_2_in_every_command(tmp_path, args, error):
    for command in (["compact", str(CHAT), "-o", str(tmp_path / "o.jsonl")],
                    ["batch", "compact", str(CHAT), "--out", str(tmp_path / "batch")], ["eval", str(CHAT)]):
        result = CliRunner().invoke(app, [*command, *args], terminal_width=300)
        assert (result.exit_code, result.stderr, result.stdout) == (2, error, ""), command
        assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.fixture()
def resolutions(monkeypatch):
    """How many times a chain is resolved (parsed into its compressors) from now on."""
    seen: list[str] = []
    real = options_module.parse_chain

    def counting(spec):
        seen.append(spec)
        return real(spec)

    monkeypatch.setattr(options_module, "parse_chain", counting)
    return seen


def test_compact_resolves_the_chain_once(tmp_path, resolutions):
    result = CliRunner().invoke(app, ["compact", str(CHAT), "-c", "truncate,dialogue", "--now", "-o",
                                      str(tmp_path / "o.jsonl")])
    assert result.exit_code == 0, result.stderr
    assert resolutions == ["truncate,dialogue"]  # three times before: the job's check, compact_file's, the run's


def test_a_batch_resolves_the_chain_once_and_its_files_never(tmp_path, resolutions):
    result = CliRunner().invoke(app, ["batch", "compact", str(CHAT), "--out", str(tmp_path / "b"), "-c", "truncate",
                                      "--workers", "1", "--json"])
    assert result.exit_code == 0, result.stderr
    assert resolutions == ["truncate"]  # the boundary; the check and the fingerprint read the value
    task = CompactTask(options=CompactOptions(chain="micro", now=True), out=str(tmp_path / "c"), root=str(SAMPLES))
    for path in sorted(SAMPLES.glob("*.jsonl")):  # what each worker does with the value it is sent
        assert compact_figures(str(path), task)["status"] in ("compacted", "nothing to do")
    assert resolutions == ["truncate", "micro"]


def test_eval_resolves_each_chain_once_whatever_the_files(tmp_path, resolutions):
    for path in sorted(SAMPLES.glob("*.jsonl")):
        shutil.copy(path, tmp_path / path.name)
    options = EvalOptions(chains=("truncate", "micro"), per_kind=1)
    assert resolutions == ["truncate", "micro"]
    report = evaluate_paths([tmp_path], options)
    assert (len(report["files"]), report["errors"]) == (3, [])
    assert resolutions == ["truncate", "micro"]  # not again per file


def test_placed_settings_are_the_same_checked_value():
    options = CompactOptions(chain="truncate,dialogue")
    placed = options.placed(now=True, offload_dir="/tmp/store", into_session="fork")
    assert (placed.now, placed.offload_dir, placed.into_session, options.now) == (True, "/tmp/store", "fork", False)
    assert placed.compressors is options.compressors and placed.settings is options.settings


def test_outcomes_are_values_whose_words_are_the_reports():
    assert [o.value for o in Status] == ["compacted", "nothing to do", "below the trigger", "failed"]
    below = compact_file(CHAT, CompactOptions(chain="truncate,dialogue", overrides=LOOSE))
    assert (below.status, below.below_trigger, [s.result.status for s in below.stages]) == \
        (Status.NOTHING_TO_DO, True, [Status.NOTHING_TO_DO, Status.BELOW_TRIGGER])
    assert below.message.endswith("; --now compacts anyway") and below.report["status"] == "nothing to do"
    assert type(below.report["status"]) is str  # the report is plain JSON
    done = compact_file(CHAT, CompactOptions(chain="dialogue", now=True))
    assert (done.status, done.below_trigger, done.stages[0].result.status) == \
        (Status.COMPACTED, False, Status.COMPACTED)


def test_nothing_to_do_that_is_not_the_trigger_does_not_offer_now():
    run = compact_file(CHAT, CompactOptions(chain="truncate", overrides=LOOSE))
    assert (run.status, run.below_trigger, run.message, run.stages[0].result.status) == \
        (Status.NOTHING_TO_DO, False, "truncate: no tool output over the limits", Status.NOTHING_TO_DO)


def test_the_defaults_are_written_once():
    assert (RunSettings().retries, RunSettings().concurrency) == (defaults.RETRIES, defaults.CONCURRENCY) == (2, 4)
    context = Context(counter=None, window=1000)
    assert (context.transient_retries, context.concurrency) == (defaults.RETRIES, defaults.CONCURRENCY)
    assert CompactOptions().summarizer == EvalOptions().summarizer == defaults.DEFAULT_SUMMARIZER == "extractive"
    assert COMPACTION["max_retries"][1] == defaults.RETRIES and COMPACTION["concurrency"][1] == defaults.CONCURRENCY
