"""The registry of compressors, and chains of them with their settings.

One name per compressor, declared once as its ``name``; the registry is an explicit tuple and a
duplicate name fails at import. Settings come from defaults, a TOML/JSON ``--config`` file
(a table per compressor), ``--trigger-ratio`` and :class:`Override` values (``--set key=value``,
parsed once by :func:`parse_set`; ``name.key=value`` aims at one compressor of a chain),
validated by each compressor's pydantic model. The span previews of ``inspect`` ask the
compressor here too (:func:`build_span`), so the preview is the layout it compacts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError, UsageError, bad_value
from ..model import Message
from ..registry import by_name
from ..spans import Span
from .base import CompressionResult, Compressor, Context, Settings
from .current_round import CurrentRound
from .dialogue import Dialogue
from .full import Full
from .mask import Mask
from .micro import Micro
from .offload import Offload
from .round_level import RoundLevel
from .truncate import Truncate
from .working_set import WorkingSetCompressor

__all__ = ["REGISTRY", "get", "names", "parse_chain", "Override", "parse_set", "parse_sets", "chain_settings",
           "describe", "span_names", "build_span", "keep_recent_default", "Compressor", "Context",
           "CompressionResult", "Settings"]

REGISTRY: tuple[type[Compressor], ...] = (Truncate, Offload, Micro, Mask, CurrentRound, Dialogue, RoundLevel, Full,
                                           WorkingSetCompressor)
by_name(REGISTRY, "compressors")  # a name registered twice fails at import


def names() -> list[str]:
    """Every compressor name, in registry order."""
    return [c.name for c in REGISTRY]


def get(name: str) -> Compressor:
    """The compressor called ``name``; an unknown name is an error listing the known ones."""
    cls = next((c for c in REGISTRY if c.name == name), None)  # the registry as it is now: one entry adds one
    if cls is None:
        raise UsageError(f"unknown compressor {name!r}", hint=f"use one of: {', '.join(names())}")
    return cls()


def parse_chain(spec: str) -> list[Compressor]:
    """``"truncate,dialogue"`` → the compressors, in order."""
    parts = [p.strip() for p in spec.split(",")]
    if not spec.strip() or any(not p for p in parts):
        raise UsageError(f"bad compressor chain {spec!r}", hint="name one or more compressors: -c truncate,dialogue")
    return [get(p) for p in parts]


@dataclass(frozen=True)
class Override:
    """One setting given on the command line: ``key`` = ``value`` for the compressor ``target``, or for every
    compressor of the chain that has the setting (``target`` None). ``text`` is how the user wrote it."""

    key: str
    value: Any
    target: str | None = None
    text: str = ""


def parse_set(item: str) -> Override:
    """``--set key=value`` or ``--set compressor.key=value``; the value is JSON when it parses as JSON."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"bad --set {item!r}", hint="write --set key=value or --set compressor.key=value")
    target, dot, field = key.strip().rpartition(".")
    return Override(field, _value(raw), target if dot else None, item)


def parse_sets(items: Sequence[str] | None) -> tuple[Override, ...]:
    """Every ``--set`` option, parsed."""
    return tuple(parse_set(item) for item in items or ())


def chain_settings(chain: Sequence[Compressor], *, overrides: Sequence[Override] = (), config: Path | None = None,
                   trigger_ratio: float | None = None) -> list[Settings]:
    """Validated settings for each compressor of a chain, from a config file, ``--trigger-ratio`` (the
    ``trigger_context_ratio`` of each that has one) and the overrides, in that order."""
    values: dict[str, dict[str, Any]] = {c.name: {} for c in chain}
    if config is not None:
        for name, table in _read_config(config).items():
            if name not in values:
                raise UsageError(f"the config has settings for {name!r}, which is not in the chain",
                                 path=str(config), hint=f"the chain is: {', '.join(values)}")
            values[name].update(table)
    if trigger_ratio is not None:
        for name in _ratio_targets(chain):
            values[name]["trigger_context_ratio"] = trigger_ratio
    for override in overrides:
        for name in _targets(override, chain):
            values[name][override.key] = override.value
    return [_validate(c, values[c.name]) for c in chain]


