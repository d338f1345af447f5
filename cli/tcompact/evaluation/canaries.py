"""The facts ``tcompact eval`` plants: seven kinds, each a small family of realistic templates.

A canary is something an agent resuming a compacted session must still know: an error line that
appeared inside a tool output, a file it wrote, a command it ran and what came of it, a
constraint and a preference the user stated, a decision it took, and one fact stated once early
on. Each is drawn from a seeded random generator, so the same seed plants the same texts; every
text carries a fresh token (six letters and digits) that the session does not hold already, so
finding it after compaction can only mean it survived. Values are plain ASCII without quotes or
backslashes, so that they read the same inside JSON tool arguments as in message text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["KINDS", "Canary", "draw", "fresh_token"]

#: The canary kinds, in report order. ``early_fact`` is the hard one: a passing remark, stated once.
KINDS = ("error_line", "file_written", "command", "user_constraint", "user_preference", "decision", "early_fact")

_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"

_ERRORS = (
    "ERROR: could not connect to db-{t}.internal:5432: connection refused",
    "ValueError: invalid shard id {t} (expected 8 hex digits)",
    "fatal: unable to access 'https://git.example.com/{t}.git/': Could not resolve host",
    "error[E0425]: cannot find value `{t}_limit` in this scope",
)
_PATHS = ("src/{t}/__init__.py", "docs/notes_{t}.md", "config/{t}-settings.toml", "scripts/migrate_{t}.sh")
_COMMANDS = (  # (command, output line, exit code)
    ("python scripts/reindex.py --shard {t}", "reindexed {n} documents into shard {t}", 0),
    ("make deploy-{t}", "make: *** [Makefile:{m}: deploy-{t}] Error 2", 2),
    ("./gradlew :{t}:test --offline", "{n} tests completed, {m} failed in module {t}", 1),
    ("du -sh /var/cache/{t}", "{m}M /var/cache/{t}", 0),
)
_CONSTRAINTS = (
    "Hard constraint: never modify anything under vendor/{t}/.",
    "Do not push to the remote branch release-{t} until I say so.",
    "Keep the public function load_{t}() backwards compatible.",
    "You must not add new dependencies to the {t} module.",
)
_PREFERENCES = (
    "I prefer tabs over spaces in {t}.cfg files.",
    "Please name new test files test_{t}_*.py, that is my convention.",
    "I like short commit messages prefixed with [{t}].",
    "Prefer pathlib over os.path in the {t} helpers.",
)
_DECISIONS = (
    "Decision: we cache the {t} lookups in SQLite instead of Redis, because the deployment has no Redis.",
    "I decided to keep the {t}_v2 endpoint and deprecate the old one rather than remove it.",
    "We will use the streaming parser for {t} files, since they can exceed 2 GB.",
    "I chose to pin {t}-client to 4.2.1 because 4.3 breaks the retry logic.",
)
_FACTS = (
    "For reference, the staging host of this project is stg-{t}.example.net on port {m}.",
    "Note that the {t} service account is svc-{t}@example.iam and it only has read access.",
    "The nightly backup of {t} runs at 03:{m2} UTC and takes about {m} minutes.",
    "The license server for {t} answers on port {m} of lic-{t}.example.org.",
)


@dataclass(frozen=True, slots=True)
class Canary:
    """One planted fact: ``text`` is what goes into the session, ``values`` what must survive verbatim.

    For a file the text is the content written and the value its path; for a command the values
    are the command and the line of output that says how it ended; ``exit_code`` is that
    command's exit status (0 for the other kinds)."""

    id: str
    kind: str
    text: str
    values: tuple[str, ...]
    command: str = ""
    exit_code: int = 0
    token: str = ""


def fresh_token(rng: random.Random, taken: str) -> str:
    """Six letters and digits that do not occur in ``taken`` (the session's text)."""
    while True:
        token = "".join(rng.choice(_ALPHABET) for _ in range(6))
        if token not in taken and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            return token


def draw(rng: random.Random, kind: str, number: int, *, taken: str) -> Canary:
    """The ``number``-th canary of ``kind``, its token fresh against ``taken``."""
    t = fresh_token(rng, taken)
    fill = {"t": t, "n": rng.randint(100, 9999), "m": rng.randint(10, 99), "m2": rng.randint(10, 59)}
    cid = f"{kind}-{number}"
    if kind == "file_written":
        path = rng.choice(_PATHS).format(**fill)
        return Canary(cid, kind, f"# {t}\nwritten for the {t} task\n", (path,), token=t)
    if kind == "command":
        command, output, code = rng.choice(_COMMANDS)
        command, output = command.format(**fill), output.format(**fill)
        return Canary(cid, kind, output, (command, output), command=command, exit_code=code, token=t)
    templates = {"error_line": _ERRORS, "user_constraint": _CONSTRAINTS, "user_preference": _PREFERENCES,
                 "decision": _DECISIONS, "early_fact": _FACTS}[kind]
    text = rng.choice(templates).format(**fill)
    return Canary(cid, kind, text, (text,), token=t)
