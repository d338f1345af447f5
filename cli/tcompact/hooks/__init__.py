"""Live use: tcompact inside the agent's own compaction, through the hooks Claude Code and Codex offer.

Neither agent lets a hook replace its summary, but both run a command before a compaction
(``PreCompact``) and right after it (``SessionStart`` with source ``compact``) and inject what the
second prints. :mod:`.install` puts tcompact's commands into the agent's settings (:mod:`.agents`
says where and which, :mod:`.settings` and :mod:`.jsonedit` edit the file without touching the
rest); :mod:`.run` runs them so that they never break the agent, :mod:`.events` is what each does
(a snapshot of the transcript before, a handoff after — :mod:`.handoff`), and :mod:`.state` is where
they keep it. :mod:`.statusline` is Claude Code's status line. Nothing is imported here: a hook
imports only what it uses (tcompact.launch).
"""
