"""Options shared by several commands, declared once: reading a transcript, the token cache, counting,
the session selectors (the options of a compaction: :mod:`._compaction`)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..formats.family import get, names

FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help=f"Read as this format instead of detecting it: {', '.join(names())}.",
                 show_default=False),
]
FullHistoryOpt = Annotated[
    bool,
    typer.Option("--full-history", help="Claude Code / Codex: read through compactions (Claude: logicalParentUuid)."),
]
SkipBadLinesOpt = Annotated[
    bool, typer.Option("--skip-bad-lines", help="Read on past malformed lines, counting and reporting them."),
]
TranscriptOpt = Annotated[
    str | None,
    typer.Option("--transcript", help="Which transcript of the file (main, a sub-agent or episode id).",
                 show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document to stdout instead of tables.")]
EncodingOpt = Annotated[str | None, typer.Option("--encoding", help="o200k_base or cl100k_base.", show_default=False)]
ContextWindowOpt = Annotated[int | None, typer.Option("--context-window", help="Context window in tokens.",
                                                      show_default=False)]
CountModelOpt = Annotated[str | None, typer.Option("--model", help="Count and size the window for this model.",
                                                   show_default=False)]

def say_unknown_model(model: str | None, *, context_window: int | None, encoding: str | None,
                      summarizer: str | None = None) -> None:
    """A ``--model`` that no table knows sets nothing (unless the summariser calls it): said on stderr,
    not ignored (:func:`tcompact.counting.windows.unknown_model`)."""
    if not model:
        return
    from ..counting.windows import unknown_model

    called = False
    if summarizer is not None:
        from ..summarizers import calls_model  # (pydantic: not for inspect, which has no summariser)

        called = calls_model(summarizer)
    note = unknown_model(model, context_window=context_window, encoding=encoding, called=called)
    if note:
        from .. import render

        render.warn(note)


def api_key() -> str | None:
    """The openai key, read here at the edge (it travels with the options to a batch's workers)."""
    import os

    return os.environ.get("OPENAI_API_KEY")


def _no_cache(value: bool) -> bool:
    """``--no-cache`` turns the token cache off for this process and the ones it starts."""
    if value:
        import os

        from ..counting.cache import NO_CACHE_ENV

        os.environ[NO_CACHE_ENV] = "1"
    return value


NoCacheOpt = Annotated[
    bool,
    typer.Option("--no-cache", callback=_no_cache, help="Count every text afresh: neither read nor write the "
                 "token cache (TCOMPACT_NO_CACHE=1 does the same)."),
]


def read_options(fmt: str | None, full_history: bool, skip_bad_lines: bool, *, keep_raw: bool):
    """ReadOptions from the shared options (validated here, at the boundary)."""
    from ..formats import ReadOptions

    if fmt is not None:
        get(fmt)  # an unknown name is an error listing the known ones
    return ReadOptions(format=fmt, full_history=full_history, skip_bad_lines=skip_bad_lines, keep_raw=keep_raw)


# ---- the session selectors: inspect, compact and restore take them (and eval can), declared once here

SessionOpt = Annotated[
    str | None,
    typer.Option("--session", help="A session on this machine: its id (a unique prefix is enough) or 'last'.",
                 show_default=False),
]
LastOpt = Annotated[int | None, typer.Option("--last", help="The newest N sessions.", show_default=False)]
ProjectOpt = Annotated[
    str | None,
    typer.Option("--project", help="Sessions whose recorded working directory is PATH or inside it.",
                 show_default=False),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="Only claude or only codex sessions.",
                                              show_default=False)]
SinceOpt = Annotated[str | None, typer.Option("--since", help="Sessions active at or after this date: YYYYMMDD or "
                                              "ISO 8601.", show_default=False)]
UntilOpt = Annotated[str | None, typer.Option("--until", help="Sessions active at or before this date (a day: all of "
                                              "it): YYYYMMDD or ISO 8601.", show_default=False)]
TimezoneOpt = Annotated[str | None, typer.Option("--timezone", help="Time zone of dates and days, e.g. UTC or "
                                                 "Europe/Paris (default: local).", show_default=False)]
GroupByOpt = Annotated[str, typer.Option("--group-by", help="One row per session, project, day (of last activity), "
                                         "model or tool, with totals.")]
NoCostOpt = Annotated[bool, typer.Option("--no-cost", help="Leave out the cost (and the price table).")]

SELECTOR_OPTIONS = (("session", SessionOpt), ("last", LastOpt), ("project", ProjectOpt), ("agent", AgentOpt),
                    ("since", SinceOpt), ("until", UntilOpt), ("timezone", TimezoneOpt))


def option_group(name: str, params, build, *, keep: tuple[str, ...] = ()):
    """A decorator: the command's parameter ``name`` (a placeholder, ``name=None``) becomes the options
    ``params`` — ``(name, annotation, default)`` each, shown in its place — and the command receives
    their values as one, ``build(**values)`` (validated there, at the boundary). So a group of
    options several commands take is declared once. The options named in ``keep`` are shown in their
    place in the group but reach the command as themselves (its own keyword parameters, not declared
    again in its signature)."""
    import functools
    import inspect

    def decorate(command):
        signature = inspect.signature(command, eval_str=True)
        keyword = inspect.Parameter.KEYWORD_ONLY
        new = []
        for p in signature.parameters.values():
            if p.name in keep:
                continue
            new += ([inspect.Parameter(n, keyword, default=d, annotation=a) for n, a, d in params] if p.name == name
                    else [p.replace(kind=keyword)])

        @functools.wraps(command)
        def wrapper(**kwargs):
            values = {n: kwargs.pop(n, d) for n, _, d in params}
            kept = {n: values.pop(n) for n in keep}
            return command(**{name: build(**values)}, **kept, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=new)
        wrapper.__annotations__ = {p.name: p.annotation for p in new}
        return wrapper

    return decorate


def _selector(**values):
    if all(v is None for v in values.values()):
        return _NoSelectors()
    from ..sessions import make_selector

    return make_selector(**values)


#: Give a command the session selectors: its ``selector`` parameter receives them as one
#: :class:`tcompact.sessions.Selector`.
with_selectors = option_group("selector", [(n, a, None) for n, a in SELECTOR_OPTIONS], _selector)


class _NoSelectors:
    """The selectors when none was given. It answers what a command run on a PATH asks (``narrows``,
    ``timezone``) without building a :class:`~tcompact.sessions.Selector` — importing pydantic and
    making the model are 0.12 s, 40 % of a cached ``inspect`` — and is the empty Selector otherwise."""

    narrows = False
    timezone = None

    def __getattr__(self, name: str):
        from ..sessions import Selector

        return getattr(Selector(), name)
