"""The registry of summariser backends, beside the compressors' one: extractive (offline, the default),
openai (any OpenAI-compatible endpoint) and replay (answers recorded in dumps).

A backend is one class of the family (:class:`~tcompact.summarizers.base.Summarizer`): its name (the
``--summarizer`` choice and the dump label), its capabilities, its settings (a pydantic model whose
fields say which options are its own, refused with another backend, and what it needs when a
compressor of the chain calls it) and how it is built. The registry is an explicit tuple, a
duplicate name fails at import, and an unknown name is an error listing the known ones.
:class:`RunSettings` is how summariser calls are made (deadline, retries, concurrency, request mode,
the model's window): validated once, where a command builds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..defaults import CONCURRENCY, RETRIES
from ..errors import UsageError
from ..registry import by_name
from .base import BackendSettings, Summarizer
from .extractive import ExtractiveSummarizer
from .openai_compat import MODES, OpenAISummarizer
from .recorded import ReplaySummarizer

__all__ = ["RunSettings", "REGISTRY", "names", "get", "check", "build", "by_settings", "SummarizerOptions",
           "MODES", "calls_model"]


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
    """What a backend's settings are made of (:class:`tcompact.compaction.CompactOptions` is one)."""

    summarizer: str
    model: str | None
    base_url: str | None
    api_key: str | None
    replay_dir: Path | None
    run: RunSettings


#: Every backend, in the order of ``--summarizer``'s help; a new backend is one module and one entry here.
REGISTRY: tuple[type[Summarizer], ...] = (ExtractiveSummarizer, OpenAISummarizer, ReplaySummarizer)


def by_settings(registry: tuple[type[Summarizer], ...]) -> dict[type[BackendSettings], type[Summarizer]]:
    """Each backend by its settings model; a model shared by two backends is an error (at import for REGISTRY)."""
    index = {b.settings_model: b for b in registry}
    if len(index) != len(registry):
        raise RuntimeError("two summarisers share a settings model")
    return index


by_name(REGISTRY, "summarisers"), by_settings(REGISTRY)  # a name or a settings model given twice fails here


def names() -> list[str]:
    """Every backend name, in registry order."""
    return [b.name for b in REGISTRY]


def get(name: str) -> type[Summarizer]:
    """The backend called ``name``; an unknown name is an error listing the known ones."""
    backend = by_name(REGISTRY, "summarisers").get(name)
    if backend is None:
        known = names()
        raise UsageError(f"unknown summariser {name!r}", hint=f"use {', '.join(known[:-1])} or {known[-1]}")
    return backend


def calls_model(name: str) -> bool:
    """Whether the backend called ``name`` calls a model (``--model`` names it), as its class declares."""
    return get(name).calls_model


def check(options: SummarizerOptions, *, used: bool) -> BackendSettings | None:
    """The chosen backend's validated settings: the backend is known, no other backend's option is given,
    and — when a compressor of the chain calls it (``used``) — it has what it needs (None when not used)."""
    chosen = get(options.summarizer)
    for owner in REGISTRY:
        given = owner.settings_model.own_given(options) if owner is not chosen else []
        if given:
            raise UsageError(f"{given[0]} is an option of the {owner.name} summariser, and the summariser is "
                             f"{chosen.name}", hint=f"add --summarizer {owner.name}, or leave {given[0]} out")
    return chosen.settings_model.of(options, chosen.name) if used else None


def build(settings: BackendSettings, *, counter: Any, progress: Any = None) -> Summarizer:
    """The backend whose settings these are (:func:`check` made them), built."""
    return by_settings(REGISTRY)[type(settings)].build(settings, counter=counter, progress=progress)
