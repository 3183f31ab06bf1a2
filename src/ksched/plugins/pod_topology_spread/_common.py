"""Spread constraints as the plugin uses them: parsed selectors, inclusion policies, counts.

# pkg/scheduler/framework/plugins/podtopologyspread/common.go
# pkg/scheduler/framework/plugins/helper/spread.go (DefaultSelector, GetPodServices)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from ...api import LabelSelector, Node, Pod, TopologySpreadConstraint, compile_requirements
from ...framework import NodeInfo, PodInfo

if TYPE_CHECKING:
    from ...cluster import ClusterStore

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LABEL_ZONE",
    "SCHEDULE_ANYWAY",
    "CountMemo",
    "Counter",
    "InvalidSelectorError",
    "NodeInclusion",
    "Selector",
    "SpreadConstraint",
    "counter",
    "default_selector",
    "filter_constraints",
    "has_all_keys",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"

Labels = Mapping[str, str]
Matcher = Callable[[Labels], bool]
Requirement = tuple[str, str, frozenset[str]]
"""``(key, operator, values)``; operators In, NotIn, Exists, DoesNotExist."""


class InvalidSelectorError(ValueError):
    """A label selector that upstream's LabelSelectorAsSelector rejects."""


def _never(labels: Labels) -> bool:
    return False


def _always(labels: Labels) -> bool:
    return True


class Selector:
    """A parsed label selector (upstream ``labels.Selector``), compiled once.

    ``requirements`` None is upstream's ``labels.Nothing()`` (a missing selector: matches
    no pod); an empty tuple is ``labels.Everything()``.
    """

    __slots__ = ("matches", "requirements")

    def __init__(self, requirements: tuple[Requirement, ...] | None) -> None:
        self.requirements = requirements
        self.matches: Matcher
        if requirements is None:
            self.matches = _never
        elif not requirements:
            self.matches = _always
        else:
            self.matches = compile_requirements(requirements)

    NOTHING: Selector
    """Matches nothing (a constraint without ``labelSelector``)."""

    @classmethod
    def of(cls, selector: LabelSelector | None) -> Selector:
        """upstream metav1.LabelSelectorAsSelector."""
        if selector is None:
            return cls.NOTHING
        reqs: list[Requirement] = [
            (key, "In", frozenset((value,))) for key, value in selector.match_labels.items()
        ]
        for expr in selector.match_expressions:
            op, values = expr.operator, frozenset(expr.values)
            if op in ("In", "NotIn"):
                if not values:
                    raise InvalidSelectorError(
                        f"values: Invalid value: []: for 'in', 'notin' operators, values set "
                        f"can't be empty (key {expr.key!r})"
                    )
            elif op in ("Exists", "DoesNotExist"):
                if values:
                    raise InvalidSelectorError(
                        f"values: Invalid value: {sorted(values)}: values set must be empty "
                        f"for exists and does not exist (key {expr.key!r})"
                    )
            else:
                raise InvalidSelectorError(f"{op!r} is not a valid label selector operator")
            reqs.append((expr.key, op, values))
        return cls(tuple(reqs))

    @classmethod
    def from_set(cls, labels: Labels) -> Selector:
        """upstream labels.SelectorFromSet: every key equal to its value."""
        return cls(tuple((k, "In", frozenset((v,))) for k, v in labels.items()))

    @property
    def is_nothing(self) -> bool:
        return self.requirements is None

    @property
    def is_empty(self) -> bool:
        """No requirement at all (upstream ``Selector.Empty()``)."""
        return self.requirements == ()

    def with_labels(self, labels: Labels) -> Selector:
        """upstream mergeLabelSetWithSelector: ``labels`` ANDed in; Nothing stays Nothing."""
        if self.requirements is None:
            return self
        extra = tuple((k, "In", frozenset((v,))) for k, v in labels.items())
        return Selector(extra + self.requirements)

    def adding(self, requirements: Iterable[Requirement]) -> Selector:
        base = self.requirements or ()
        return Selector(base + tuple(requirements))

    def __repr__(self) -> str:
        return f"Selector({self.requirements!r})"