def _has(compressor: type[Compressor] | Compressor, key: str) -> bool:
    return key in compressor.settings_model.model_fields


def _ratio_targets(chain: Sequence[Compressor]) -> list[str]:
    hits = [c.name for c in chain if _has(c, "trigger_context_ratio")]
    if not hits:
        having = [c.name for c in REGISTRY if _has(c, "trigger_context_ratio")]
        raise UsageError("--trigger-ratio applies to no compressor of the chain",
                         hint=f"it sets trigger_context_ratio of {', '.join(having[:-1])} and {having[-1]}")
    return hits


def _targets(override: Override, chain: Sequence[Compressor]) -> list[str]:
    """The compressors of the chain an override is for."""
    if override.target is not None:
        if override.target not in {c.name for c in chain}:
            raise UsageError(f"--set {override.text!r} names {override.target!r}, which is not in the chain",
                             hint=f"the chain is: {', '.join(c.name for c in chain)}")
        return [override.target]
    hits = [c.name for c in chain if _has(c, override.key)]
    if not hits:
        raise UsageError(f"no compressor in the chain has a setting {override.key!r}",
                         hint="run `tcompact compressors` to see every setting")
    return hits


def _validate(compressor: Compressor, values: Mapping[str, Any]) -> Settings:
    try:
        return compressor.settings_model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        known = ", ".join(compressor.settings_model.model_fields)
        raise UsageError(bad_value(f"{compressor.name} setting {where}" if where else f"{compressor.name} settings",
                                   first), hint=f"settings of {compressor.name}: {known}") from None


def _value(raw: str) -> Any:
    import orjson

    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def _read_config(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the config: {exc.strerror}", path=str(path), hint="check the path") from None
    try:
        if path.suffix.lower() == ".json":
            import orjson

            parsed = orjson.loads(data)
        else:
            import tomllib

            parsed = tomllib.loads(data.decode("utf-8"))
    except Exception as exc:  # tomllib and orjson raise their own error types
        raise InputError(f"the config is not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}",
                         path=str(path), hint="fix the file") from None
    if not isinstance(parsed, dict) or not all(isinstance(v, dict) for v in parsed.values()):
        raise InputError("the config must hold one table of settings per compressor", path=str(path),
                         hint="e.g. [dialogue]\\ntrigger_context_ratio = 0.7")
    return parsed


def describe() -> list[dict[str, Any]]:
    """Every compressor with its description and settings (name, type, default, description)."""
    out = []
    for cls in REGISTRY:
        fields = []
        for key, info in cls.settings_model.model_fields.items():
            default = info.get_default(call_default_factory=True)
            fields.append({"name": key, "type": _type_name(info.annotation), "default": default,
                           "description": info.description or ""})
        out.append({"name": cls.name, "description": cls.description, "uses_summarizer": cls.uses_summarizer,
                    "settings": fields})
    return out


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "")


def span_names() -> list[str]:
    """The compressors that have a span (``inspect --spans``), in registry order."""
    return [c.name for c in REGISTRY if c.span is not Compressor.span]


def build_span(name: str, messages: Sequence[Message], *, keep_recent: int | None = None) -> Span:
    """The span compressor ``name`` uses with its default settings (``keep_recent`` newest messages
    kept raw instead of its default): the compressor is asked, so this is the layout it compacts."""
    compressor = get(name)
    span = compressor.span(messages, compressor.preview_settings(keep_recent))
    if span is None:
        raise UsageError(f"{name} has no span layout", hint=f"use one of: {', '.join(span_names())}")
    return span


def keep_recent_default(name: str) -> int | None:
    """The raw tail compressor ``name`` keeps by default (None when its span has no such setting)."""
    compressor = get(name)
    field = compressor.keep_recent_setting
    return None if field is None else getattr(compressor.preview_settings(), field)
