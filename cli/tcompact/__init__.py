"""tcompact: inspect, compact and replay AI-agent session transcripts.

The library API is what ``__all__`` lists; the command line (``tcompact``) is a thin shell over
it. Heavy modules (tiktoken, rich, the formats) load on first use so that ``tcompact --help``
stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Message": "model",
    "ToolCall": "model",
    "Reasoning": "model",
    "Transcript": "model",
    "SourceFile": "model",
    "Record": "model",
    "TcompactError": "errors",
    "InputError": "errors",
    "UsageError": "errors",
    "ReadOptions": "formats",
    "read_file": "formats",
    "find_files": "formats",
    "convert_file": "conversion",
    "TokenCounter": "counting.tokens",
    "split_rounds": "rounds",
    "is_real_user": "rounds",
    "Span": "spans",
    "build_span": "compressors",
    "legal_cut_points": "spans",
    "InspectOptions": "inspection",
    "inspect_paths": "inspection",
    "inspect_file": "inspection",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tcompact' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)
