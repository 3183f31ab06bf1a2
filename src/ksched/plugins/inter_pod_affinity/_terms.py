"""The affinity terms of the pod being scheduled, parsed once per attempt.

# pkg/scheduler/framework/types.go: NewPodInfo, newAffinityTerm
# pkg/scheduler/framework/plugins/interpodaffinity/plugin.go:
#   mergeAffinityTermNamespacesIfNotEmpty
Upstream unrolls the namespaceSelector of the incoming pod's terms into the list of
namespaces that exist and match it (an empty selector stays "every namespace"). ksched
asks ``namespace_labels`` instead, once per namespace and term, with the same outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from ...api import Pod, PodAffinityTerm, WeightedPodAffinityTerm
from ._validation import aggregate, label_selector_error

__all__ = ["IncomingPod", "IncomingTerm", "NamespaceLabels", "parse_incoming"]

NamespaceLabels = Callable[[str], Mapping[str, str] | None]
"""``namespace -> labels`` (None: no such namespace)."""


_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST = range(4)
_OPS = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DOES_NOT_EXIST}


class IncomingTerm:
    """A term of the incoming pod; matches existing pods by namespace, then labels.

    The label selector is flattened once (it is matched against every existing pod).
    """

    __slots__ = (
        "_exprs",
        "_labels",
        "_memo",
        "all_namespaces",
        "lookup",
        "namespace_selector",
        "namespaces",
        "requirements",
        "selector",
        "topology_key",
    )

    def __init__(self, owner: Pod, term: PodAffinityTerm, lookup: NamespaceLabels) -> None:
        self.topology_key = term.topology_key
        self.selector = term.label_selector
        if not term.namespaces and term.namespace_selector is None:
            self.namespaces = frozenset((owner.namespace,))
        else:
            self.namespaces = frozenset(term.namespaces)
        ns_selector = term.namespace_selector
        self.all_namespaces = ns_selector is not None and ns_selector.is_empty
        self.namespace_selector = None if self.all_namespaces else ns_selector
        self.lookup = lookup
        self._memo: dict[str, bool] = {}
        selector = term.label_selector
        self._labels = () if selector is None else tuple(selector.match_labels.items())
        self._exprs = (
            ()
            if selector is None
            else tuple(
                (e.key, _OPS[e.operator], frozenset(e.values)) for e in selector.match_expressions
            )
        )

        self.requirements: tuple[tuple[str, str, frozenset[str]], ...] | None = (
            None
            if selector is None
            else tuple((k, "In", frozenset((v,))) for k, v in self._labels)
            + tuple((e.key, e.operator, frozenset(e.values)) for e in selector.match_expressions)
        )
        """The label selector as (key, operator, values); None selects nothing."""

    def accepts_namespace(self, namespace: str) -> bool:
        """Whether pods of ``namespace`` may match (the namespace part of :meth:`matches`)."""
        if self.all_namespaces or namespace in self.namespaces:
            return True
        ns_selector = self.namespace_selector
        if ns_selector is None:
            return False
        selected = self._memo.get(namespace)
        if selected is None:
            labels = self.lookup(namespace)
            selected = labels is not None and ns_selector.matches(labels)
            self._memo[namespace] = selected
        return selected

    def matches(self, pod: Pod) -> bool:
        if self.selector is None:
            return False  # a missing selector selects nothing
        namespace = pod.metadata.namespace
        if not self.all_namespaces and namespace not in self.namespaces:
            ns_selector = self.namespace_selector
            if ns_selector is None:
                return False
            selected = self._memo.get(namespace)
            if selected is None:
                labels = self.lookup(namespace)
                selected = labels is not None and ns_selector.matches(labels)
                self._memo[namespace] = selected
            if not selected:
                return False
        labels = pod.metadata.labels
        for key, value in self._labels:
            if labels.get(key) != value:
                return False
        for key, op, values in self._exprs:
            have = labels.get(key)
            if op == _IN:
                if have is None or have not in values:
                    return False
            elif op == _NOT_IN:
                if have is not None and have in values:
                    return False
            elif op == _EXISTS:
                if have is None:
                    return False
            elif have is not None:
                return False
        return True


@attrs.frozen
class IncomingPod:
    """The incoming pod's four kinds of terms (preferred ones with their weights)."""

    required_affinity: tuple[IncomingTerm, ...]
    required_anti_affinity: tuple[IncomingTerm, ...]
    preferred_affinity: tuple[tuple[int, IncomingTerm], ...]
    preferred_anti_affinity: tuple[tuple[int, IncomingTerm], ...]


def _term_error(term: PodAffinityTerm) -> str | None:
    return label_selector_error(term.label_selector) or label_selector_error(
        term.namespace_selector
    )


def _first_error(terms: Sequence[PodAffinityTerm]) -> str | None:
    for term in terms:
        error = _term_error(term)
        if error is not None:
            return error
    return None


_NO_TERMS: Final = IncomingPod(
    required_affinity=(),
    required_anti_affinity=(),
    preferred_affinity=(),
    preferred_anti_affinity=(),
)


def parse_incoming(pod: Pod, lookup: NamespaceLabels) -> IncomingPod | str:
    """The pod's terms, or the message of why its selectors do not parse."""
    required: tuple[PodAffinityTerm, ...] = ()
    required_anti: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    preferred_anti: tuple[WeightedPodAffinityTerm, ...] = ()
    affinity = pod.spec.affinity
    if affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None):
        return _NO_TERMS
    if affinity is not None:
        if affinity.pod_affinity is not None:
            required = affinity.pod_affinity.required
            preferred = affinity.pod_affinity.preferred
        if affinity.pod_anti_affinity is not None:
            required_anti = affinity.pod_anti_affinity.required
            preferred_anti = affinity.pod_anti_affinity.preferred
    errors = [
        f"{kind}: {error}"
        for kind, error in (
            ("requiredAffinityTerms", _first_error(required)),
            ("requiredAntiAffinityTerms", _first_error(required_anti)),
            ("preferredAffinityTerms", _first_error([w.term for w in preferred])),
            ("preferredAntiAffinityTerms", _first_error([w.term for w in preferred_anti])),
        )
        if error is not None
    ]
    if errors:
        return aggregate(errors)
    return IncomingPod(
        required_affinity=tuple(IncomingTerm(pod, t, lookup) for t in required),
        required_anti_affinity=tuple(IncomingTerm(pod, t, lookup) for t in required_anti),
        preferred_affinity=tuple((w.weight, IncomingTerm(pod, w.term, lookup)) for w in preferred),
        preferred_anti_affinity=tuple(
            (w.weight, IncomingTerm(pod, w.term, lookup)) for w in preferred_anti
        ),
    )
