"""tcompact's entries in an agent's settings text: added, found and removed, nothing else touched.

:func:`install` adds one matcher group per event (``{"matcher": M, "hooks": [{"type": "command",
"command": C}]}``) after the groups already there, creating ``hooks`` and the event's list when
missing; an entry of ours already there with another command gets the new command in place, so a
second install changes nothing. With ``statusline`` it sets ``statusLine`` to tcompact's status line
(replacing the user's own only when forced; the replaced value is returned to be put back).
:func:`uninstall` removes every hook whose command runs tcompact (:func:`~.agents.command_kind`), and
then each list or object that this left empty — unless it was empty before the install
(``kept_empty``: its path and the whitespace it held). All edits go through :mod:`.jsonedit`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .agents import RUNS, Agent, Event, command_kind
from .jsonedit import JsonSyntaxError, Node, Style, append, line_indent, parse, remove, render, replace, style_of

__all__ = ["Plan", "install", "uninstall", "installed", "EMPTY_DOCUMENT"]

#: The text a missing settings file starts from.
EMPTY_DOCUMENT = "{}\n"
_MAX_STEPS = 64


@dataclass
class Plan:
    """The new text; the containers that were empty before (path → their whitespace); the statusLine
    value that was replaced (its text); and what was done, one phrase each."""

    text: str
    kept_empty: dict[str, str] = field(default_factory=dict)
    replaced: dict[str, str] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)


def install(text: str, a: Agent, commands: dict[str, str], *, statusline: str | None = None,
            force: bool = False, path: str = "") -> Plan:
    """``text`` with tcompact's hooks of ``a`` (``commands``: run → command line), and its status line."""
    plan = Plan(text)
    style = style_of(text, _parsed(text, path))
    for ev in a.events:
        for _ in range(_MAX_STEPS):
            step = _add_event(plan, ev, commands[ev.run], style, path)
            if step is None:
                break
            plan.text = step
    if statusline is not None:
        _set_statusline(plan, statusline, style, force=force, path=path)
    return plan


def _parsed(text: str, path: str) -> Node:
    try:
        root = parse(text)
    except JsonSyntaxError as exc:
        raise InputError(f"not valid JSON ({exc})", path=path, line=exc.line,
                         hint="fix the file (tcompact changes nothing until it parses)") from None
    if root.kind != "object":
        raise InputError("the settings are not a JSON object", path=path, hint="fix the file")
    return root


def _need(node: Node, kind: str, where: str, path: str) -> None:
    if node.kind != kind:
        raise InputError(f"`{where}` is not a JSON {kind}", path=path, hint="fix the file")


def _group(ev: Event, command: str) -> dict[str, Any]:
    hook = {"type": "command", "command": command}
    return {"hooks": [hook]} if ev.matcher is None else {"matcher": ev.matcher, "hooks": [hook]}


def _add_event(plan: Plan, ev: Event, command: str, style: Style, path: str) -> str | None:
    """One step towards the event's entry being there with ``command``; None when it is."""
    text = plan.text
    root = _parsed(text, path)
    hooks = root.member("hooks")
    if hooks is None:
        _note_empty(plan, text, root, "")
        plan.done.append(f"added {ev.name}")
        return append(text, root, {ev.name: [_group(ev, command)]}, style, key="hooks")
    _need(hooks, "object", "hooks", path)
    groups = hooks.member(ev.name)
    if groups is None:
        _note_empty(plan, text, hooks, "hooks")
        plan.done.append(f"added {ev.name}")
        return append(text, hooks, [_group(ev, command)], style, key=ev.name)
    _need(groups, "array", f"hooks.{ev.name}", path)
    ours = [node for _, _, found in _hook_lists(text, groups) for _, node, cmd in found if command_kind(cmd) == ev.run]
    for node in ours:
        if json.loads(text[node.start:node.end]) != command:
            plan.done.append(f"updated {ev.name}")
            return replace(text, node, json.dumps(command, ensure_ascii=False))
    if ours:
        return None
    _note_empty(plan, text, groups, f"hooks/{ev.name}")
    plan.done.append(f"added {ev.name}")
    return append(text, groups, _group(ev, command), style)


def _note_empty(plan: Plan, text: str, container: Node, where: str) -> None:
    if not container.children and where not in plan.kept_empty:
        plan.kept_empty[where] = text[container.start + 1:container.end - 1]


