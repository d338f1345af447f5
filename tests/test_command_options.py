"""commands/_options.py option_group: a group of options declared once, handed to a command as one value."""

from __future__ import annotations

import inspect
from typing import Annotated

import typer
from typer.testing import CliRunner

from tcompact.commands._options import option_group

AOpt = Annotated[int, typer.Option("--a", help="A.")]
BOpt = Annotated[str, typer.Option("--b", help="B.")]
JOpt = Annotated[bool, typer.Option("--j", help="J.")]
GROUP = (("a", AOpt, 1), ("j", JOpt, False), ("b", BOpt, "x"))


def _command(seen: list):
    @option_group("group", GROUP, lambda **values: tuple(sorted(values.items())), keep=("j",))
    def command(first: Annotated[str, typer.Argument()], group=None, *, j: bool = False) -> None:
        seen.append((first, group, j))

    return command


def test_the_group_takes_the_placeholder_s_place_and_keep_reaches_the_command():
    params = list(inspect.signature(_command([])).parameters)
    assert params == ["first", "a", "j", "b"]  # in the group's order, j once


def test_the_command_receives_the_group_built_and_the_kept_option_itself():
    seen: list = []
    app = typer.Typer()
    app.command()(_command(seen))
    result = CliRunner().invoke(app, ["f", "--a", "3", "--j"])
    assert result.exit_code == 0, result.output
    assert seen == [("f", (("a", 3), ("b", "x")), True)]
