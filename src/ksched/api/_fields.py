"""Reading one manifest dict: fields with their paths for errors, times, selectors.

Every error names the object (``Kind namespace/name``) and the field path.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from .._errors import ManifestError
from ._model import (
    ObjectMeta,
    OwnerReference,
    PreferredSchedulingTerm,
)
from ._quantity import InvalidQuantityError, quantity_value
from ._selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)

__all__ = [
    "SIM_EPOCH",
    "T",
    "_Fields",
    "_label_selector",
    "_metadata",
    "_node_requirements",
    "_opt_label_selector",
    "parse_time",
    "read_node_selector",
    "read_preferred_terms",
]

SIM_EPOCH = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC)
"""Simulated time 0."""

T = TypeVar("T")


class _Fields:
    """A dict being read, with the path that leads to it, for error messages."""

    __slots__ = ("data", "obj", "path")

    def __init__(self, obj: str, path: str, data: Any) -> None:
        if data is None:
            data = {}
        elif type(data) is not dict and not isinstance(data, Mapping):
            raise ManifestError(f"{obj}: {path or 'object'}: expected a mapping, got {data!r}")
        self.obj = obj
        self.path = path
        self.data: Mapping[str, Any] = data

    def fail(self, field: str, message: str) -> ManifestError:
        return ManifestError(f"{self.obj}: {self._at(field)}: {message}")

    def _at(self, field: str) -> str:
        return f"{self.path}.{field}" if self.path else field

    def sub(self, field: str) -> _Fields:
        return _Fields(self.obj, self._at(field), self.data.get(field))

    def items(self, field: str) -> list[_Fields]:
        raw = self.data.get(field) or []
        if type(raw) is not list and not isinstance(raw, list):
            raise self.fail(field, f"expected a list, got {raw!r}")
        obj, at = self.obj, self._at(field)
        return [_Fields(obj, f"{at}[{i}]", item) for i, item in enumerate(raw)]

    def text(self, field: str, default: str = "") -> str:
        value = self.data.get(field, default)
        if type(value) is str:
            return value
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.fail(field, f"expected a string, got {value!r}")
        return str(value)

    def opt_str(self, field: str) -> str | None:
        return self.text(field) if self.data.get(field) is not None else None

    def integer(self, field: str, default: int | None = None) -> int | None:
        value = self.data.get(field, default)
        if type(value) is int or value is None:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, str) and value.lstrip("-").isdigit():
                return int(value)
            raise self.fail(field, f"expected an integer, got {value!r}")
        return value

    def flag(self, field: str, default: bool = False) -> bool:
        value = self.data.get(field, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(field, f"expected true or false, got {value!r}")
        return value

    def strings(self, field: str) -> tuple[str, ...]:
        raw = self.data.get(field) or []
        if not isinstance(raw, list) or not all(isinstance(v, str | int) for v in raw):
            raise self.fail(field, f"expected a list of strings, got {raw!r}")
        return tuple(str(v) for v in raw)

    def string_map(self, field: str) -> dict[str, str]:
        raw = self.data.get(field) or {}
        if not isinstance(raw, Mapping):
            raise self.fail(field, f"expected a mapping, got {raw!r}")
        out: dict[str, str] = {}
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise self.fail(f"{field}.{key}", f"expected a string, got {value!r}")
            out[str(key)] = str(value)
        return out

    def resources(self, field: str) -> dict[str, int]:
        raw = self.data.get(field) or {}
        if type(raw) is not dict and not isinstance(raw, Mapping):
            raise self.fail(field, f"expected a mapping of quantities, got {raw!r}")
        out: dict[str, int] = {}
        for name, text in raw.items():
            try:
                out[str(name)] = quantity_value(str(name), text)
            except InvalidQuantityError:
                raise self.fail(f"{field}.{name}", f"invalid quantity {text!r}") from None
        return out

    def time(self, field: str) -> float | None:
        raw = self.data.get(field)
        if raw is None:
            return None
        try:
            return parse_time(raw)
        except ValueError:
            raise self.fail(field, f"invalid timestamp {raw!r}") from None

    def choice(self, field: str, allowed: Iterable[str], default: str | None = None) -> str | None:
        value = self.opt_str(field)
        if value is None:
            return default
        if value not in allowed:
            allowed = tuple(allowed)
            raise self.fail(field, f"unsupported value {value!r} (expected one of {allowed})")
        return value


def parse_time(raw: object) -> float:
    """Seconds since simulated time 0 for an RFC 3339 timestamp (or a number of seconds)."""
    if isinstance(raw, bool):
        raise ValueError(raw)
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, _dt.datetime):
        when = raw
    elif isinstance(raw, str):
        when = _dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    else:
        raise ValueError(raw)
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return (when - SIM_EPOCH).total_seconds()


# ---- selectors ---------------------------------------------------------------------

_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist")
_NODE_OPS = (*_LABEL_OPS, "Gt", "Lt")


def _label_selector(f: _Fields | None) -> LabelSelector | None:
    if f is None:
        return None
    exprs = tuple(
        LabelSelectorRequirement(
            key=e.text("key"),
            operator=e.choice("operator", _LABEL_OPS) or "",
            values=e.strings("values"),
        )
        for e in f.items("matchExpressions")
    )
    return LabelSelector(match_labels=f.string_map("matchLabels"), match_expressions=exprs)


def _opt_label_selector(f: _Fields, field: str) -> LabelSelector | None:
    return _label_selector(f.sub(field)) if f.data.get(field) is not None else None


def _node_requirements(f: _Fields, field: str) -> tuple[NodeSelectorRequirement, ...]:
    return tuple(
        NodeSelectorRequirement(
            key=e.text("key"),
            operator=e.choice("operator", _NODE_OPS) or "",
            values=e.strings("values"),
        )
        for e in f.items(field)
    )


def _node_selector_term(f: _Fields) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=_node_requirements(f, "matchExpressions"),
        match_fields=_node_requirements(f, "matchFields"),
    )


def read_node_selector(f: _Fields) -> NodeSelector:
    return NodeSelector(terms=tuple(_node_selector_term(t) for t in f.items("nodeSelectorTerms")))


def read_preferred_terms(f: _Fields, field: str) -> tuple[PreferredSchedulingTerm, ...]:
    return tuple(
        PreferredSchedulingTerm(
            weight=t.integer("weight") or 0, preference=_node_selector_term(t.sub("preference"))
        )
        for t in f.items(field)
    )


# ---- metadata ----------------------------------------------------------------------


def _metadata(f: _Fields, *, namespaced: bool) -> ObjectMeta:
    owners = tuple(
        OwnerReference(
            kind=o.text("kind"),
            name=o.text("name"),
            uid=o.text("uid"),
            controller=o.flag("controller"),
        )
        for o in f.items("ownerReferences")
    )
    return ObjectMeta(
        name=f.text("name"),
        namespace=(f.text("namespace") or "default") if namespaced else "",
        uid=f.text("uid"),
        labels=f.string_map("labels"),
        annotations=f.string_map("annotations"),
        creation_timestamp=f.time("creationTimestamp"),
        deletion_timestamp=f.time("deletionTimestamp"),
        owner_references=owners,
    )
