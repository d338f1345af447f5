"""Editing a JSON settings file as text: entries spliced in and out, every other byte kept.

An agent's settings file is hand-edited JSON whose key order, indentation and spacing belong to its
owner; loading and dumping it would rewrite all of that. Here the file stays text: :func:`parse`
finds the span of every value (a tree of :class:`Node`), and the edits splice at those spans — a
member or element is appended after the last one with the separator the container already uses
(or, in an empty container, on its own indented line), a value is replaced within its span, and an
element is removed together with the separator before it. Appending and then removing the same
element gives back the text byte for byte; an emptied container gets back the whitespace it had.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Any

__all__ = ["Node", "Style", "JsonSyntaxError", "parse", "style_of", "append", "remove", "replace", "render",
           "line_indent"]

_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class JsonSyntaxError(ValueError):
    """The text is not one JSON document; ``line`` is 1-based."""

    def __init__(self, what: str, line: int) -> None:
        super().__init__(what)
        self.line = line


@dataclass
class Node:
    """A value's span ``[start, end)``; an object's members (key, where its key starts, value) or an
    array's elements."""

    kind: str
    start: int
    end: int
    keys: list[tuple[str, int]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)

    def member(self, key: str) -> Node | None:
        """The value of ``key`` in an object (the last, as JSON readers take it), else None."""
        found = [child for (name, _), child in zip(self.keys, self.children) if name == key]
        return found[-1] if found and self.kind == "object" else None

    def item_start(self, index: int) -> int:
        """Where element ``index`` starts: its key for a member, the value for an array element."""
        return self.keys[index][1] if self.kind == "object" else self.children[index].start


@dataclass(frozen=True)
class Style:
    """How the file is written: one indentation step, the text between a key and its value, and whether
    containers are broken over lines."""

    unit: str = "  "
    colon: str = ": "
    pretty: bool = True
    newline: str = "\n"


def parse(text: str) -> Node:
    """The span tree of one JSON document (a :class:`JsonSyntaxError` when it is not one)."""
    try:
        json.loads(text)
    except ValueError as exc:
        raise JsonSyntaxError(getattr(exc, "msg", str(exc)), getattr(exc, "lineno", 1)) from None
    node, end = _value(text, _WS.match(text, 0).end())
    return node


def _value(text: str, at: int) -> tuple[Node, int]:
    char = text[at]
    if char == "{":
        return _container(text, at, "object", "}")
    if char == "[":
        return _container(text, at, "array", "]")
    if char == '"':
        _, end = scanstring(text, at + 1)
        return Node("value", at, end), end
    match = _SCALAR.match(text, at)
    assert match is not None  # json.loads accepted the text
    return Node("value", at, match.end()), match.end()


def _container(text: str, at: int, kind: str, close: str) -> tuple[Node, int]:
    node = Node(kind, at, at)
    i = _WS.match(text, at + 1).end()
    while text[i] != close:
        if kind == "object":
            key, after = scanstring(text, i + 1)
            node.keys.append((key, i))
            i = _WS.match(text, _WS.match(text, after).end() + 1).end()  # past the colon
        child, i = _value(text, i)
        node.children.append(child)
        i = _WS.match(text, i).end()
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()
    node.end = i + 1
    return node, node.end


def style_of(text: str, root: Node) -> Style:
    """The file's own style, read from its first members (two-space pretty JSON when it says nothing)."""
    pretty = "\n" in text.strip() or not root.children
    colon = ": "
    for node in _objects(root):
        if node.children:
            between = text[scanstring(text, node.keys[0][1] + 1)[1]:node.children[0].start]
            colon = ":" + (" " if between[-1:] in (" ", "\t", "\n", "\r") else "")
            break
    unit = "  "
    if root.children:
        lead = text[root.start + 1:root.item_start(0)]
        if "\n" in lead and lead.rsplit("\n", 1)[1]:
            unit = lead.rsplit("\n", 1)[1]
    return Style(unit=unit, colon=colon, pretty=pretty, newline="\r\n" if "\r\n" in text else "\n")


def _objects(node: Node) -> list[Node]:
    out = [node] if node.kind == "object" else []
    for child in node.children:
        out += _objects(child)
    return out


def render(value: Any, style: Style, *, indent: str) -> str:
    """``value`` as JSON in the file's style, its later lines indented by ``indent``."""
    if not style.pretty:
        return json.dumps(value, ensure_ascii=False, separators=("," + style.colon[1:], style.colon))
    text = json.dumps(value, ensure_ascii=False, indent=style.unit, separators=(",", style.colon))
    return text.replace("\n", style.newline + indent)


def line_indent(text: str, at: int) -> str:
    """The indentation of the line that position ``at`` is on."""
    start = text.rfind("\n", 0, at) + 1
    return _INDENT.match(text, start).group()


def append(text: str, container: Node, value: Any, style: Style, *, key: str | None = None) -> str:
    """The text with ``value`` appended to ``container`` (as member ``key`` of an object)."""
    if container.children:
        last = len(container.children) - 1
        if last:
            between = text[container.children[last - 1].end:container.item_start(last)]
            sep = between[between.index(",") + 1:]
        else:
            sep = text[container.start + 1:container.item_start(0)] or (" " if style.colon.endswith(" ") else "")
        indent = sep.rsplit("\n", 1)[1] if "\n" in sep else line_indent(text, container.children[last].start)
        item = _item(value, style, key=key, indent=indent)
        at = container.children[last].end
        return text[:at] + "," + sep + item + text[at:]
    outer = line_indent(text, container.start)
    item = _item(value, style, key=key, indent=outer + style.unit)
    inner = f"{style.newline}{outer}{style.unit}{item}{style.newline}{outer}" if style.pretty else item
    return text[:container.start + 1] + inner + text[container.end - 1:]


def _item(value: Any, style: Style, *, key: str | None, indent: str) -> str:
    body = render(value, style, indent=indent)
    return body if key is None else json.dumps(key, ensure_ascii=False) + style.colon + body


def remove(text: str, container: Node, index: int, *, inner: str = "") -> str:
    """The text without element ``index`` of ``container``; a container left empty gets ``inner`` (the
    whitespace it had before anything was appended to it) between its brackets."""
    if len(container.children) == 1:
        return text[:container.start + 1] + inner + text[container.end - 1:]
    if index:
        return text[:container.children[index - 1].end] + text[container.children[index].end:]
    return text[:container.item_start(0)] + text[container.item_start(1):]


def replace(text: str, node: Node, new: str) -> str:
    """The text with ``node``'s span replaced by ``new``."""
    return text[:node.start] + new + text[node.end:]
