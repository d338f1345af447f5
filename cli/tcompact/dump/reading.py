"""Reading dumps: every dump is checked before use (JSON, schema, fields, content hashes), and a later
call of a run gets the messages before the run from the dump of the call that holds them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from .values import READABLE_SCHEMAS, content_hashes, digest

__all__ = ["Dump", "read_dump", "load_dumps", "dumps_of", "dump_files", "sibling_dump", "RunIndex"]

_REQUIRED = ("processor", "run", "call", "trigger", "span", "request", "context_before", "benefit", "hashes",
             "encoding")

#: The dumps of the folders looked into, by (run id, call number), each folder indexed once.
RunIndex = dict[Path, dict[tuple[str, int], Path]]
OnError = Callable[[Path, InputError], None]
#: ``{epoch_ms}_{processor}_{session}.json`` (:func:`tcompact.dump.values.dump_name`)
_DUMP_NAME = re.compile(r"^\d+_[A-Za-z0-9.-]+_[A-Za-z0-9_.-]+\.json$")


@dataclass(frozen=True)
class Dump:
    """One dump file and its parsed document."""

    path: Path
    doc: Mapping[str, Any]

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name


def read_dump(path: Path) -> Dump:
    """One dump, checked: an unreadable, damaged, unknown or edited dump is an :class:`InputError`."""
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not a valid JSON dump ({exc.msg} at line {exc.lineno})", path=str(path),
                         hint="the dump is truncated or damaged; compact again to get a new one") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path), hint="check the permissions") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise InputError("not a tcompact compression dump (no schema_version)", path=str(path),
                         hint="pass dumps written by tcompact compact --dump-dir")
    if doc["schema_version"] not in READABLE_SCHEMAS or isinstance(doc["schema_version"], bool):
        readable = f"{', '.join(map(str, READABLE_SCHEMAS[:-1]))} and {READABLE_SCHEMAS[-1]}"
        raise InputError(f"schema_version {doc['schema_version']!r} is not supported (this tcompact reads "
                         f"{readable})", path=str(path), hint="replay it with the tcompact that wrote it")
    _check_fields(doc, path)
    return Dump(path, doc)


def _check_fields(doc: dict[str, Any], path: Path) -> None:
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise InputError(f"field {missing[0]} is missing", path=str(path), hint="the dump was edited or cut")
    run, before = doc["run"], doc["context_before"]
    if not (isinstance(run, dict) and isinstance(run.get("id"), str) and isinstance(run.get("call"), int)):
        raise InputError("field run is not {\"id\": str, \"call\": int, ...}", path=str(path),
                         hint="the dump was edited or cut")
    if not (isinstance(before, dict) and (isinstance(before.get("messages"), list) or
                                          isinstance(before.get("in_call"), int))):
        raise InputError("field context_before holds neither messages nor the call that has them", path=str(path),
                         hint="the dump was edited or cut")
    recorded = doc["hashes"] if isinstance(doc["hashes"], dict) else {}
    for part, value in content_hashes(doc).items():
        if recorded.get(part) != value:
            raise InputError(f"field {part} does not match its recorded hash", path=str(path),
                             hint="the dump was edited after it was written; compact again to get a new one")


def dump_files(folder: Path) -> list[Path]:
    """The dumps of a folder: its own ``*.json`` files, and below it the files named as dumps are
    (``{epoch_ms}_{processor}_{session}.json``) — tcompact's state folder keeps each run's dumps in
    ``sessions/<run>/dumps/``, beside a report and an offload store that are no dumps."""
    own = sorted(folder.glob("*.json"))
    below = sorted(p for p in folder.rglob("*.json") if p.parent != folder and _DUMP_NAME.match(p.name))
    return own + below


def dumps_of(folder: str | Path) -> list[Dump]:
    """Every dump of a folder (:func:`dump_files`), or the one dump file named, each checked (the replay
    summariser's answers: it needs no messages, so a run's shared context is not resolved)."""
    path = Path(folder)
    files = dump_files(path) if path.is_dir() else [path]
    if not files or not all(f.exists() for f in files):
        raise InputError("no dumps to replay from", path=str(folder), hint="pass --replay-dir with dump files")
    return [read_dump(f) for f in files]


def load_dumps(paths: Iterable[str | Path], *, on_error: OnError | None = None) -> list[Dump]:
    """Read dumps (files, or the dumps of folders: :func:`dump_files`), each checked, the shared context of a run
    resolved. A dump that cannot be used raises, or, with ``on_error``, is handed to it and left out."""
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = dump_files(p)
            if not found:
                raise InputError("no dumps in this folder or below it", path=str(p),
                                 hint="pass a folder written by --dump-dir")
            files += found
        elif p.exists():
            files.append(p)
        else:
            raise InputError("no such file or folder", path=str(p), hint="check the path")
    dumps = []
    for f in files:
        try:
            dumps.append(read_dump(f))
        except InputError as exc:
            _fail_or_raise(f, exc, on_error)
    return _with_shared_context(dumps, on_error)


def _fail_or_raise(path: Path, exc: InputError, on_error: OnError | None) -> None:
    if on_error is None:
        raise exc
    on_error(path, exc)


def _with_shared_context(dumps: list[Dump], on_error: OnError | None) -> list[Dump]:
    """Dumps whose ``context_before`` names another call of their run get that call's messages.

    The named dump is taken from those given, else from the dump's own folder; its messages must
    match the recorded sha256.
    """
    given = {(d.doc["run"]["id"], d.doc["run"]["call"]): d for d in dumps if "messages" in d.doc["context_before"]}
    folders: RunIndex = {}
    checked: set[tuple[str, int]] = set()
    out = []
    for d in dumps:
        try:
            out.append(d if "messages" in d.doc["context_before"] else _shared(d, given, folders, checked))
        except InputError as exc:
            _fail_or_raise(d.path, exc, on_error)
    return out


def _shared(d: Dump, given: dict[tuple[str, int], Dump], folders: RunIndex, checked: set[tuple[str, int]]) -> Dump:
    ref = d.doc["context_before"]
    key = (d.doc["run"]["id"], ref.get("in_call"))
    source = given.get(key)
    if source is None:
        path = sibling_dump(d.path, key, folders)
        if path is None:
            raise InputError(f"the messages before this run are in its call {key[1]}, whose dump is not in "
                             f"{d.path.parent}", path=str(d.path),
                             hint="keep the dumps of a run together in one folder")
        source = given[key] = read_dump(path)
    if key not in checked:
        held = source.doc["context_before"].get("messages")
        if held is None or digest(held) != ref.get("messages_sha256"):
            raise InputError(f"field context_before does not match the messages of call {key[1]} "
                             f"({source.name})", path=str(d.path), hint="the dumps of this run were edited or "
                             "mixed with another run's; compact again to get new ones")
        checked.add(key)
    return Dump(d.path, {**d.doc, "context_before": source.doc["context_before"]})


def sibling_dump(path: Path, key: tuple[str, int], folders: RunIndex) -> Path | None:
    """The dump of run ``key[0]``, call ``key[1]`` in ``path``'s folder (its dumps indexed once)."""
    folder = path.parent
    if folder not in folders:
        index: dict[tuple[str, int], Path] = {}
        for f in sorted(folder.glob("*.json")):
            try:
                run = orjson.loads(f.read_bytes())["run"]
                index[(run["id"], run["call"])] = f
            except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
                continue
        folders[folder] = index
    return folders[folder].get(key)