Selector.NOTHING = Selector(None)


@attrs.frozen
class SpreadConstraint:
    """upstream topologySpreadConstraint: a constraint with its selector parsed."""

    max_skew: int
    topology_key: str
    selector: Selector = attrs.field(eq=False)
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def filter_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Labels, action: str
) -> list[SpreadConstraint]:
    """The constraints with ``whenUnsatisfiable == action``, parsed, with matchLabelKeys
    merged in from the pod's own labels (upstream filterTopologySpreadConstraints)."""
    result: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = Selector.of(c.label_selector)
        if c.match_label_keys:
            own = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if own:
                selector = selector.with_labels(own)
        result.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return result


def has_all_keys(labels: Labels, constraints: Sequence[SpreadConstraint]) -> bool:
    """upstream nodeLabelsMatchSpreadConstraints."""
    for c in constraints:  # noqa: SIM110 - a plain loop beats all(<genexpr>) per node
        if c.topology_key not in labels:
            return False
    return True


Counter = Callable[[Sequence[PodInfo]], int]
"""Counts the pods of a NodeInfo that a constraint selects."""


def _zero(pods: Sequence[PodInfo]) -> int:
    return 0


def counter(selector: Selector, namespace: str) -> Counter:
    """A function counting the pods in ``namespace``, not terminating, that ``selector``
    selects (upstream countPodsMatchSelector; a Nothing selector counts none).

    Built once per cycle; the common one-requirement selectors get a loop of their own
    so that counting a node's pods costs no call per pod.
    """
    reqs = selector.requirements
    if reqs is None:
        return _zero
    if not reqs:

        def count_all(pods: Sequence[PodInfo]) -> int:
            n = 0
            for info in pods:
                meta = info.pod.metadata
                if meta.namespace == namespace and meta.deletion_timestamp is None:
                    n += 1
            return n

        return count_all
    if len(reqs) == 1:
        key, op, values = reqs[0]
        if op == "In" and len(values) == 1:
            (value,) = values

            def count_equal(pods: Sequence[PodInfo]) -> int:
                n = 0
                for info in pods:
                    meta = info.pod.metadata
                    if (
                        meta.namespace == namespace
                        and meta.deletion_timestamp is None
                        and meta.labels.get(key) == value
                    ):
                        n += 1
                return n

            return count_equal
        if op == "Exists":

            def count_exists(pods: Sequence[PodInfo]) -> int:
                n = 0
                for info in pods:
                    meta = info.pod.metadata
                    if (
                        meta.namespace == namespace
                        and meta.deletion_timestamp is None
                        and key in meta.labels
                    ):
                        n += 1
                return n

            return count_exists
    match = selector.matches

    def count_matching(pods: Sequence[PodInfo]) -> int:
        n = 0
        for info in pods:
            meta = info.pod.metadata
            if (
                meta.namespace == namespace
                and meta.deletion_timestamp is None
                and match(meta.labels)
            ):
                n += 1
        return n

    return count_matching


class CountMemo:
    """Matching-pod counts per node, kept across cycles while a NodeInfo is unchanged.

    A count depends only on a node's pods, so it is reused as long as the very same
    NodeInfo object still has the generation it had when counted (every pod added or
    removed bumps it). One table per (selector, namespace); the least recently used
    tables are dropped beyond ``capacity``.
    """

    __slots__ = ("_capacity", "_tables")

    def __init__(self, capacity: int = 16) -> None:
        self._capacity = capacity
        self._tables: dict[
            tuple[tuple[Requirement, ...] | None, str], dict[str, tuple[NodeInfo, int, int]]
        ] = {}

    def table(
        self, selector: Selector, namespace: str
    ) -> tuple[dict[str, tuple[NodeInfo, int, int]], Counter]:
        """The memo table for ``selector`` in ``namespace`` and the counter that fills it:
        ``table[node_name] = (node_info, generation, count)``."""
        count = counter(selector, namespace)
        key = (selector.requirements, namespace)
        table = self._tables.pop(key, None)
        if table is None:
            table = {}
            if len(self._tables) >= self._capacity:
                del self._tables[next(iter(self._tables))]
        self._tables[key] = table  # most recently used last
        return table, count


