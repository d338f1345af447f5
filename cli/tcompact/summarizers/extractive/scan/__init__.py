"""The scan of a transcript: one pass over the messages that gathers what a summary is built from.

:class:`Scan` reads the preserved prefix for context (the round count, the active request, the
plan, the working directory) and the body for its user requests, assistant texts, tool calls
with their outcomes (:mod:`..tools`), the todo list and the lines of earlier checkpoints
(:func:`carry`); files are gathered per path (:class:`FileState`) and failures paired with the
reruns that fixed them. :func:`todos`, :func:`in_progress` and :func:`next_step` read the plan.
"""

from .checkpoints import carry, earlier_block, is_checkpoint
from .extraction import CWD_PATTERNS, MAX_FILES, Scan
from .files import FileState
from .plan import in_progress, next_step, plan_of, todos
from .values import Earlier, Plan, Requests, Said, Work

__all__ = ["Scan", "FileState", "MAX_FILES", "CWD_PATTERNS", "carry", "earlier_block", "is_checkpoint", "plan_of", "todos",
           "in_progress", "next_step", "Requests", "Plan", "Work", "Said", "Earlier"]
