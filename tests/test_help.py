"""``--help`` of every command at 80 and 120 columns, tables at 80, shell completion (issue 13 items 18, 19).

The help must fit the terminal, show brackets as written (``tcompact[html]``), name arguments and
option values by metavar (``PATH...``, ``--top N``) instead of types (``<int>``, ``<list[Path]>``,
``{paths}...``), keep every word of the docstring (rewrapped, never cut) and keep the examples
as written. Tables must not cut what a user copies from them: setting names, transcript ids,
headers.
"""

from __future__ import annotations

import inspect
import re

import orjson
import pytest
from conftest import SAMPLES
from typer.main import get_command
from typer.testing import CliRunner

from tcompact.app import app

COMMANDS = ["inspect", "compact", "replay", "compressors", "restore", "convert", "eval", "batch", "batch inspect",
            "batch compact", "batch eval", "hooks", "hooks install", "hooks status", "hooks uninstall", "hook",
            "hook pre-compact", "hook session-start", "hook prompt-submit", "statusline"]
USAGE = {"": "Usage: tcompact [OPTIONS] COMMAND [ARGS]...", "inspect": "Usage: tcompact inspect [OPTIONS] [PATH]...",
         "compact": "Usage: tcompact compact [OPTIONS] [PATH]", "replay": "Usage: tcompact replay [OPTIONS] DUMP|DIR...",
         "compressors": "Usage: tcompact compressors [OPTIONS]", "restore": "Usage: tcompact restore [OPTIONS] [PATH]",
         "convert": "Usage: tcompact convert [OPTIONS] PATH", "eval": "Usage: tcompact eval [OPTIONS] [PATH]...",
         "batch": "Usage: tcompact batch [OPTIONS] COMMAND [ARGS]...",
         "batch inspect": "Usage: tcompact batch inspect [OPTIONS] SOURCE...",
         "batch compact": "Usage: tcompact batch compact [OPTIONS] SOURCE...",
         "batch eval": "Usage: tcompact batch eval [OPTIONS] SOURCE...",
         "hooks": "Usage: tcompact hooks [OPTIONS] COMMAND [ARGS]...",
         "hooks install": "Usage: tcompact hooks install [OPTIONS]",
         "hooks status": "Usage: tcompact hooks status [OPTIONS]",
         "hooks uninstall": "Usage: tcompact hooks uninstall [OPTIONS]",
         "hook": "Usage: tcompact hook [OPTIONS] COMMAND [ARGS]...",
         "hook pre-compact": "Usage: tcompact hook pre-compact [OPTIONS]",
         "hook session-start": "Usage: tcompact hook session-start [OPTIONS]",
         "hook prompt-submit": "Usage: tcompact hook prompt-submit [OPTIONS]",
         "statusline": "Usage: tcompact statusline [OPTIONS]"}
TYPE_TAG = re.compile(r"<(?:bool|int|float|str|path|list\[\w+\])>|\{\w+\}", re.IGNORECASE)

ROOT_HELP_80 = """\
Usage: tcompact [OPTIONS] COMMAND [ARGS]...

  Inspect, compact and replay AI-agent session transcripts (Claude Code,
  Codex, OpenAI chat, SWE-agent).

Options:
  --version             Print the version.
  --install-completion  Install completion for the current shell.
  --show-completion     Show completion for the current shell, to copy it or
                        customize the installation.
  -h, --help            Show this message and exit.

Commands:
  inspect      Show where the tokens of one or many transcripts go.
  compact      Compact a transcript with a compressor or a chain of them.
  replay       Verify, re-run or tabulate compression dumps, offline.
  compressors  List the compressors with their settings and defaults.
  restore      Put offloaded originals back into a compacted transcript.
  convert      Convert a transcript to chat, Claude Code or Codex.
  eval         Measure what each compressor keeps: canaries, needed tokens.
  statusline   Print Claude Code's status line.
  batch        Inspect, compact or evaluate a whole corpus on a pool or Ray.
  hooks        Put tcompact into the agents' own compaction.
  hook         What the installed hooks run.
"""


def run(args, width, env=None):
    """The command on a terminal ``width`` columns wide: rich reads COLUMNS; click writes its help
    two columns narrower than a terminal, a width the runner would otherwise force to 80."""
    return CliRunner().invoke(app, args, prog_name="tcompact", terminal_width=width - 2,
                              env={"COLUMNS": str(width), **(env or {})})


def _command(name):
    """The click command of ``name`` ("" for the root, "batch inspect" for a group's command)."""
    command = get_command(app)
    for word in name.split():
        command = command.commands[word]  # type: ignore[attr-defined]
    return command


