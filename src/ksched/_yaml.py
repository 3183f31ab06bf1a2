"""Reading YAML input: errors that name the file, and duplicate keys found, not dropped.

PyYAML (its C parser when built with libyaml) keeps the last of two equal keys in a
mapping without a word, and names its input ``<unicode string>``. This loader notes every
duplicate key (line and key, in go-yaml's words: ``line 5: key "name" already set in
map``) and reports syntax errors as ``FILE: invalid YAML: line L, column C: problem``.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode

from ._errors import KschedError

__all__ = ["YamlInputError", "duplicate_key_message", "read_yaml"]

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlInputError(KschedError, ValueError):
    """Text that is not YAML, or (strict) has a duplicate key; the message names the file."""


class _NotingLoader(_BASE):  # type: ignore[misc]
    """The safe loader, noting each key a mapping repeats as (line, key)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[int, str]] = []

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            self._note_duplicates(node)
        return super().construct_mapping(node, deep=deep)

    def _note_duplicates(self, node: MappingNode) -> None:
        keys = [
            (k.tag, k.value)
            for k, _ in node.value
            if isinstance(k, ScalarNode) and k.tag != _MERGE_TAG
        ]
        if len(set(keys)) == len(keys):  # the common case: one pass, no allocation per key
            return
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = (key_node.tag, key_node.value)
            if key in seen:
                self.duplicates.append((key_node.start_mark.line + 1, key_node.value))
            seen.add(key)


def duplicate_key_message(line: int, key: str) -> str:
    """go-yaml's words for a repeated key (what kube-apiserver's strict decoding reports)."""
    return f'line {line}: key "{key}" already set in map'


def _syntax_message(source: str, exc: yaml.YAMLError) -> str:
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return f"{source}: invalid YAML: {exc}"
    mark = exc.problem_mark
    text = f"{source}: invalid YAML: line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    where = exc.context_mark
    if exc.context and where is not None and (where.line, where.column) != (mark.line, mark.column):
        text += f" ({exc.context} at line {where.line + 1}, column {where.column + 1})"
    elif exc.context:
        text += f" ({exc.context})"
    return text


def read_yaml(
    text: str,
    source: str,
    *,
    strict: bool = True,
    warnings: MutableSequence[str] | None = None,
) -> list[Any]:
    """Every document of ``text`` (empty ones left out), read with the safe loader.

    A duplicate key is an error when ``strict``; otherwise it goes to ``warnings`` (the
    last value kept, as YAML loaders do).

    Raises:
        YamlInputError: a syntax error, or a duplicate key when ``strict``; the message
            starts with ``source`` and gives the line.
    """
    loader = _NotingLoader(text)
    try:
        docs = []
        while loader.check_data():
            doc = loader.get_data()
            if doc is not None:
                docs.append(doc)
    except yaml.YAMLError as exc:
        raise YamlInputError(_syntax_message(source, exc)) from None
    except (ValueError, RecursionError) as exc:  # an integer too long, nesting too deep
        raise YamlInputError(f"{source}: invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    lines = [f"{source}: {duplicate_key_message(*d)}" for d in sorted(loader.duplicates)]
    if lines and strict:
        raise YamlInputError("\n".join(lines))
    if warnings is not None:
        warnings.extend(lines)
    return docs