_DO_NOT_SCHEDULE_EFFECTS = frozenset(("NoSchedule", "NoExecute"))


class NodeInclusion:
    """The incoming pod's required node affinity and tolerations, checked against a node
    as a constraint's nodeAffinityPolicy / nodeTaintsPolicy ask
    (upstream matchNodeInclusionPolicies)."""

    __slots__ = ("_node_selector", "_required", "_tolerations", "has_affinity")

    def __init__(self, pod: Pod) -> None:
        affinity = pod.spec.affinity
        node_affinity = affinity.node_affinity if affinity is not None else None
        self._node_selector = dict(pod.spec.node_selector)
        self._required = node_affinity.required if node_affinity is not None else None
        self._tolerations = pod.spec.tolerations
        self.has_affinity = bool(self._node_selector) or self._required is not None

    def affinity_matches(self, node: Node) -> bool:
        """upstream nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)."""
        labels = node.metadata.labels
        for key, value in self._node_selector.items():
            if labels.get(key) != value:
                return False
        return self._required is None or self._required.matches(node.metadata.name, labels)

    def taints_tolerated(self, node: Node) -> bool:
        """No NoSchedule/NoExecute taint the pod does not tolerate."""
        for taint in node.spec.taints:
            if taint.effect not in _DO_NOT_SCHEDULE_EFFECTS:
                continue
            if not any(t.tolerates(taint) for t in self._tolerations):
                return False
        return True

    def can_exclude(self, c: SpreadConstraint) -> bool:
        """Whether :meth:`includes` may say no for ``c`` (else it need not be asked)."""
        return (c.node_affinity_policy == HONOR and self.has_affinity) or (
            c.node_taints_policy == HONOR
        )

    def includes(self, c: SpreadConstraint, node: Node) -> bool:
        if (
            c.node_affinity_policy == HONOR
            and self.has_affinity
            and not self.affinity_matches(node)
        ):
            return False
        return not (c.node_taints_policy == HONOR and not self.taints_tolerated(node))


_EVERYTHING = Selector(())
"""What no Service and no controller select for the defaults (a plain pod): everything."""


def default_selector(pod: Pod, cluster: ClusterStore) -> Selector:
    """The selector of the Services that select ``pod`` and of the ReplicationController,
    ReplicaSet or StatefulSet that controls it (upstream helper.DefaultSelector)."""
    namespace = pod.namespace
    pod_labels = pod.labels
    merged: dict[str, str] = {}
    for service in cluster.objects("Service"):
        if service.metadata.namespace != namespace:
            continue
        selector = service.selector
        if selector and all(pod_labels.get(k) == v for k, v in selector.items()):
            merged.update(selector)
    result = Selector.from_set(merged) if merged else _EVERYTHING

    owner = next((o for o in pod.metadata.owner_references if o.controller), None)
    if owner is None:
        return result
    if owner.kind == "ReplicationController":
        rc = cluster.get("ReplicationController", f"{namespace}/{owner.name}")
        if rc is not None:
            merged.update(rc.selector)
            result = Selector.from_set(merged)
    elif owner.kind in ("ReplicaSet", "StatefulSet"):
        controller = cluster.get(owner.kind, f"{namespace}/{owner.name}")
        if controller is not None:
            try:
                other = Selector.of(controller.selector)
            except InvalidSelectorError:
                return result
            if other.requirements is not None:
                result = result.adding(other.requirements)
    return result
