"""Provider-reported usage, one entry per API request, of a session file: what the sessions view prices.

Each format reads its own (``Format.requests``: :mod:`tcompact.formats.claude_usage`,
:func:`tcompact.formats.codex_usage.codex_requests`); the value and how its figures are made alike
across the agents are :mod:`tcompact.formats.requests`'s. Codex ``token_count`` events are read by
:func:`tcompact.formats.codex_usage.usage_step`, the one reading ``inspect FILE`` uses too.
"""

from __future__ import annotations

from ..formats.requests import ANTHROPIC, OPENAI, Request, requests_of

__all__ = ["Request", "requests_of", "ANTHROPIC", "OPENAI"]
