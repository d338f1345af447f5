"""Compression dumps: one self-contained JSON document per summariser call, written and read here.

A superset of openjiuwen-spec §2.11, versioned by ``schema_version``: tool version, processor and
settings, source file (path, format, sha256), the figures the compressor's trigger decided on (as
the compressor returned them), the span, the exact request (messages sent, prompt, model,
parameters — never an API key), the response or the error, every attempt of the compaction, the
messages before and after, and the benefit. Replaying a dump needs nothing but the dumps of its
run: the messages before a run are stored once, in its first call's dump, and the later calls of
the run name that dump and the sha256 of those messages (schema 2; in schema 1 every dump held
them, which made a run of many calls quadratic in size). The messages after are in the run's last
dump. Schema 3 names the trigger's span-body tokens ``trigger.body_tokens`` (``target_tokens``
before, beside the request's ``target_tokens``, the summary's budget). Secrets are redacted
(:mod:`tcompact.redact`). Failed calls get a dump too (upstream writes none).
"""

from __future__ import annotations

from .reading import Dump, RunIndex, dumps_of, load_dumps, read_dump, sibling_dump
from .values import (READABLE_SCHEMAS, SCHEMA_VERSION, content_hashes, digest, dump_name, message_dict,
                     message_from_dict, messages_of, safe_name)
from .writing import DumpContext, build_dumps, iter_dumps

__all__ = ["SCHEMA_VERSION", "READABLE_SCHEMAS", "DumpContext", "build_dumps", "iter_dumps", "content_hashes",
           "dump_name", "safe_name", "message_dict", "message_from_dict", "messages_of", "digest", "Dump", "read_dump",
           "load_dumps", "dumps_of", "sibling_dump", "RunIndex"]
