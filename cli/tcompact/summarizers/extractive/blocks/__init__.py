"""The round-level blocks writer: one JSON summary per target of a "blocks" request (spec §8.1.4-8.1.5).

Raw runs of messages (:mod:`.parts`, read with :class:`~..scan.Scan`) and earlier memory blocks
(:mod:`.memory`) become parts; the parts of a target are merged (:mod:`.merge`) and fitted to its
budget (:mod:`.fit`, over the shared :mod:`..fitting`) as User Requirements, Final Result or Open
Work, Work Done, Failed Attempts and the Artifact Trail (:mod:`.writer`).
"""

from .writer import summarize_blocks

__all__ = ["summarize_blocks"]
