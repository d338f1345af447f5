"""``tcompact statusline``: Claude Code's status line — context used, cost, compactions, a hint.

Claude Code runs the ``statusLine`` command after each message with a JSON document on stdin
(``session_id``, ``transcript_path``, ``model``, ``cost.total_cost_usd``, ``context_window`` — 2.1
adds ``used_percentage``, 2.0.76 gives ``current_usage`` and ``context_window_size``) and shows the
first line it prints. The line::

    Sonnet 4.5 · context 45% (90k of 200k) · $1.23 · 2 compactions, 2 handoffs

then ``· past 80%: a compaction is near`` once the context is past the trigger (``--trigger``,
default tcompact's 80%). Context comes from what the client pipes in, else from the usage of the
last request in the session file; compactions are the ``compact_boundary`` lines of the session
file, counted incrementally: a cache in the state folder (``statusline/<session>.json``) keeps
where the last run stopped, so a refresh reads only the lines written since. Handoffs are the
compaction folders of :mod:`.state` with a ``handoff.md``. Nothing here fails the client: bad
input prints ``tcompact: no status (…)``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import IO, Any

from . import state

__all__ = ["run_statusline", "status_line", "DEFAULT_TRIGGER"]

DEFAULT_TRIGGER = 80.0
_BOUNDARY = b'"compact_boundary"'


def run_statusline(argv: Sequence[str], *, stdin: IO[bytes], stdout: IO[str], stderr: IO[str],
                   env: Mapping[str, str] | None = None) -> int:
    """Print the status line for the JSON on ``stdin``; always exit status 0."""
    env = os.environ if env is None else env
    try:
        trigger = _trigger(argv)
        payload = json.loads(stdin.read(4 << 20))
        if not isinstance(payload, dict):
            raise ValueError("the input is not a JSON object")
        line = status_line(payload, trigger=trigger, env=env)
    except (ValueError, TypeError, OSError) as exc:
        line = f"tcompact: no status ({' '.join(str(exc).split())[:100]})"
        stderr.write(line + "\n")
    stdout.write(line + "\n")
    return 0


def _trigger(argv: Sequence[str]) -> float:
    words = [p for w in argv for p in w.split("=", 1)]
    if not words:
        return DEFAULT_TRIGGER
    if words[0] != "--trigger" or len(words) != 2:
        raise ValueError(f"unknown options {' '.join(argv)!r} (statusline takes --trigger PERCENT)")
    value = float(words[1])
    if not 0 < value <= 100:
        raise ValueError("--trigger must be a percentage above 0")
    return value


def status_line(payload: Mapping[str, Any], *, trigger: float = DEFAULT_TRIGGER, env: Mapping[str, str]) -> str:
    """The one line for Claude Code's status bar."""
    model = payload.get("model") if isinstance(payload.get("model"), dict) else {}
    name = str(model.get("display_name") or model.get("id") or "")
    session = str(payload.get("session_id") or "")
    transcript = payload.get("transcript_path")
    seen = _scan(transcript, session, env) if isinstance(transcript, str) and session else {}
    parts = [name] if name else []
    used, window = _context(payload, seen, str(model.get("id") or ""))
    percent = 100 * used / window if used is not None and window else None
    if percent is not None:
        parts.append(f"context {percent:.0f}% ({_k(used)} of {_k(window)})")
    cost = (payload.get("cost") or {}).get("total_cost_usd") if isinstance(payload.get("cost"), dict) else None
    if isinstance(cost, (int, float)):
        parts.append(f"${cost:,.2f}")
    handoffs = sum(1 for p in state.snapshots("claude", session, env=env) if (p / state.HANDOFF_FILE).exists()) \
        if session else 0
    count = int(seen.get("compactions", 0))
    parts.append(f"{count} compaction{'' if count == 1 else 's'}, {handoffs} handoff{'' if handoffs == 1 else 's'}")
    if percent is not None and percent >= trigger:
        parts.append(f"past {trigger:g}%: a compaction is near")
    return " · ".join(parts)


def _context(payload: Mapping[str, Any], seen: Mapping[str, Any], model: str) -> tuple[int | None, int | None]:
    """(tokens in the context, window): from the client's figures, else the session's last usage."""
    from ..counting.windows import DEFAULT_WINDOW, window_for_model

    window_info = payload.get("context_window") if isinstance(payload.get("context_window"), dict) else {}
    window = window_info.get("context_window_size")
    window = window if isinstance(window, int) and window > 0 else window_for_model(model) or DEFAULT_WINDOW
    percent = window_info.get("used_percentage")
    if isinstance(percent, (int, float)):
        return int(window * percent / 100), window
    usage = window_info.get("current_usage") if isinstance(window_info.get("current_usage"), dict) else \
        seen.get("usage")
    if not isinstance(usage, dict):
        return None, window
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(int(usage.get(k) or 0) for k in keys), window


def _k(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _scan(transcript: str, session: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The compactions and the last usage of the session file, read from where the cached count stopped."""
    try:
        info = os.stat(transcript)
    except OSError:
        return {}
    seen = _load(session, transcript, info, env)
    if seen["offset"] >= info.st_size:
        return seen
    with open(transcript, "rb") as fh:
        fh.seek(seen["offset"])
        data = fh.read(info.st_size - seen["offset"])
    end = data.rfind(b"\n") + 1  # a line still being written is read next time
    seen["compactions"] += data.count(_BOUNDARY, 0, end)
    usage = _last_usage(data[:end])
    if usage is not None:
        seen["usage"] = usage
    seen["offset"] += end
    _save(session, seen, env)
    return seen


def _cache_path(session: str, env: Mapping[str, str]) -> Any:
    return state.state_root(env) / "statusline" / f"{state.session_dir('claude', session, env=env).name}.json"


def _load(session: str, transcript: str, info: os.stat_result, env: Mapping[str, str]) -> dict[str, Any]:
    """The cached count when it is of this file as it was (same file, not shorter), else a fresh start."""
    fresh = {"path": transcript, "inode": info.st_ino, "offset": 0, "compactions": 0, "usage": None}
    try:
        seen = json.loads(_cache_path(session, env).read_bytes())
    except (OSError, ValueError):
        return fresh
    same = isinstance(seen, dict) and seen.get("path") == transcript and seen.get("inode") == info.st_ino
    return seen if same and isinstance(seen.get("offset"), int) and seen["offset"] <= info.st_size else fresh


def _save(session: str, seen: Mapping[str, Any], env: Mapping[str, str]) -> None:
    from ..artifacts import write_json
    from ..errors import TcompactError

    try:
        write_json(_cache_path(session, env), dict(seen), force=True, sync=False)
    except (OSError, TcompactError):
        pass


def _last_usage(data: bytes) -> dict[str, Any] | None:
    """The ``message.usage`` of the last assistant line in ``data``."""
    for line in reversed(data.splitlines()):
        if b'"usage"' not in line or b'"assistant"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            return message["usage"]
    return None
