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

import attrs

from ...api import Pod, PodAffinityTerm, WeightedPodAffinityTerm
from ._validation import aggregate, label_selector_error

__all__ = ["IncomingPod", "IncomingTerm", "NamespaceLabels", "parse_incoming"]

NamespaceLabels = Callable[[str], Mapping[str, str] | None]
"""``namespace -> labels`` (None: no such namespace)."""


class IncomingTerm:
    """A term of the incoming pod; matches existing pods by namespace, then labels."""

    __slots__ = (
        "_memo",
        "all_namespaces",
        "lookup",
        "namespace_selector",
        "namespaces",
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

    def matches(self, pod: Pod) -> bool:
        selector = self.selector
        if selector is None:
            return False
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
        return selector.matches(pod.metadata.labels)


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


def parse_incoming(pod: Pod, lookup: NamespaceLabels) -> IncomingPod | str:
    """The pod's terms, or the message of why its selectors do not parse."""
    required: tuple[PodAffinityTerm, ...] = ()
    required_anti: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    preferred_anti: tuple[WeightedPodAffinityTerm, ...] = ()
    affinity = pod.spec.affinity
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
