"""Bounds on manifest input that PyYAML and recursive readers do not keep by themselves.

Three inputs cost far more than their size: flow collections nested thousands deep
(PyYAML's scanner is quadratic in flow depth, then its composer recurses past the
interpreter's limit: 5000 ``[`` took 21 s before a RecursionError), aliases that repeat
an anchor which itself repeats one (a "billion laughs" document: a kilobyte of text, a
billion nodes for every walk over it), and integers of thousands of digits (CPython
refuses to convert them: a ValueError, not a YAML error). Kubernetes' own YAML reader
refuses excessive aliasing the same way ("document contains excessive aliasing").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._errors import ManifestError

__all__ = ["MAX_EXPANDED_NODES", "MAX_NESTING", "check_document", "check_text"]

MAX_NESTING = 100
"""Deeper than any Kubernetes object nests (a pod's deepest field is about ten levels),
inside the interpreter's recursion limit and where PyYAML's block scanning, quadratic
in depth, still takes well under a second."""
MAX_EXPANDED_NODES = 2_000_000
"""Values a document may stand for once its aliases are expanded."""
_FLOW_OPENERS = frozenset("[{")
_FLOW_CONTEXT = frozenset(":-,[{?\n")


def check_text(text: str, source: str) -> None:
    """Refuse collections nested deeper than ``MAX_NESTING`` before PyYAML sees them."""
    _check_flow(text, source)
    _check_blocks(text, source)


_HALF = MAX_NESTING // 2
_DEEP_LINE = re.compile(rf"^ {{{_HALF},}}|^[ ]*(?:-[ ]+){{{_HALF},}}", re.MULTILINE)
_FLOW_TOKEN = re.compile(r"[\"'#\[\]{}]")


def _check_blocks(text: str, source: str) -> None:
    """Block nesting: the stack of indentations (as Python's tokenizer keeps it) plus the
    ``- `` entries that open on the same line. Lines of a block scalar count too, which
    can only over-count."""
    if _DEEP_LINE.search(text) is None:  # no line indented or dashed half the limit
        return
    indents = [0]
    for number, line in enumerate(text.splitlines(), 1):
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(body)
        while indents[-1] > indent:
            indents.pop()
        if indent > indents[-1]:
            indents.append(indent)
        dashes = 0
        while body.startswith("- ") or body == "-":
            dashes += 1
            body = body[2:].lstrip(" ")
        if len(indents) + dashes > MAX_NESTING:
            raise ManifestError(
                f"{source}: line {number}: collections nested deeper than {MAX_NESTING}"
            )


def _check_flow(text: str, source: str) -> None:
    """Flow collections nested deeper than ``MAX_NESTING``: an opening bracket counts
    where a flow collection may start (after ``:``, ``-``, ``,``, ``[``, ``{``, ``?`` or
    at the start of a line); quoted scalars and comments are skipped."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return
    depth, pos = 0, 0
    while True:
        match = _FLOW_TOKEN.search(text, pos)
        if match is None:
            return
        i, char = match.start(), match.group()
        pos = i + 1
        if char in "\"'":
            pos = _skip_quoted(text, i)
        elif char == "#":
            if _before(text, i, blanks=False) in " \t\n":
                newline = text.find("\n", i)
                pos = len(text) if newline < 0 else newline
        elif char in _FLOW_OPENERS:
            if _before(text, i, blanks=True) in _FLOW_CONTEXT:
                depth += 1
                if depth > MAX_NESTING:
                    line = text.count("\n", 0, i) + 1
                    raise ManifestError(
                        f"{source}: line {line}: collections nested deeper than {MAX_NESTING}"
                    )
        elif depth:
            depth -= 1


def _before(text: str, i: int, *, blanks: bool) -> str:
    """The character before ``i`` ("\\n" at the start); with ``blanks``, the last one
    that is not a space or a tab."""
    j = i - 1
    while blanks and j >= 0 and text[j] in " \t":
        j -= 1
    return text[j] if j >= 0 else "\n"


def _skip_quoted(text: str, start: int) -> int:
    """The index after the quoted scalar opening at ``start`` (the end if unclosed)."""
    quote, i = text[start], start + 1
    while True:
        j = text.find(quote, i)
        if j < 0:
            return len(text)
        if quote == '"':
            backslashes = len(text[i:j]) - len(text[i:j].rstrip("\\"))
            if backslashes % 2:
                i = j + 1
                continue
        elif text.startswith("''", j):  # '' is a quote inside a single-quoted scalar
            i = j + 2
            continue
        return j + 1


def check_document(doc: Any, source: str) -> None:
    """Refuse a loaded document nested deeper than ``MAX_NESTING`` or standing for more
    than ``MAX_EXPANDED_NODES`` values once its aliases are expanded.

    Linear in the document's distinct values: each shared value is counted once, with
    the size it stands for.
    """
    sizes: dict[int, int] = {}
    # An explicit stack (no recursion): (value, depth, children counted yet)
    stack: list[tuple[Any, int, bool]] = [(doc, 0, False)]
    while stack:
        value, depth, counted = stack.pop()
        if not isinstance(value, Mapping | list):
            continue
        if id(value) in sizes and not counted:
            continue
        children = list(value.values()) if isinstance(value, Mapping) else value
        if counted:
            total = 1 + sum(sizes.get(id(c), 1) for c in children)
            if total > MAX_EXPANDED_NODES:
                raise ManifestError(
                    f"{source}: the document's aliases expand to more than "
                    f"{MAX_EXPANDED_NODES} values (excessive aliasing)"
                )
            sizes[id(value)] = total
            continue
        if depth >= MAX_NESTING:
            raise ManifestError(f"{source}: collections nested deeper than {MAX_NESTING}")
        sizes[id(value)] = 1  # seen (a cycle counts once)
        stack.append((value, depth, True))
        stack.extend((c, depth + 1, False) for c in children)
