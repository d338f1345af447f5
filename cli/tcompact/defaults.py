"""Defaults that both the library and the command line name, kept in one light module.

The commands read them at import time to show them in ``--help``, so this module imports nothing.
Each is written here once; the option tables, the settings values and the summarisers name them.
"""

from __future__ import annotations

__all__ = ["DEFAULT_CHAIN", "DEFAULT_SUMMARIZER", "RETRIES", "CONCURRENCY", "MIN_DEADLINE"]

#: The chain ``compact``, ``batch compact`` and ``eval`` use when none is named, chosen by
#: ``tcompact eval`` over the shared sessions (README, "Default chain").
DEFAULT_CHAIN = "working-set"

#: The summariser when none is named: offline, no model.
DEFAULT_SUMMARIZER = "extractive"

#: Retries of a transient summariser error (``--max-retries``).
RETRIES = 2

#: Summariser calls run at once (``--concurrency``; round-level).
CONCURRENCY = 4

#: The least deadline in seconds of one summariser attempt when ``--timeout`` names none (the
#: derived deadline is never shorter: :mod:`tcompact.summarizers.progress`).
MIN_DEADLINE = 60.0
