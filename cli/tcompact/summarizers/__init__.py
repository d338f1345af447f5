"""The registry of summariser backends, beside the compressors' one: extractive (offline, the default),
openai (any OpenAI-compatible endpoint) and replay (answers recorded in dumps).

A backend is a few declarations: its name (the ``--summarizer`` choice and the dump label), which
options are its own (refused with another backend), what it needs when a compressor of the chain
calls it, and how it is built; the backend modules are imported only when one is built. The
registry is an explicit tuple, a duplicate name fails at import, and an unknown name is an error
listing the known ones. :class:`RunSettings` is how summariser calls are made (deadline, retries,
concurrency, request mode, the model's window): validated once, where a command builds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..defaults import CONCURRENCY, RETRIES
from ..errors import UsageError
from ..registry import by_name
from .base import Summarizer

__all__ = ["RunSettings", "Backend", "REGISTRY", "names", "get", "check", "build", "SummarizerOptions", "MODES",
           "calls_model"]

#: How the openai backend sends a conversation: as chat messages, or as one serialised text.
MODES = ("conversation", "serialized")


class RunSettings(BaseModel):
    """How summariser calls are made. Each field names the option that sets it and what it must be, so
    that a bad value is refused with the option's own words (:meth:`checked`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retries: int = Field(RETRIES, ge=0, description="Retries of a transient summariser error.",
                         json_schema_extra={"option": "--max-retries", "rule": "must be 0 or more"})
    timeout: float | None = Field(None, gt=0, description="Deadline in seconds for each summariser attempt (the "
                                  "whole answer); None: derived from each call's size and the server's measured "
                                  "speed.", json_schema_extra={"option": "--timeout",
                                                          "rule": "must be a positive number of seconds"})
    concurrency: int = Field(CONCURRENCY, ge=1, description="Summariser calls run at once (round-level).",
                             json_schema_extra={"option": "--concurrency", "rule": "must be 1 or more"})
    summarizer_window: int | None = Field(None, ge=1, description="openai: the summariser model's context window "
                                          "in tokens (None: what the server reports).",
                                          json_schema_extra={"option": "--summarizer-window",
                                                             "rule": "must be 1 or more"})
    request_mode: str | None = Field(None, description="openai: conversation or serialized (None: conversation).")

    @field_validator("request_mode")
    @classmethod
    def _known_mode(cls, value: str | None) -> str | None:
        if value is not None and value not in MODES:
            raise UsageError(f"unknown --request-mode {value!r}", hint=f"use {' or '.join(MODES)}")
        return value

    @classmethod
    def checked(cls, **values: Any) -> RunSettings:
        """The settings, or a :class:`~tcompact.errors.UsageError` naming the option of the first bad value."""
        try:
            return cls(**values)
        except ValidationError as exc:
            field = str(exc.errors()[0]["loc"][0])
            extra = cls.model_fields[field].json_schema_extra
            assert isinstance(extra, dict)
            raise UsageError(f"{extra['option']} {extra['rule']}") from None


class SummarizerOptions(Protocol):
    """What building a backend reads (:class:`tcompact.compaction.CompactOptions` is one)."""

    summarizer: str
    model: str | None
    base_url: str | None
    api_key: str | None
    replay_dir: Path | None
    run: RunSettings


@dataclass(frozen=True)
class Backend:
    """One summariser backend.

    ``options``: its own options, as (attribute of the options or of their run settings, the option's
    name); ``needs``: what it must be given when a compressor calls it, as (attribute, option, hint);
    ``build``: the backend for these options; ``reruns``: it can answer a dump's request again
    (``replay --summarizer``); ``reads_prompt``: it follows the instruction prompt (a model does)."""

    name: str
    description: str
    build: Callable[[SummarizerOptions, Any], Summarizer]
    options: tuple[tuple[str, str], ...] = ()
    needs: tuple[tuple[str, str, str], ...] = ()
    reruns: bool = False
    reads_prompt: bool = False


def _extractive(options: SummarizerOptions, counter: Any) -> Summarizer:
    from .extractive import ExtractiveSummarizer

    return ExtractiveSummarizer(counter)


def _openai(options: SummarizerOptions, counter: Any) -> Summarizer:
    from .openai_compat import OpenAISummarizer

    run = options.run
    mode = {"mode": run.request_mode} if run.request_mode else {}
    return OpenAISummarizer(model=str(options.model), base_url=options.base_url, api_key=options.api_key,
                            timeout=run.timeout, context_window=run.summarizer_window, counter=counter,
                            progress=getattr(options, "progress", None), **mode)


def _replay(options: SummarizerOptions, counter: Any) -> Summarizer:
    from ..dump import dumps_of  # the one dump reader (dumps are written and read there)
    from .recorded import ReplaySummarizer

    return ReplaySummarizer([d.doc for d in dumps_of(str(options.replay_dir))], origin=str(options.replay_dir))


REGISTRY: tuple[Backend, ...] = (
    Backend("extractive", "offline: a state snapshot built from the transcript itself, no model", _extractive,
            reruns=True),
    Backend("openai", "any OpenAI-compatible chat-completions endpoint", _openai,
            options=(("request_mode", "--request-mode"), ("base_url", "--base-url"),
                     ("summarizer_window", "--summarizer-window")),
            needs=(("model", "--model", "e.g. --model gpt-4o-mini or your vLLM model"),), reruns=True,
            reads_prompt=True),
    Backend("replay", "answers recorded in compression dumps, offline", _replay,
            options=(("replay_dir", "--replay-dir"),), needs=(("replay_dir", "--replay-dir",
                                                              "point it at a folder of dumps"),)),
)
_BY_NAME: dict[str, Backend] = by_name(REGISTRY, "summarisers")


def names() -> list[str]:
    """Every backend name, in registry order."""
    return [b.name for b in REGISTRY]


def get(name: str) -> Backend:
    """The backend called ``name``; an unknown name is an error listing the known ones."""
    backend = _BY_NAME.get(name)
    if backend is None:
        known = names()
        raise UsageError(f"unknown summariser {name!r}", hint=f"use {', '.join(known[:-1])} or {known[-1]}")
    return backend


def calls_model(name: str) -> bool:
    """Whether the backend called ``name`` calls a model (``--model`` names it), as its entry says."""
    return any(attribute == "model" for attribute, _, _ in get(name).needs)


def _given(options: SummarizerOptions, attribute: str) -> Any:
    return getattr(options.run if attribute in RunSettings.model_fields else options, attribute)


def check(options: SummarizerOptions, *, used: bool) -> None:
    """The backend is known, no other backend's option is given, and — when a compressor of the chain
    calls it (``used``) — it has what it needs."""
    chosen = get(options.summarizer)
    for owner in REGISTRY:
        for attribute, option in owner.options:
            if owner is not chosen and _given(options, attribute) is not None:
                raise UsageError(f"{option} is an option of the {owner.name} summariser, and the summariser is "
                                 f"{chosen.name}", hint=f"add --summarizer {owner.name}, or leave {option} out")
    for attribute, option, hint in chosen.needs if used else ():
        if not _given(options, attribute):
            raise UsageError(f"--summarizer {chosen.name} needs {option}", hint=hint)


def build(options: SummarizerOptions, counter: Any) -> Summarizer:
    """The backend the options name, built (its options were checked where they were given: :func:`check`)."""
    return get(options.summarizer).build(options, counter)
