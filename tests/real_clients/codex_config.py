"""Codex's config.toml for a run against the recording server.

Up to 0.128.0 the server is a provider of its own (``model_provider = "mock"``); from 0.169 on Codex
refuses to switch a resumed thread's provider ("Cannot change this thread's model provider from
`openai` to `mock`"), so its built-in OpenAI provider is pointed at the server instead
(``openai_base_url``, with ``OPENAI_API_KEY``). Start-up calls to outside hosts are turned off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["codex_config", "builtin_provider"]

#: From this Codex release on a resumed thread keeps its provider: the built-in one is pointed at the server.
_BUILTIN_FROM = (0, 169)


def builtin_provider(version: str) -> bool:
    """Whether Codex ``version`` is pointed at the server through its built-in provider."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3]) >= _BUILTIN_FROM


def codex_config(base_url: str, *, builtin: bool, extra: Mapping[str, Any]) -> str:
    """Codex's config.toml: the recording server as a provider of its own, or (``builtin``: Codex 0.169 and
    later keep a resumed thread's provider) as the base URL of the built-in OpenAI one."""
    provider = [f'openai_base_url = "{base_url}/v1"'] if builtin else ['model_provider = "mock"']
    table = [] if builtin else ["[model_providers.mock]", 'name = "mock"', f'base_url = "{base_url}/v1"',
                                'wire_api = "responses"', 'env_key = "MOCK_API_KEY"']
    return "\n".join([
        'model = "gpt-5.1-codex"', *provider, "check_for_update_on_startup = false",
        *(f"{key} = {json.dumps(value)}" for key, value in extra.items()), *table,
        "[features]", "plugins = false", "apps = false", "[analytics]", "enabled = false", ""])