def _hook_lists(text: str, groups: Node) -> list[tuple[int, Node, list[tuple[int, Node, object]]]]:
    """For each matcher group (its index): its ``hooks`` list, and each hook's index, command node and value."""
    out = []
    for g, group in enumerate(groups.children):
        items = group.member("hooks") if group.kind == "object" else None
        if items is None or items.kind != "array":
            continue
        found = []
        for n, item in enumerate(items.children):
            command = item.member("command") if item.kind == "object" else None
            if command is not None:
                found.append((n, command, json.loads(text[command.start:command.end])))
        out.append((g, items, found))
    return out


def _set_statusline(plan: Plan, command: str, style: Style, *, force: bool, path: str) -> None:
    root = _parsed(plan.text, path)
    current = root.member("statusLine")
    value = {"type": "command", "command": command}
    if current is None:
        _note_empty(plan, plan.text, root, "")
        plan.text = append(plan.text, root, value, style, key="statusLine")
        plan.done.append("added statusLine")
        return
    node = current.member("command") if current.kind == "object" else None
    shown = plan.text[node.start:node.end] if node is not None else plan.text[current.start:current.end]
    if node is not None and command_kind(json.loads(shown)) == "statusline":
        if json.loads(shown) != command:
            plan.text = replace(plan.text, node, json.dumps(command, ensure_ascii=False))
            plan.done.append("updated statusLine")
        return
    if not force:
        raise InputError(f"statusLine is set already ({shown[:80]})", path=path,
                         hint="leave out --statusline, or pass --force to replace it (uninstall puts it back)")
    plan.replaced["statusLine"] = plan.text[current.start:current.end]
    plan.text = replace(plan.text, current, render(value, style, indent=line_indent(plan.text, current.start)))
    plan.done.append("replaced statusLine")


def uninstall(text: str, *, kept_empty: dict[str, str] | None = None, replaced: dict[str, str] | None = None,
              path: str = "") -> tuple[str, list[str]]:
    """``text`` without tcompact's hooks and status line, and what was removed."""
    kept, put_back = dict(kept_empty or {}), dict(replaced or {})
    done: list[str] = []
    for _ in range(_MAX_STEPS * 4):
        step = _remove_one(text, kept, put_back, done, path)
        if step is None:
            break
        text = step
    return text, done


def _remove_one(text: str, kept: dict[str, str], put_back: dict[str, str], done: list[str], path: str) -> str | None:
    root = _parsed(text, path)
    line = root.member("statusLine")
    command = line.member("command") if line is not None and line.kind == "object" else None
    if command is not None and command_kind(json.loads(text[command.start:command.end])) == "statusline":
        done.append("statusLine")
        if "statusLine" in put_back:
            return replace(text, line, put_back.pop("statusLine"))
        return _drop(text, [(root, _index(root, "statusLine"), "")], kept)
    hooks = root.member("hooks")
    if hooks is None or hooks.kind != "object":
        return None
    for e, ((event, _), groups) in enumerate(zip(hooks.keys, hooks.children)):
        if groups.kind != "array":
            continue
        for g, items, found in _hook_lists(text, groups):
            ours = [n for n, _, cmd in found if command_kind(cmd) in RUNS]
            if not ours:
                continue
            done.append(event)
            if len(ours) < len(items.children):  # a group of the user's that holds a hook of ours too
                return remove(text, items, ours[-1])
            chain = [(groups, g, f"hooks/{event}"), (hooks, e, "hooks"), (root, _index(root, "hooks"), "")]
            return _drop(text, chain, kept)
    return None


def _index(node: Node, key: str) -> int:
    return max(n for n, (name, _) in enumerate(node.keys) if name == key)


def _drop(text: str, chain: list[tuple[Node, int, str]], kept: dict[str, str]) -> str:
    """Remove element ``index`` of the innermost container; a container that this empties goes too
    (from its own parent), unless it was empty before the install — or is the document itself."""
    for n, (container, index, where) in enumerate(chain):
        last = n == len(chain) - 1
        if len(container.children) > 1 or where in kept or last:
            return remove(text, container, index, inner=kept.get(where, ""))
    raise AssertionError("unreachable: the document is the last container")


def installed(text: str, *, path: str = "") -> dict[str, Any]:
    """What of tcompact's is in the settings: each hook (event, matcher, command), the status line, and
    how many other hooks there are."""
    _parsed(text, path)
    data = json.loads(text)
    ours, others = [], 0
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                kind = command_kind(hook.get("command")) if isinstance(hook, dict) else None
                if kind is None:
                    others += 1
                else:
                    ours.append({"event": event, "matcher": group.get("matcher"), "run": kind,
                                 "command": hook["command"]})
    line = data.get("statusLine")
    command = line.get("command") if isinstance(line, dict) else None
    return {"hooks": ours, "other_hooks": others,
            "statusline": command if command_kind(command) == "statusline" else None}
