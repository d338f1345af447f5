"""The shared defaults (defaults.py): the default chain is a real chain, the library and every command use it, and
the module stays light enough for ``--help`` to import."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from tcompact.app import app
from tcompact.compaction import CompactOptions
from tcompact.compressors import parse_chain
from tcompact.defaults import DEFAULT_CHAIN
from tcompact.evaluation import EvalOptions


def test_the_default_chain_is_a_chain_of_registered_compressors_and_the_librarys_default():
    assert DEFAULT_CHAIN == "working-set"
    assert [c.name for c in parse_chain(DEFAULT_CHAIN)] == ["working-set"]
    assert CompactOptions().chain == DEFAULT_CHAIN
    assert EvalOptions().default_chain == DEFAULT_CHAIN  # what an eval reports as "the default chain of compact"


def test_the_help_of_the_commands_that_compact_shows_it():
    for command in (["compact"], ["batch", "compact"]):
        result = CliRunner().invoke(app, [*command, "--help"], terminal_width=200)
        assert result.exit_code == 0 and f"[default: {DEFAULT_CHAIN}]" in result.stdout, command


def test_importing_it_imports_no_other_module():
    code = ("import sys, tcompact; before = set(sys.modules); import tcompact.defaults; "
            "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "['tcompact.defaults']\n"
