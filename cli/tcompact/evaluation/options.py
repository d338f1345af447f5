"""What ``tcompact eval`` (and ``batch eval``) can be told, validated at the boundary.

The chains and their settings, the summariser and how its calls are made are compact's own
(:meth:`EvalOptions.compact_options` is the ``compact --now`` run of one chain, made and checked
once, with the options); the rest says what is measured: the canaries (``seed``, ``per_kind``) and
the needed-token recall (``cuts``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..compaction import CompactOptions
from ..compressors import Override, names, parse_chain, parse_sets
from ..defaults import DEFAULT_CHAIN, DEFAULT_SUMMARIZER
from ..errors import UsageError
from ..formats import ReadOptions
from ..summarizers import RunSettings

__all__ = ["EvalOptions", "METRICS", "default_chains"]

#: What ``--metric`` can name: the planted canaries, the needed-token recall, or both.
METRICS = ("canaries", "needed", "both")


class EvalOptions(BaseModel):
    """What ``tcompact eval`` can be told (validated here, at the boundary)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chains: tuple[str, ...] = Field(default=(), description="Chains to run; empty = every compressor and the "
                                    "default chain.")
    default_chain: str = Field(DEFAULT_CHAIN, min_length=1, description="The default chain of compact.")
    metric: Literal["canaries", "needed", "both"] = Field("canaries", description="What is measured.")
    seed: int = Field(1, ge=0, description="Seed of the canary texts and places.")
    per_kind: int = Field(2, ge=1, le=20, description="Canaries of each kind per session.")
    cuts: int = Field(4, ge=1, le=50, description="Needed tokens: cut points per session at most.")
    summarizer: str = Field(DEFAULT_SUMMARIZER, description="extractive, openai or replay.")
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(None, repr=False, description="The openai summariser's key (default: "
                                "OPENAI_API_KEY where the compaction runs); never in a fingerprint or report.")
    run: RunSettings = Field(default_factory=RunSettings, description="How summariser calls are made.")
    replay_dir: Path | None = None
    dump_dir: Path | None = Field(None, description="Where the dumps of the summariser calls go (none: not written).")
    encoding: str | None = None
    context_window: int | None = None  # checked with the rest of compact's options (CompactOptions)
    sets: tuple[str, ...] = ()
    config: Path | None = None
    preserve: str | None = None
    transcript: str | None = None
    format: str | None = None
    full_history: bool = False
    skip_bad_lines: bool = False
    #: each chain evaluated, in order, and the settings of its ``compact --now`` run (made once, here)
    _runs: dict[str, CompactOptions] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        """Every chain's options checked as ``compact`` checks them (an unknown compressor, a bad setting or a
        summariser without what it needs is an error before any work), and a ``--set`` that fits none."""
        chains = list(dict.fromkeys(self.chains)) or default_chains(self.default_chain)
        overrides = parse_sets(self.sets)
        self._runs = {spec: self._compact_options(spec, overrides) for spec in chains}
        for override in overrides:
            if not any(_fits(override, spec) for spec in chains):
                raise UsageError(f"--set {override.text!r} fits no chain evaluated",
                                 hint=f"the chains are: {' '.join(chains)}; see `tcompact compressors`")

    @property
    def canaries(self) -> bool:
        """Whether canaries are planted and scored."""
        return self.metric in ("canaries", "both")

    @property
    def needed(self) -> bool:
        """Whether the needed-token recall is measured."""
        return self.metric in ("needed", "both")

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> EvalOptions:
        """A copy with ``update``, made again (checked, and every chain's settings made from it)."""
        return type(self)(**{**dict(self), **(update or {})})

    def chain_list(self) -> list[str]:
        """The chains to run, in order."""
        return list(self._runs)

    def read_options(self) -> ReadOptions:
        """How the sessions are read."""
        return ReadOptions(format=self.format, full_history=self.full_history, skip_bad_lines=self.skip_bad_lines,
                           keep_raw=True)

    def compact_options(self, chain: str) -> CompactOptions:
        """The settings of the ``compact --now`` run of one chain evaluated."""
        return self._runs[chain]

    def _compact_options(self, chain: str, overrides: tuple[Override, ...]) -> CompactOptions:
        """The ``--set`` values for its compressors (one for a compressor of another chain evaluated is left
        out; one that fits no chain is refused)."""
        return CompactOptions(chain=chain, overrides=tuple(o for o in overrides if _fits(o, chain)),
                              config=self.config, summarizer=self.summarizer, model=self.model,
                              base_url=self.base_url,
                              api_key=self.api_key if self.api_key is not None else os.environ.get("OPENAI_API_KEY"),
                              run=self.run, replay_dir=self.replay_dir, encoding=self.encoding,
                              context_window=self.context_window, now=True, transcript=self.transcript,
                              preserve=self.preserve, read=self.read_options())


def _fits(override: Override, chain: str) -> bool:
    """Whether a ``--set`` is for a compressor of the chain (named, or one that has the setting)."""
    compressors = parse_chain(chain)
    if override.target is not None:
        return any(c.name == override.target for c in compressors)
    return any(override.key in c.settings_model.model_fields for c in compressors)


def default_chains(default: str) -> list[str]:
    """Every compressor alone, then the default chain of compact when it is not one of them."""
    return names() + ([default] if default not in names() else [])
