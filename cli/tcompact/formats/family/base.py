"""What every transcript format is asked: :class:`Format`, the base of one class per format.

A format's class is light: it names the format and says what it can do (its facts are class
variables, known without reading a file), and imports its reader and writer modules only inside
the methods that use them — the registry (:mod:`tcompact.formats.family`) holds every format, and
the command line names them in its help before any command runs. A format that reads JSON Lines
gives a *Reading* (``reading``), fed records and kept between reads of a growing file
(:mod:`tcompact.formats.steps` drives it):

- ``prepare(records)``: what reading in order needs of the whole file first;
- ``feed(records, start, ctx)``: take in the records of the file from index ``start`` on;
- ``resumes(records)``: whether lines appended later can be read on from the kept state;
- ``state()``: that state as plain values (None: it cannot be kept), taken before ``finish`` unless
  the Reading's ``LATE_STATE`` says finishing leaves it unchanged (then after, records dropped);
- ``finish(records, ctx, kept)``: the transcripts, the unknown record types, the file's details;
- ``kept(messages)``: what a later ``finish`` takes as ``kept``, given the transcripts' messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing import TypeAlias

    from ...model import Record, SourceFile, Transcript
    from .._source import ReadContext
    from ..requests import Request
    from ..writers import Rendered

    #: what a Reading's ``finish`` gives: the transcripts, the unknown record types, the file's details
    Finished: TypeAlias = tuple[list[Transcript], dict[str, int], dict[str, Any]]

__all__ = ["Format"]


class Format:
    """One transcript format: how to recognise it, read it, write it (when ``writable``), the provider
    usage it records and how its records take the canaries ``tcompact eval`` plants."""

    #: the format's name: ``--format``, ``--to``, the reports' ``format`` and the usage's ``source``
    name: ClassVar[str]
    #: whether tcompact writes it (``--to``, compacted outputs)
    writable: ClassVar[bool] = False
    #: whether it is read as JSON Lines (then :meth:`sniff` and :meth:`reading`)
    lines: ClassVar[bool] = False
    #: whether its documents are the loosest shape, asked after every other format's (chat's message list)
    general: ClassVar[bool] = False
    #: file suffixes of its own, beyond the JSON ones every format may use (a folder is searched for them)
    suffixes: ClassVar[tuple[str, ...]] = ()
    #: whether the reasoning of a converted transcript can be written (Claude Code's needs a signature)
    writes_reasoning: ClassVar[bool] = True

    # -- detecting and reading ---------------------------------------------------------------

    def sniff(self, record: Mapping[str, Any]) -> bool:
        """Whether one JSON Lines record looks like this format (a vote in detection)."""
        return False

    def is_document(self, value: Any) -> bool:
        """Whether one JSON document (the whole file) is of this format."""
        return False

    def reading(self, ctx: ReadContext) -> Any:
        """A new Reading (see the module docstring) of a JSON Lines file of this format."""
        raise NotImplementedError(f"{self.name} files are not read as JSON Lines")

    def restore(self, state: Any, ctx: ReadContext) -> Any:
        """The Reading a kept ``state`` describes."""
        raise NotImplementedError(f"{self.name} files are not read as JSON Lines")

    def read_document(self, record: Record, ctx: ReadContext) -> list[Transcript]:
        """The transcripts of a document of this format (``record`` holds it whole)."""
        raise NotImplementedError(f"{self.name} files are not one JSON document")

    # -- writing -------------------------------------------------------------------------------

    def write(self, transcript: Transcript, *, now: str, session: str) -> tuple[list[bytes], list[str]]:
        """The lines of ``transcript`` written anew in this format, and the messages it could not hold."""
        raise NotImplementedError(f"tcompact does not write {self.name} files")

    def write_back(self, source: SourceFile, original: Transcript, transcript: Transcript, *, now: str,
                   pre_tokens: int | None) -> Rendered:
        """``transcript`` written over its own file ``source`` (read as ``original``): unchanged, the file's
        bytes; changed, :meth:`write_changed`."""
        from .._merge import join_lines
        from ..writers import Rendered

        if transcript.messages == original.messages:
            return Rendered(join_lines([r.raw for r in source.records]))  # type: ignore[misc]
        return self.write_changed(source, original, transcript, now=now, pre_tokens=pre_tokens)

    def write_changed(self, source: SourceFile, original: Transcript, transcript: Transcript, *, now: str,
                      pre_tokens: int | None) -> Rendered:
        """A changed ``transcript`` written over its own file ``source``."""
        raise NotImplementedError(f"tcompact does not write {self.name} files")

    # -- provider usage --------------------------------------------------------------------------

    def requests(self, records: Sequence[Record]) -> tuple[Request, ...]:
        """Every API request the records report, in file order, priced one by one (none: no usage)."""
        return ()

    def usage_head(self, usage: Mapping[str, Any], number: Callable[[Any], str]) -> str:
        """The line that sums up the provider usage of a transcript (``number`` writes a figure)."""
        return (f"Provider usage ({usage['source']}, {number(usage.get('requests'))} requests): input "
                f"{number(usage.get('input_tokens'))}, output {number(usage.get('output_tokens'))}")

    # -- planting (tcompact eval) ----------------------------------------------------------------

    def planting(self, source: SourceFile) -> str:
        """How the records of ``source`` are edited to plant canaries: ``"document"`` (the messages of a
        JSON document, see :meth:`document_items`), ``"chat-lines"`` (a chat message per line), or a layout
        of the format's own that :mod:`tcompact.evaluation.editors` knows."""
        return "document" if source.meta.get("document") else "chat-lines"

    def document_items(self, doc: Any, source: SourceFile, transcript: Transcript) -> list[Any]:
        """The list of ``doc`` (a copy of the document ``source`` was read from) that holds ``transcript``'s
        messages, each at its ``meta["item"]``."""
        return doc if isinstance(doc, list) else doc["messages"]