def table_lines(text):
    return [line for line in text.splitlines() if line[:1] in "│┃┏┡└├┗╇ ─" or line.startswith("task-")]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_help_fits_and_names_values_by_metavar(name, width):
    result = run([*name.split(), "--help"], width)
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == USAGE[name]
    assert [line for line in lines if len(line) > width] == []
    assert TYPE_TAG.findall(result.stdout) == []
    command = _command(name)
    for param in command.params:
        if param.param_type_name != "option" or param.hidden:
            continue
        longest = max(param.opts, key=len)
        shown = longest if param.is_flag or param.metavar is None and name == "" else f"{longest} {param.metavar}"
        assert re.search(rf"(^|[ ,]){re.escape(shown)}( |$)", result.stdout, re.M), (name, shown)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_keeps_every_word_of_the_docstring(name):
    command = _command(name)
    if command.callback is None:  # a group: its help is the help= text, checked above
        return
    doc = inspect.cleandoc(command.callback.__doc__)
    text, _, examples = doc.partition("\b\n")
    result = run([*name.split(), "--help"], 80)
    body = result.stdout.split("\n\n", 1)[1].split("\nArguments:")[0].split("\nOptions:")[0]
    assert body.split() == text.split() + examples.split()  # rewrapped, nothing eaten or cut
    for example in examples.strip().splitlines():  # the examples stay as written, one per line
        assert f"    {example.strip()}\n" in result.stdout


def test_root_help_at_80_columns_and_bare_tcompact():
    assert run(["--help"], 80).stdout == ROOT_HELP_80
    bare = run([], 80)
    assert (bare.exit_code, bare.stdout, bare.stderr) == (0, ROOT_HELP_80, "")  # no "Error: …" line after it


def test_brackets_in_help_are_shown_as_written():
    # rich markup ate "[html]": "needs tcompact" was printed
    for name in ("inspect", "compact"):
        assert "(needs tcompact[html]" in " ".join(run([name, "--help"], 120).stdout.split())


def test_compressors_table_never_cuts_a_setting_name():
    from tcompact.compressors import describe

    for width in (80, 120):
        text = run(["compressors"], width).stdout
        assert [line for line in table_lines(text) if len(line) > width] == []
        out = text.splitlines()
        names = {line.split()[0] for line in out if line.startswith("  ") and line.split()}
        settings = {f["name"] for row in describe() for f in row["settings"]}
        assert settings <= names, sorted(settings - names)
        assert "compression_call_max_tokens" in names  # was cut into "compression_call_max_to" / "kens"


def test_transcripts_table_never_cuts_an_id(tmp_path):
    episodes = [{"task_id": f"retail-returns-and-exchanges-{n:04d}", "trial": 0, "reward": 1.0, "info": {},
                 "traj": [{"role": "user", "content": "return my order"}, {"role": "assistant", "content": "done"}]}
                for n in (41, 42)]
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(episodes))
    result = run(["inspect", str(path)], 80)
    assert result.exit_code == 0
    ids = [f"task-retail-returns-and-exchanges-{n:04d}-trial-0" for n in (41, 42)]
    rows = [line for line in result.stdout.splitlines() if line.startswith("task-")]
    assert [row.split()[0] for row in rows] == ids  # whole, so that --transcript can take them
    assert [line for line in table_lines(result.stdout) if len(line) > 80] == []
    detail = run(["inspect", str(path), "--transcript", ids[1], "--json"], 80)
    assert detail.exit_code == 0


def test_replay_table_never_cuts_a_header(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "round-level", "--now", "-o", "o.jsonl",
            "--dump-dir", "dumps", "--set", "round-level.first_pass_target_tokens=300"]
    assert run(args, 80).exit_code == 0
    out = run(["replay", "dumps", "--table"], 80).stdout.splitlines()
    assert [line for line in out if len(line) > 80] == []
    header = " ".join(out[1:3]).split()  # "processor / stage" may take two lines, its words whole
    for word in ("time", "processor", "stage", "tokens", "saved", "latency", "tries", "errors", "accepted"):
        assert word in header, word
    assert any(line.split()[1:3] == ["round-level", "l0_to_l1"] or "round-level" in line.split() for line in out[3:])


def test_shell_completion(monkeypatch):
    result = run([], 80, env={"_TCOMPACT_COMPLETE": "complete_bash", "COMP_WORDS": "tcompact comp",
                              "COMP_CWORD": "1"})
    assert (result.exit_code, result.stdout) == (0, "compact\ncompressors\n")
    result = run([], 80, env={"_TCOMPACT_COMPLETE": "complete_bash", "COMP_WORDS": "tcompact inspect --sp",
                              "COMP_CWORD": "2"})
    assert (result.exit_code, result.stdout) == (0, "--spans\n")
    import typer.completion

    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "zsh")  # the shell it is run from
    result = run(["--show-completion"], 80)
    assert result.exit_code == 0 and result.stdout.startswith("#compdef tcompact\n")
    assert "_TCOMPACT_COMPLETE=complete_zsh" in result.stdout
