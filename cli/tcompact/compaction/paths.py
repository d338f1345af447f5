"""Where ``tcompact compact`` writes: ``<out>.dumps/``, ``<out>.offload/``, ``<out>.report.json`` next to
the output by default, and the check, before any work, that every one of them can be written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..artifacts import check_target, probe_folders
from ..errors import OutputError

__all__ = ["OutputPaths", "default_paths", "check_paths"]


@dataclass(frozen=True)
class OutputPaths:
    """The files and folders a compaction writes."""

    output: Path
    dump_dir: Path
    store: Path
    report: Path | None


def default_paths(source: Path, *, output: Path | None, dump_dir: Path | None, store: Path | None,
                  report: Path | None, fmt_suffix: str = ".jsonl") -> OutputPaths:
    """Fill in the defaults (``<input stem>.compacted.jsonl`` and siblings)."""
    out = output or source.with_name(f"{source.stem}.compacted{fmt_suffix}")
    base = out.with_suffix("")
    return OutputPaths(output=out, dump_dir=dump_dir or Path(f"{base}.dumps"), store=store or Path(f"{base}.offload"),
                       report=report if report is not None else Path(f"{base}.report.json"))


def check_paths(paths: OutputPaths, *, source: Path, force: bool, in_place: bool = False) -> None:
    """Refuse, before any work, two outputs at one path, an output that exists (without force), that is
    the input, or that lands in a folder no file can be created in (:mod:`tcompact.artifacts`).
    ``in_place``: the transcript is to replace the input itself (``compact --in-place``)."""
    files = {"transcript": paths.output, "report": paths.report}  # one folder may take both dumps and originals
    named = [*files.items(), ("dump folder", paths.dump_dir), ("offload store", paths.store)]
    for n, (name, target) in enumerate(named):
        for other, earlier in named[:n]:
            if target is not None and earlier is not None and (name in files or other in files) and \
                    target.resolve() == earlier.resolve():  # the later would replace the earlier, or fail on it
                raise OutputError(f"the {name} and the {other} would be the same path", path=str(target),
                                  hint="give each output its own path (-o, --report, --dump-dir, --offload-dir)")
    for target in (None if in_place else paths.output, paths.report):
        if target is not None:
            check_target(target, force=force, inputs=(source,))
    probe_folders(t for t in (paths.output, paths.report, paths.dump_dir / "x", paths.store / "x") if t is not None)
