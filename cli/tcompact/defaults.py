"""Defaults that both the library and the command line name, kept in one light module.

The commands read them at import time to show them in ``--help``, so this module imports nothing.
"""

from __future__ import annotations

__all__ = ["DEFAULT_CHAIN"]

#: The chain ``compact``, ``batch compact`` and ``eval`` use when none is named, chosen by
#: ``tcompact eval`` over the shared sessions (README, "Default chain").
DEFAULT_CHAIN = "working-set"
