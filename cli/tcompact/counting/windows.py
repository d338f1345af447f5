"""Context-window sizes of common models, and the thresholds a compressor triggers on.

The size decides when compaction is due (openjiuwen-spec §1.3, §2.2): a compressor triggers at
``int(window × 0.8)`` tokens and only when what it would compress is at least
``int(window × 0.1)``. Unknown models get 200 000, as upstream does.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_WINDOW",
    "TRIGGER_RATIO",
    "MIN_TARGET_RATIO",
    "Window",
    "window_for_model",
    "resolve_window",
    "ratio_threshold",
    "unknown_model",
]

DEFAULT_WINDOW = 200_000
TRIGGER_RATIO = 0.8
MIN_TARGET_RATIO = 0.1

# Model-name prefixes (longest match wins) → context window in tokens.
_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-oss", 131_072),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("codex-", 400_000),
    ("claude-", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-", 1_048_576),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("qwen3", 131_072),
    ("kimi-k2", 262_144),
    ("glm-4.5", 131_072),
    ("grok-4", 256_000),
    ("llama-3", 131_072),
)


@dataclass(frozen=True, slots=True)
class Window:
    """A context window and where its size came from ("option", "model M", "default", ...)."""

    tokens: int
    source: str


def ratio_threshold(window: int, ratio: float) -> int:
    """``max(int(window × ratio), 1)`` (spec §1.3)."""
    return max(int(window * ratio), 1)


def window_for_model(model: str | None) -> int | None:
    """The context window of a known model, else None."""
    if not model:
        return None
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name.endswith("[1m]"):
        return 1_000_000
    best = ("", 0)
    for prefix, size in _WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best[0]):
            best = (prefix, size)
    return best[1] or None


def resolve_window(*, context_window: int | None = None, model: str | None = None,
                   file_model: str | None = None, recorded: int | None = None) -> Window:
    """Window from, in order: the option, the ``--model`` table, the model in the file, the window
    the file recorded (Codex ``model_context_window``), the default."""
    if context_window:
        return Window(context_window, "--context-window")
    size = window_for_model(model)
    if size:
        return Window(size, f"model {model}")
    size = window_for_model(file_model)
    if size:
        return Window(size, f"model {file_model} (from the file)")
    if recorded:
        return Window(recorded, "recorded in the file")
    return Window(DEFAULT_WINDOW, "default")


def unknown_model(model: str | None, *, context_window: int | None, encoding: str | None,
                  called: bool = False) -> str | None:
    """What a ``--model`` that no table knows leaves to the other sources, said (None: nothing is left
    to them — a known model, or the window and the tokenizer both given — or ``called``: the model is
    the one a summariser calls, a server's name, and does what it was given for)."""
    from .encodings import encoding_for_model

    if not model or called or window_for_model(model) is not None:
        return None
    unknown_encoding = encoding is None and encoding_for_model(model)[1]
    said = ([] if context_window else ["the context window is the file's (its model's, or the one it recorded, else "
                                       f"{DEFAULT_WINDOW:,} tokens)"]) + \
        (["tokens are counted with o200k_base, approximately"] if unknown_encoding else [])
    if not said:
        return None
    hints = ([] if context_window else ["--context-window N sets the window"]) + \
        (["--encoding NAME the tokenizer" if not context_window else "--encoding NAME sets the tokenizer"]
         if unknown_encoding else [])
    return f"--model {model}: tcompact knows no such model, so {' and '.join(said)} — {', '.join(hints)}"

