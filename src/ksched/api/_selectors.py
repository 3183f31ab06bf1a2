"""Label selectors and node selectors, and how they match.

# LabelSelector: apimachinery pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector
# NodeSelector: component-helpers scheduling/corev1/nodeaffinity
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

__all__ = [
    "LabelMatcher",
    "LabelSelector",
    "LabelSelectorRequirement",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "compile_requirements",
]

_EMPTY: Mapping[str, str] = {}


@attrs.frozen(kw_only=True)
class LabelSelectorRequirement:
    """One ``matchExpressions`` item: ``key`` ``operator`` (In, NotIn, Exists, DoesNotExist)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        return False


@attrs.frozen(kw_only=True)
class LabelSelector:
    """A label selector. The empty selector matches everything.

    (A *missing* selector, ``None`` where a field holds one, matches nothing; callers
    decide that, as upstream does.)
    """

    match_labels: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every label and every expression."""
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        return all(req.matches(labels) for req in self.match_expressions)

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def with_labels(self, extra: Mapping[str, str]) -> LabelSelector:
        """A selector that also requires ``extra`` (used by matchLabelKeys)."""
        merged = dict(self.match_labels)
        exprs = list(self.match_expressions)
        for key, value in extra.items():
            exprs.append(LabelSelectorRequirement(key=key, operator="In", values=(value,)))
        return LabelSelector(match_labels=merged, match_expressions=tuple(exprs))


def _parse_int(value: str) -> int | None:
    try:
        return int(value, 10)
    except ValueError:
        return None


@attrs.frozen(kw_only=True)
class NodeSelectorRequirement:
    """A node selector requirement: In, NotIn, Exists, DoesNotExist, Gt, Lt."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int(labels[self.key])
            want = _parse_int(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == "Gt" else have < want
        return False

    def matches_field(self, node_name: str) -> bool:
        """matchFields: only ``metadata.name`` with In / NotIn is supported upstream."""
        if self.key != "metadata.name":
            return False
        if self.operator == "In":
            return len(self.values) == 1 and node_name == self.values[0]
        if self.operator == "NotIn":
            return len(self.values) == 1 and node_name != self.values[0]
        return False


@attrs.frozen(kw_only=True)
class NodeSelectorTerm:
    """Requirements that are ANDed. A term with no requirement matches no node."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        for req in self.match_expressions:
            if not req.matches(labels):
                return False
        return all(req.matches_field(node_name) for req in self.match_fields)


@attrs.frozen(kw_only=True)
class NodeSelector:
    """Terms that are ORed."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        return any(term.matches(node_name, labels) for term in self.terms)


LabelMatcher = Callable[[Mapping[str, str]], bool]
"""Whether a set of labels satisfies something."""


def _requirement_matcher(key: str, op: str, values: frozenset[str]) -> LabelMatcher:
    if op == "In":
        if len(values) == 1:
            (only,) = values
            return lambda labels: labels.get(key) == only
        return lambda labels: labels.get(key) in values
    if op == "NotIn":
        return lambda labels: labels.get(key) not in values
    if op == "Exists":
        return lambda labels: key in labels
    if op == "DoesNotExist":
        return lambda labels: key not in labels
    raise ValueError(f"unknown selector operator {op!r}")


def compile_requirements(
    requirements: Sequence[tuple[str, str, frozenset[str]]],
) -> LabelMatcher:
    """One function for ``(key, operator, values)`` requirements, all of which must hold;
    for matching many label sets against one selector (no requirement: everything)."""
    fns = [_requirement_matcher(*r) for r in requirements]
    if not fns:
        return lambda labels: True
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        first, second = fns
        return lambda labels: first(labels) and second(labels)

    def every(labels: Mapping[str, str]) -> bool:
        for fn in fns:  # noqa: SIM110 - a plain loop beats all(<genexpr>) per pod
            if not fn(labels):
                return False
        return True

    return every
