"""Replaying compression dumps offline: the library side of ``tcompact replay``.

A dump is self-contained: the compressor and its settings, the messages it started from, the
request, the response (or error) of every call of its run. Verifying re-runs the compressor on
the recorded messages with a summariser that gives back the recorded answers, and checks that the
request, the extracted summary, the messages after and the token figures come out the same.
Re-running sends the recorded request to another backend (or with another prompt) and rebuilds
the compaction from the new answer.
"""


from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dump import Dump
from .rebuild import rebuild
from .rerun import Rerun, RerunOutcome, check_rerun_options, rerun, rerun_dump
from .verify import Check, read_checked, verify, verify_paths

__all__ = ["Check", "read_checked", "verify", "verify_paths", "rebuild", "rerun", "Rerun", "check_rerun_options",
           "RerunOutcome", "rerun_dump", "table_rows"]


def table_rows(dumps: Sequence[Dump]) -> list[dict[str, Any]]:
    """One summary row per dump (time, processor, stage, tokens, reduction, latency, attempts, errors, accepted)."""
    rows = []
    for d in dumps:
        doc = d.doc
        benefit, response = doc["benefit"], doc.get("response") or {}
        rows.append({"dump": d.name, "time": doc.get("created_at"), "processor": doc["processor"]["name"],
                     "stage": doc["request"].get("stage"), "tokens_before": benefit["tokens_before"],
                     "tokens_after": benefit["tokens_after"], "reduction_ratio": benefit["reduction_ratio"],
                     "latency_s": response.get("latency_s"), "attempts": len(doc.get("attempts") or []),
                     "error_kinds": sorted({a["error_kind"] for a in doc.get("attempts") or [] if a["error_kind"]}),
                     "accepted": benefit["accepted"], "status": doc["call"]["status"]})
    return rows
