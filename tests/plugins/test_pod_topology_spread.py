"""PodTopologySpread, pinned by upstream's test tables.

# pkg/scheduler/framework/plugins/podtopologyspread/{filtering,scoring,plugin}_test.go
# pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pytest

from ksched._errors import ConfigError
from ksched.api import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from ksched.framework import (
    ActionType,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from ksched.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from ksched.plugins.pod_topology_spread._common import Selector
from ksched.plugins.pod_topology_spread._filtering import MAX_INT32, PreFilterState
from ksched.plugins.pod_topology_spread._plugin import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY
from ksched.plugins.pod_topology_spread._scoring import PreScoreState, topology_normalizing_weight
from ksched.testing import FakeHandle, make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
UNSCHED = Code.UNSCHEDULABLE
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
OK = Code.SUCCESS


def exists(key: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key=key, operator="Exists"),))


FOO = exists("foo")
BAR = exists("bar")
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


# ---- fakes and builders ------------------------------------------------------------


def tsc(
    max_skew: int,
    key: str,
    when: str = DNS,
    selector: LabelSelector | None = FOO,
    *,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: tuple[str, ...] = (),
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=key,
        when_unsatisfiable=when,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=affinity_policy,
        node_taints_policy=taints_policy,
        match_label_keys=match_label_keys,
    )


def node_l(name: str, labels: Mapping[str, str], taints: Sequence[Taint] = ()) -> Node:
    builder = make_node(name).labels(labels)
    for t in taints:
        builder = builder.taint(t.key, t.value, t.effect)
    return builder.obj()


def zn(name: str, zone: str, *, taints: Sequence[Taint] = (), **extra: str) -> Node:
    """A node labelled zone=<zone> and node=<name> (upstream's usual fixture)."""
    return node_l(name, {"zone": zone, "node": name, **extra}, taints)


def zhn(name: str, zone: str) -> Node:
    """A node labelled zone, node and hostname."""
    return node_l(name, {"zone": zone, "node": name, HOSTNAME: name})


def hn(name: str, **extra: str) -> Node:
    return node_l(name, {HOSTNAME: name, **extra})


def pod(
    name: str,
    labels: Mapping[str, str] | None = None,
    *constraints: TopologySpreadConstraint,
    on: str | None = None,
    namespace: str = "default",
    node_selector: Mapping[str, str] | None = None,
    affinity: Affinity | None = None,
    tolerations: Sequence[Toleration] = (),
    terminating: bool = False,
    owner: OwnerReference | None = None,
) -> Pod:
    builder = make_pod(name, namespace).labels(labels or {})
    if on is not None:
        builder = builder.node(on)
    if node_selector:
        builder = builder.node_selector(node_selector)
    if affinity is not None:
        builder = builder.affinity(affinity)
    if terminating:
        builder = builder.terminating()
    p = builder.obj()
    spec = attrs.evolve(
        p.spec, topology_spread_constraints=tuple(constraints), tolerations=tuple(tolerations)
    )
    meta = p.metadata
    if owner is not None:
        meta = attrs.evolve(meta, owner_references=(owner,))
    return attrs.evolve(p, spec=spec, metadata=meta)


def node_affinity(key: str, op: str, *values: str) -> Affinity:
    term = NodeSelectorTerm(
        match_expressions=(NodeSelectorRequirement(key=key, operator=op, values=values),)
    )
    return Affinity(node_affinity=NodeAffinity(required=NodeSelector(terms=(term,))))


def existing(node_name: str, *names: str, **labels: str) -> list[Pod]:
    return [pod(n, labels, on=node_name) for n in names]


FOO_L = {"foo": ""}


def build(nodes: Sequence[Node], pods: Sequence[Pod]) -> list[NodeInfo]:
    by_node: dict[str, list[Pod]] = {n.name: [] for n in nodes}
    for p in pods:
        assert p.spec.node_name is not None
        by_node.setdefault(p.spec.node_name, []).append(p)
    return [NodeInfo.of(n, by_node[n.name]) for n in nodes]


def plugin(
    infos: Sequence[NodeInfo],
    objects: Iterable[Any] = (),
    args: Mapping[str, Any] | None = None,
) -> PodTopologySpread:
    handle = FakeHandle(objects, nodes=infos)
    return PodTopologySpread.new(args if args is not None else {"defaultingType": "List"}, handle)


def meta(name: str, namespace: str = "default") -> ObjectMeta:
    return ObjectMeta(name=name, namespace=namespace)


def sorted_paths(state: PreFilterState, i: int) -> tuple[tuple[str, int], tuple[str, int]]:
    """Critical paths, with equal counts ordered by value (as upstream's comparer)."""
    (v0, n0), (v1, n1) = state.critical_paths[i].as_tuple()
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return (v0, n0), (v1, n1)


def requirements(selector: LabelSelector | None) -> frozenset[Any] | None:
    reqs = Selector.of(selector).requirements
    return None if reqs is None else frozenset(reqs)


# ---- TestPreFilterState ---------------------------------------------------------------

ZONE4 = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
ZONE3 = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")]
SPREAD_5 = [
    *existing("node-a", "p-a1", "p-a2", foo=""),
    *existing("node-b", "p-b1", foo=""),
    *existing("node-y", "p-y1", "p-y2", foo=""),
]
SPREAD_7 = [*SPREAD_5, *existing("node-y", "p-y3", "p-y4", foo="")]
POLICY_NODES = [
    node_l("node-a", {"node": "node-a", "foo": ""}),
    node_l("node-b", {"node": "node-b", "foo": ""}),
    node_l("node-c", {"node": "node-c", "bar": ""}),
]
POLICY_TAINT_NODES = [
    node_l("node-a", {"node": "node-a"}),
    node_l("node-b", {"node": "node-b"}),
    node_l("node-c", {"node": "node-c", "bar": ""}, [UNSCHEDULABLE_TAINT]),
]
POLICY_PODS = [
    *existing("node-a", "p-a", bar=""),
    *existing("node-b", "p-b", "p-c", bar=""),
    pod("p-d", on="node-c"),
]
FOO_A = [pod(n, {"foo": "a"}, on=nd) for n, nd in [
    ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"),
    ("p-y1", "node-y"), ("p-y2", "node-y"),
]]  # fmt: skip

Paths = tuple[tuple[str, int], tuple[str, int]]
# (name, pod, nodes, existing pods, objects, default constraints,
#  expected [(key, maxSkew, selector, policies, counts, paths)] or None for Skip)
Want = list[tuple[str, int, LabelSelector | None, tuple[str, str], dict[str, int], Paths]]
HI: tuple[str, str] = (HONOR, IGNORE)

PRE_FILTER_STATE_CASES: list[tuple[Any, ...]] = [
    (
        "clean cluster with one spreadConstraint",
        pod("p", FOO_L, tsc(5, "zone", selector=LabelSelector(match_labels={"foo": "bar"}))),
        ZONE4, [], [], [],
        [("zone", 5, LabelSelector(match_labels={"foo": "bar"}), HI,
          {"zone1": 0, "zone2": 0}, (("zone1", 0), ("zone2", 0)))],
    ),
    (
        "normal case with one spreadConstraint",
        pod("p", FOO_L, tsc(1, "zone")), ZONE4, SPREAD_5, [], [],
        [("zone", 1, FOO, HI, {"zone1": 3, "zone2": 2}, (("zone2", 2), ("zone1", 3)))],
    ),
    (
        "normal case with null label selector",
        pod("p", FOO_L, tsc(1, "zone", selector=None)), ZONE4, SPREAD_5, [], [],
        [("zone", 1, None, HI, {"zone1": 0, "zone2": 0}, (("zone1", 0), ("zone2", 0)))],
    ),
    (
        "normal case with one spreadConstraint, on a 3-zone cluster",
        pod("p", FOO_L, tsc(1, "zone")),
        [*ZONE4, zn("node-o", "zone3"), zn("node-p", "zone3")], SPREAD_5, [], [],
        [("zone", 1, FOO, HI, {"zone1": 3, "zone2": 2, "zone3": 0},
          (("zone3", 0), ("zone2", 2)))],
    ),
    (
        "namespace mismatch doesn't count",
        pod("p", FOO_L, tsc(1, "zone")), ZONE4,
        [
            pod("p-a1", FOO_L, on="node-a"),
            pod("p-a2", FOO_L, on="node-a", namespace="ns1"),
            pod("p-b1", FOO_L, on="node-b"),
            pod("p-y1", FOO_L, on="node-y", namespace="ns2"),
            pod("p-y2", FOO_L, on="node-y"),
        ],
        [], [],
        [("zone", 1, FOO, HI, {"zone1": 2, "zone2": 1}, (("zone2", 1), ("zone1", 2)))],
    ),
    (
        "normal case with two spreadConstraints",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node")), ZONE4, SPREAD_7, [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            ("node", 1, FOO, HI, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
             (("node-x", 0), ("node-b", 1))),
        ],
    ),
    (
        "soft spreadConstraints should be bypassed",
        pod("p", FOO_L, tsc(1, "zone", SA), tsc(1, "zone"), tsc(1, "node", SA), tsc(1, "node")),
        ZONE3, SPREAD_7, [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            ("node", 1, FOO, HI, {"node-a": 2, "node-b": 1, "node-y": 4},
             (("node-b", 1), ("node-a", 2))),
        ],
    ),
    (
        "different labelSelectors - simple version",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone"), tsc(1, "node", selector=BAR)),
        ZONE3, [pod("p-a", FOO_L, on="node-a"), pod("p-b", {"bar": ""}, on="node-b")], [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 1, "zone2": 0}, (("zone2", 0), ("zone1", 1))),
            ("node", 1, BAR, HI, {"node-a": 0, "node-b": 1, "node-y": 0},
             (("node-a", 0), ("node-y", 0))),
        ],
    ),
    (
        "different labelSelectors - complex pods",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone"), tsc(1, "node", selector=BAR)),
        ZONE3,
        [
            pod("p-a1", FOO_L, on="node-a"),
            pod("p-a2", {"foo": "", "bar": ""}, on="node-a"),
            pod("p-b1", FOO_L, on="node-b"),
            pod("p-y1", FOO_L, on="node-y"),
            pod("p-y2", {"foo": "", "bar": ""}, on="node-y"),
            pod("p-y3", FOO_L, on="node-y"),
            pod("p-y4", {"foo": "", "bar": ""}, on="node-y"),
        ],
        [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            ("node", 1, BAR, HI, {"node-a": 1, "node-b": 0, "node-y": 2},
             (("node-b", 0), ("node-a", 1))),
        ],
    ),
    (
        "two spreadConstraints, and with podAffinity",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node"),
            affinity=node_affinity("node", "NotIn", "node-x")),
        ZONE4, SPREAD_7, [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            ("node", 1, FOO, HI, {"node-a": 2, "node-b": 1, "node-y": 4},
             (("node-b", 1), ("node-a", 2))),
        ],
    ),
    (
        "default constraints and a service",
        pod("p", {"foo": "bar", "baz": "kar"}), [], [],
        [Service(metadata=meta("svc"), selector={"foo": "bar"})],
        [tsc(3, "node", DNS, None), tsc(2, "node", SA, None), tsc(5, "rack", DNS, None)],
        [
            ("node", 3, LabelSelector(match_labels={"foo": "bar"}), HI, {},
             (("", MAX_INT32), ("", MAX_INT32))),
            ("rack", 5, LabelSelector(match_labels={"foo": "bar"}), HI, {},
             (("", MAX_INT32), ("", MAX_INT32))),
        ],
    ),
    (
        "default constraints and a service that doesn't match",
        pod("p", {"foo": "bar"}), [], [],
        [Service(metadata=meta("svc"), selector={"baz": "kep"})],
        [tsc(3, "node", DNS, None)],
        None,
    ),
    (
        "default constraints and a service, but pod has constraints",
        pod("p", {"foo": "bar", "baz": "tar"},
            tsc(1, "zone", selector=LabelSelector(match_labels={"baz": "tar"})),
            tsc(2, "planet", SA, LabelSelector(match_labels={"fot": "rok"}))),
        [], [],
        [Service(metadata=meta("svc"), selector={"foo": "bar"})],
        [tsc(2, "node", DNS, None)],
        [("zone", 1, LabelSelector(match_labels={"baz": "tar"}), HI, {},
          (("", MAX_INT32), ("", MAX_INT32)))],
    ),
    (
        "default soft constraints and a service",
        pod("p", {"foo": "bar"}), [], [],
        [Service(metadata=meta("svc"), selector={"foo": "bar"})],
        [tsc(2, "node", SA, None)],
        None,
    ),
    (
        "TpKeyToDomainsNum is calculated when MinDomains is enabled",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node")), ZONE4, SPREAD_7, [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            ("node", 1, FOO, HI, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
             (("node-x", 0), ("node-b", 1))),
        ],
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        pod("p", FOO_L, tsc(1, "node", selector=BAR), node_selector={"foo": ""}),
        POLICY_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, HI, {"node-a": 1, "node-b": 2}, (("node-a", 1), ("node-b", 2)))],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p", FOO_L, tsc(1, "node", selector=BAR, affinity_policy=IGNORE),
            node_selector={"foo": ""}),
        POLICY_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, (IGNORE, IGNORE), {"node-a": 1, "node-b": 2, "node-c": 0},
          (("node-c", 0), ("node-a", 1)))],
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        pod("p", FOO_L, tsc(1, "node", selector=BAR), affinity=node_affinity("foo", "In", "")),
        POLICY_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, HI, {"node-a": 1, "node-b": 2}, (("node-a", 1), ("node-b", 2)))],
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        pod("p", FOO_L, tsc(1, "node", selector=BAR, affinity_policy=IGNORE),
            affinity=node_affinity("foo", "In", "")),
        POLICY_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, (IGNORE, IGNORE), {"node-a": 1, "node-b": 2, "node-c": 0},
          (("node-c", 0), ("node-a", 1)))],
    ),
    (
        "NodeTaintsPolicy ignored",
        pod("p", FOO_L, tsc(1, "node", selector=BAR)), POLICY_TAINT_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, HI, {"node-a": 1, "node-b": 2, "node-c": 0},
          (("node-c", 0), ("node-a", 1)))],
    ),
    (
        "NodeTaintsPolicy honored",
        pod("p", FOO_L, tsc(1, "node", selector=BAR, taints_policy=HONOR)),
        POLICY_TAINT_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, (HONOR, HONOR), {"node-a": 1, "node-b": 2},
          (("node-a", 1), ("node-b", 2)))],
    ),
    (
        "NodeTaintsPolicy honored with tolerated taints",
        pod("p", FOO_L, tsc(1, "node", selector=BAR, taints_policy=HONOR),
            tolerations=[Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")]),
        POLICY_TAINT_NODES, POLICY_PODS, [], [],
        [("node", 1, BAR, (HONOR, HONOR), {"node-a": 1, "node-b": 2, "node-c": 0},
          (("node-c", 0), ("node-a", 1)))],
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node", affinity_policy=IGNORE),
            node_selector={"foo": ""}),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        [*existing("node-b", "p-b1", "p-b2", foo=""), *existing("node-x", "p-x1", foo="")],
        [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 0, "zone2": 1}, (("zone1", 0), ("zone2", 1))),
            ("node", 1, FOO, (IGNORE, IGNORE), {"node-a": 0, "node-b": 2, "node-x": 1},
             (("node-a", 0), ("node-x", 1))),
        ],
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod("p", FOO_L, tsc(1, "zone", taints_policy=HONOR), tsc(1, "node")),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", taints=[UNSCHEDULABLE_TAINT]),
         zn("node-x", "zone2", foo="")],
        [*existing("node-b", "p-b1", "p-b2", foo=""), *existing("node-x", "p-x1", foo="")],
        [], [],
        [
            ("zone", 1, FOO, (HONOR, HONOR), {"zone1": 0, "zone2": 1},
             (("zone1", 0), ("zone2", 1))),
            ("node", 1, FOO, HI, {"node-a": 0, "node-b": 2, "node-x": 1},
             (("node-a", 0), ("node-x", 1))),
        ],
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node"), node_selector={"foo": ""}),
        [zn("node-a", "zone1"), zn("node-b", "zone1", taints=[UNSCHEDULABLE_TAINT], foo=""),
         zn("node-x", "zone2", foo=""), zn("node-y", "zone2")],
        [*existing("node-a", "p-a1", "p-a2", foo=""), *existing("node-x", "p-x1", foo=""),
         *existing("node-y", "p-y1", foo="")],
        [], [],
        [
            ("zone", 1, FOO, HI, {"zone1": 0, "zone2": 1}, (("zone1", 0), ("zone2", 1))),
            ("node", 1, FOO, HI, {"node-b": 0, "node-x": 1}, (("node-b", 0), ("node-x", 1))),
        ],
    ),
    (
        "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        pod("p", FOO_L, tsc(1, "zone", affinity_policy=IGNORE),
            tsc(1, "node", taints_policy=HONOR), node_selector={"foo": ""}),
        [zn("node-a", "zone1"), zn("node-b", "zone1", taints=[UNSCHEDULABLE_TAINT], foo=""),
         zn("node-x", "zone2", foo=""), zn("node-y", "zone2", foo="")],
        [*existing("node-a", "p-a1", "p-a2", foo=""), *existing("node-x", "p-x1", "p-x2", foo=""),
         *existing("node-y", "p-y1", foo="")],
        [], [],
        [
            ("zone", 1, FOO, (IGNORE, IGNORE), {"zone1": 2, "zone2": 3},
             (("zone1", 2), ("zone2", 3))),
            ("node", 1, FOO, (HONOR, HONOR), {"node-x": 2, "node-y": 1},
             (("node-y", 1), ("node-x", 2))),
        ],
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod("p", {"foo": "", "bar": "a"}, tsc(1, "zone", match_label_keys=("bar",))), ZONE4,
        [pod("p-a1", FOO_L, on="node-a"), pod("p-a2", {"foo": "", "bar": "a"}, on="node-a"),
         pod("p-b1", FOO_L, on="node-b"), pod("p-y1", {"foo": "", "bar": "a"}, on="node-y"),
         pod("p-y2", {"bar": ""}, on="node-y")],
        [], [],
        [("zone", 1, LabelSelector(match_labels={"bar": "a"},
                                   match_expressions=FOO.match_expressions),
          HI, {"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1)))],
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod("p", {"foo": "a"}, tsc(1, "zone", selector=LabelSelector(), match_label_keys=("foo",))),
        ZONE4, FOO_A, [], [],
        [("zone", 1, LabelSelector(match_labels={"foo": "a"}), HI, {"zone1": 3, "zone2": 2},
          (("zone2", 2), ("zone1", 3)))],
    ),
    (
        "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        pod("p", FOO_L, tsc(1, "zone", selector=None, match_label_keys=("bar",))), ZONE4, FOO_A,
        [], [],
        [("zone", 1, None, HI, {"zone1": 0, "zone2": 0}, (("zone1", 0), ("zone2", 0)))],
    ),
    (
        "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        pod("p", FOO_L, tsc(1, "zone", match_label_keys=("bar",))), ZONE4, FOO_A, [], [],
        [("zone", 1, FOO, HI, {"zone1": 3, "zone2": 2}, (("zone2", 2), ("zone1", 3)))],
    ),
    (
        "skip if not specified",
        pod("p", FOO_L), [zn("node-a", "zone1")], [], [], [],
        None,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_", "nodes", "pods", "objects", "defaults", "want"),
    [c[1:] for c in PRE_FILTER_STATE_CASES],
    ids=[c[0] for c in PRE_FILTER_STATE_CASES],
)
def test_pre_filter_state(
    pod_: Pod,
    nodes: list[Node],
    pods: list[Pod],
    objects: list[Any],
    defaults: list[TopologySpreadConstraint],
    want: Want | None,
) -> None:
    infos = build(nodes, pods)
    args: dict[str, Any] = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": c.max_skew, "topologyKey": c.topology_key,
         "whenUnsatisfiable": c.when_unsatisfiable}
        for c in defaults
    ]}  # fmt: skip
    pl = plugin(infos, objects, args)
    state = CycleState()
    result = pl.pre_filter(state, pod_, infos)
    if want is None:
        assert result == Status(Code.SKIP)
        return
    assert result is None
    s = state.read(PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState)
    got = [
        (
            c.topology_key,
            c.max_skew,
            None if c.selector.requirements is None else frozenset(c.selector.requirements),
            (c.node_affinity_policy, c.node_taints_policy),
            dict(s.tp_value_to_match_num[i]),
            sorted_paths(s, i),
        )
        for i, c in enumerate(s.constraints)
    ]
    expected = [
        (key, skew, requirements(sel), pol, counts, _sorted(paths))
        for key, skew, sel, pol, counts, paths in want
    ]
    assert got == expected


def _sorted(paths: Paths) -> Paths:
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return (v0, n0), (v1, n1)


# ---- TestPreFilterStateAddPod / RemovePod ---------------------------------------------

NODE_C = tsc(1, "node")
ZONE_C = tsc(1, "zone")
AFFINITY_NODES = [
    zn("node-a", "zone1", foo="bar"),
    zn("node-b", "zone2", foo=""),
]
TAINT_NODES = [
    zn("node-a", "zone1", taints=[UNSCHEDULABLE_TAINT]),
    zn("node-b", "zone2"),
]
NOT_BAR = node_affinity("foo", "NotIn", "bar")

# (name, preemptor, pod added, existing, node index, nodes, want [(counts, paths)])
ADD_POD_CASES: list[tuple[Any, ...]] = [
    (
        "node a and b both impact current min match",
        pod("p", FOO_L, NODE_C), pod("p-a1", FOO_L, on="node-a"), [], 0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [({"node-a": 1, "node-b": 0}, (("node-b", 0), ("node-a", 1)))],
    ),
    (
        "only node a impacts current min match",
        pod("p", FOO_L, NODE_C), pod("p-a1", FOO_L, on="node-a"),
        existing("node-b", "p-b1", foo=""), 0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [({"node-a": 1, "node-b": 1}, (("node-a", 1), ("node-b", 1)))],
    ),
    (
        "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        pod("p", FOO_L, NODE_C), pod("p-a1", FOO_L, on="node-a", namespace="ns1"),
        existing("node-b", "p-b1", foo=""), 0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [({"node-a": 0, "node-b": 1}, (("node-a", 0), ("node-b", 1)))],
    ),
    (
        "add pod on non-critical node won't trigger re-calculation",
        pod("p", FOO_L, NODE_C), pod("p-b2", FOO_L, on="node-b"),
        existing("node-b", "p-b1", foo=""), 1,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [({"node-a": 0, "node-b": 2}, (("node-a", 0), ("node-b", 2)))],
    ),
    (
        "node a and x both impact topologyKeyToMinPodsMap on zone and node",
        pod("p", FOO_L, ZONE_C, NODE_C), pod("p-a1", FOO_L, on="node-a"), [], 0,
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [
            ({"zone1": 1, "zone2": 0}, (("zone2", 0), ("zone1", 1))),
            ({"node-a": 1, "node-x": 0}, (("node-x", 0), ("node-a", 1))),
        ],
    ),
    (
        "only node a impacts topologyKeyToMinPodsMap on zone and node",
        pod("p", FOO_L, ZONE_C, NODE_C), pod("p-a1", FOO_L, on="node-a"),
        existing("node-x", "p-x1", foo=""), 0,
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [
            ({"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1))),
            ({"node-a": 1, "node-x": 1}, (("node-a", 1), ("node-x", 1))),
        ],
    ),
    (
        "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",  # noqa: E501 - upstream case name
        pod("p", FOO_L, ZONE_C, NODE_C), pod("p-a1", FOO_L, on="node-a"),
        [*existing("node-b", "p-b1", "p-b2", foo=""), *existing("node-x", "p-x1", foo="")], 0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            ({"zone1": 3, "zone2": 1}, (("zone2", 1), ("zone1", 3))),
            ({"node-a": 1, "node-b": 2, "node-x": 1}, (("node-a", 1), ("node-x", 1))),
        ],
    ),
    (
        "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
        pod("p", {"foo": "", "bar": ""}, ZONE_C, tsc(1, "node", selector=BAR)),
        pod("p-a1", FOO_L, on="node-a"),
        [pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
         pod("p-x1", {"foo": "", "bar": ""}, on="node-x"), pod("p-x2", {"bar": ""}, on="node-x")],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            ({"zone1": 2, "zone2": 1}, (("zone2", 1), ("zone1", 2))),
            ({"node-a": 0, "node-b": 1, "node-x": 2}, (("node-a", 0), ("node-b", 1))),
        ],
    ),
    (
        "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",  # noqa: E501 - upstream case name
        pod("p", {"foo": "", "bar": ""}, ZONE_C, tsc(1, "node", selector=BAR)),
        pod("p-a1", {"foo": "", "bar": ""}, on="node-a"),
        [pod("p-b1", {"bar": ""}, on="node-b"),
         pod("p-x1", {"foo": "", "bar": ""}, on="node-x"), pod("p-x2", {"bar": ""}, on="node-x")],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            ({"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1))),
            ({"node-a": 1, "node-b": 1, "node-x": 2}, (("node-a", 1), ("node-b", 1))),
        ],
    ),
    (
        "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        pod("p", FOO_L, ZONE_C, affinity=NOT_BAR),
        pod("p-a1", {"foo": "", "zone": "zone1"}, on="node-a"),
        [pod("p-a2", {"foo": "", "zone": "zone1"}, on="node-a"),
         pod("p-b1", {"foo": "", "zone": "zone2"}, on="node-b")],
        0, AFFINITY_NODES,
        [({"zone2": 1}, (("zone2", 1), ("", MAX_INT32)))],
    ),
    (
        "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        pod("p", FOO_L, ZONE_C), pod("p-b1", {"foo": "", "zone": "zone2"}, on="node-b"),
        [pod("p-a1", {"foo": "", "zone": "zone1"}, on="node-a"),
         pod("p-b2", {"foo": "", "zone": "zone2"}, on="node-b")],
        1, AFFINITY_NODES,
        [({"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
    ),
    (
        "add a label selector not matched pod when with NodeInclusionPolicy enabled",
        pod("p", FOO_L, ZONE_C), pod("p-b1", {"zone": "zone2"}, on="node-b"),
        [pod("p-a1", {"foo": "", "zone": "zone1"}, on="node-a"),
         pod("p-b2", {"foo": "", "zone": "zone2"}, on="node-b")],
        1, AFFINITY_NODES,
        [({"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1)))],
    ),
    (
        "add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
        pod("p", FOO_L, ZONE_C,
            tolerations=[Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")]),
        pod("p-b1", {"foo": "", "zone": "zone2"}, on="node-b"),
        [pod("p-a1", {"foo": "", "zone": "zone1"}, on="node-a"),
         pod("p-b2", {"foo": "", "zone": "zone2"}, on="node-b")],
        1, TAINT_NODES,
        [({"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("preemptor", "added", "pods", "node_idx", "nodes", "want"),
    [c[1:] for c in ADD_POD_CASES],
    ids=[c[0] for c in ADD_POD_CASES],
)
def test_pre_filter_state_add_pod(
    preemptor: Pod,
    added: Pod,
    pods: list[Pod],
    node_idx: int,
    nodes: list[Node],
    want: list[tuple[dict[str, int], Paths]],
) -> None:
    infos = build(nodes, pods)
    pl = plugin(infos)
    state = CycleState()
    assert pl.pre_filter(state, preemptor, infos) is None
    assert pl.add_pod(state, preemptor, PodInfo.of(added), infos[node_idx]) is None
    s = state.read(PRE_FILTER_STATE_KEY)
    got = [(dict(s.tp_value_to_match_num[i]), sorted_paths(s, i)) for i in range(len(want))]
    assert got == [(counts, _sorted(paths)) for counts, paths in want]


# (name, preemptor, nodes, existing, deleted index or pod, node index, want)
REMOVE_POD_CASES: list[tuple[Any, ...]] = [
    (
        "one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        pod("p", FOO_L, ZONE_C),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-x", "p-x1", foo="")],
        0, 0,
        [({"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1)))],
    ),
    (
        "one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        pod("p", FOO_L, ZONE_C), ZONE4,
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-x", "p-x1", foo=""), *existing("node-y", "p-y1", foo="")],
        0, 0,
        [({"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
    ),
    (
        "delete an irrelevant pod won't help",
        pod("p", FOO_L, ZONE_C), ZONE4,
        [pod("p-a0", {"bar": ""}, on="node-a"), *existing("node-a", "p-a1", foo=""),
         *existing("node-b", "p-b1", foo=""), *existing("node-x", "p-x1", foo=""),
         *existing("node-y", "p-y1", foo="")],
        0, 0,
        [({"zone1": 2, "zone2": 2}, (("zone1", 2), ("zone2", 2)))],
    ),
    (
        "delete a non-existing pod won't help",
        pod("p", FOO_L, ZONE_C), ZONE4,
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-x", "p-x1", foo=""), *existing("node-y", "p-y1", foo="")],
        pod("p-a0", {"bar": ""}, on="node-a"), 0,
        [({"zone1": 2, "zone2": 2}, (("zone1", 2), ("zone2", 2)))],
    ),
    (
        "two spreadConstraints",
        pod("p", FOO_L, ZONE_C, NODE_C),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [*existing("node-a", "p-a1", "p-a2", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-x", "p-x1", "p-x2", foo="")],
        3, 2,
        [
            ({"zone1": 3, "zone2": 1}, (("zone2", 1), ("zone1", 3))),
            ({"node-a": 2, "node-b": 1, "node-x": 1}, (("node-b", 1), ("node-x", 1))),
        ],
    ),
    (
        "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        pod("p", FOO_L, ZONE_C, affinity=NOT_BAR), AFFINITY_NODES,
        [pod("p-a2", {"foo": "", "zone": "zone1"}, on="node-a"),
         pod("p-b1", {"foo": "", "zone": "zone2"}, on="node-b")],
        pod("p-a1", {"foo": "", "zone": "zone1"}, on="node-a"), 0,
        [({"zone2": 1}, (("zone2", 1), ("", MAX_INT32)))],
    ),
    (
        "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        pod("p", FOO_L, ZONE_C), AFFINITY_NODES,
        [pod("p-a1", {"foo": "", "zone": "zone1"}, on="node-a"),
         pod("p-b2", {"foo": "", "zone": "zone2"}, on="node-b")],
        pod("p-b1", {"foo": "", "zone": "zone2"}, on="node-b"), 1,
        [({"zone1": 1, "zone2": 0}, (("zone2", 0), ("zone1", 1)))],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("preemptor", "nodes", "pods", "deleted", "node_idx", "want"),
    [c[1:] for c in REMOVE_POD_CASES],
    ids=[c[0] for c in REMOVE_POD_CASES],
)
def test_pre_filter_state_remove_pod(
    preemptor: Pod,
    nodes: list[Node],
    pods: list[Pod],
    deleted: int | Pod,
    node_idx: int,
    want: list[tuple[dict[str, int], Paths]],
) -> None:
    infos = build(nodes, pods)
    pl = plugin(infos)
    state = CycleState()
    assert pl.pre_filter(state, preemptor, infos) is None
    victim = pods[deleted] if isinstance(deleted, int) else deleted
    assert pl.remove_pod(state, preemptor, PodInfo.of(victim), infos[node_idx]) is None
    s = state.read(PRE_FILTER_STATE_KEY)
    got = [(dict(s.tp_value_to_match_num[i]), sorted_paths(s, i)) for i in range(len(want))]
    assert got == [(counts, _sorted(paths)) for counts, paths in want]


def test_pre_filter_state_clone_is_independent() -> None:
    infos = build(ZONE4, SPREAD_5)
    pl = plugin(infos)
    state = CycleState()
    p = pod("p", FOO_L, ZONE_C)
    pl.pre_filter(state, p, infos)
    copy = state.clone()
    victim = PodInfo.of(SPREAD_5[0])
    pl.remove_pod(copy, p, victim, infos[0])
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 3, "zone2": 2}]
    assert copy.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 2, "zone2": 2}]


def _zone_counts(pl: PodTopologySpread, p: Pod, infos: Sequence[NodeInfo]) -> dict[str, int]:
    state = CycleState()
    assert pl.pre_filter(state, p, infos) is None
    return dict(state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num[0])


def test_counts_follow_node_info_changes_across_cycles() -> None:
    """Counts kept from an earlier cycle are reused only for the very same, unchanged
    NodeInfo: a pod added in place, or a different NodeInfo for the node, is recounted."""
    infos = build(ZONE4, SPREAD_5)
    pl = plugin(infos)
    p = pod("p", FOO_L, ZONE_C)
    assert _zone_counts(pl, p, infos) == {"zone1": 3, "zone2": 2}
    infos[3].add_pod(PodInfo.of(pod("p-y3", FOO_L, on="node-y")))
    assert _zone_counts(pl, p, infos) == {"zone1": 3, "zone2": 3}
    replaced = infos[0].clone()
    assert replaced.remove_pod(SPREAD_5[0])
    replaced.generation = infos[0].generation  # same generation, another object
    assert _zone_counts(pl, p, [replaced, *infos[1:]]) == {"zone1": 2, "zone2": 3}
    assert _zone_counts(pl, p, infos) == {"zone1": 3, "zone2": 3}


def test_hostname_score_counts_follow_node_info_changes() -> None:
    infos = build(HOST_2, existing("node-a", "p-a1", foo=""))
    pl = plugin(infos, args={"defaultingType": "System"})
    p = pod("p", FOO_L, tsc(1, HOSTNAME, SA))

    def scores() -> dict[str, int]:
        state = CycleState()
        assert pl.pre_score(state, p, infos) is None
        raw = {i.name: pl.score(state, p, i) for i in infos}
        pl.normalize_score(state, p, raw)
        return raw

    assert scores() == {"node-a": 0, "node-b": 100}
    infos[1].add_pod(PodInfo.of(pod("p-b1", FOO_L, on="node-b")))
    infos[1].add_pod(PodInfo.of(pod("p-b2", FOO_L, on="node-b")))
    # Raw round(ln 4) = 1 and round(2 ln 4) = 3: 100 * (3 + 1 - s) / 3.
    assert scores() == {"node-a": 100, "node-b": 33}


HOST_2 = [node_l("node-a", {HOSTNAME: "node-a"}), node_l("node-b", {HOSTNAME: "node-b"})]


# ---- TestSingleConstraint / TestMultipleConstraints -------------------------------------

NP_NODES = [node_l(f"node-{c}", {"node": f"node-{c}"}) for c in "abc"]
POLICY4 = [
    node_l("node-a", {"node": "node-a", "foo": ""}),
    node_l("node-b", {"node": "node-b", "foo": ""}),
    node_l("node-x", {"node": "node-x", "foo": ""}),
    node_l("node-y", {"node": "node-y"}),
]
POLICY4_TAINTED = [*POLICY4[:3], node_l("node-y", {"node": "node-y"}, [UNSCHEDULABLE_TAINT])]
POLICY4_PODS = [*existing("node-a", "p-b1", foo=""), *existing("node-b", "p-b2", foo=""),
                *existing("node-y", "p-y1", foo="")]  # fmt: skip
SPREAD_2103 = [*SPREAD_5[:3], *existing("node-y", "p-y1", "p-y2", "p-y3", foo="")]
SPREAD_221 = [*existing("node-a", "p-a1", "p-a2", foo=""),
              *existing("node-b", "p-b1", "p-b2", foo=""),
              *existing("node-c", "p-c1", foo="")]  # fmt: skip
ZONE_21 = [*existing("node-a", "p-b1", foo=""), *existing("node-b", "p-b2", foo=""),
           *existing("node-y", "p-y1", foo="")]  # fmt: skip

SINGLE_CONSTRAINT_CASES: list[tuple[Any, ...]] = [
    ("no existing pods", pod("p", FOO_L, tsc(1, "zone")), ZONE4, [], [OK, OK, OK, OK]),
    (
        "no existing pods, incoming pod doesn't match itself",
        pod("p", FOO_L, tsc(1, "zone", selector=BAR)), ZONE4, [], [OK, OK, OK, OK],
    ),
    (
        "existing pods in a different namespace do not count",
        pod("p", FOO_L, tsc(1, "zone")), ZONE4,
        [pod("p-a1", FOO_L, on="node-a", namespace="ns1"),
         pod("p-b1", FOO_L, on="node-a", namespace="ns2"),
         *existing("node-x", "p-x1", foo=""), *existing("node-y", "p-y1", foo="")],
        [OK, OK, UNSCHED, UNSCHED],
    ),
    (
        "existing pods do not match null selector",
        pod("p", FOO_L, tsc(1, "zone", selector=None)), ZONE4,
        [*existing("node-x", "p-x1", foo=""), *existing("node-y", "p-y1", foo="")],
        [OK, OK, OK, OK],
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        pod("p", FOO_L, tsc(1, "zone")), ZONE4, SPREAD_2103, [OK, OK, OK, OK],
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        pod("p", FOO_L, tsc(1, "zone")),
        [zn("node-a", "zone1"), node_l("node-b", {"zon": "zone1", "node": "node-b"}),
         zn("node-x", "zone2"), zn("node-y", "zone2")],
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-x", "p-x1", foo=""), *existing("node-y", "p-y1", foo="")],
        [OK, UNRESOLVABLE, UNSCHED, UNSCHED],
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        pod("p", FOO_L, tsc(1, "rack")), [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
        [UNRESOLVABLE, UNRESOLVABLE],
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        pod("p", FOO_L, tsc(1, "node")), ZONE4, SPREAD_2103, [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        pod("p", FOO_L, tsc(2, "node")), ZONE4, SPREAD_2103, [UNSCHED, OK, OK, UNSCHED],
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        pod("p", {"bar": ""}, tsc(1, "node")), ZONE4, SPREAD_2103, [UNSCHED, OK, OK, UNSCHED],
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod("p", FOO_L, tsc(1, "node"), affinity=node_affinity("node", "In", "node-a", "node-y")),
        ZONE4, SPREAD_2103, [OK, OK, OK, UNSCHED],
    ),
    (
        "terminating Pods should be excluded",
        pod("p", FOO_L, tsc(1, "node")),
        [node_l("node-a", {"node": "node-a"}), node_l("node-b", {"node": "node-b"})],
        [pod("p-a", FOO_L, on="node-a", terminating=True), pod("p-b", FOO_L, on="node-b")],
        [OK, UNSCHED],
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        pod("p", FOO_L, tsc(1, "zone"), affinity=node_affinity("node", "NotIn", "node-b")),
        ZONE4, [*existing("node-b", "p-b1", "p-b2", foo=""), *existing("node-y", "p-y1", foo="")],
        [OK, OK, UNSCHED, UNSCHED],
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",  # noqa: E501 - upstream case name
        pod("p", FOO_L, tsc(2, "node", min_domains=4)), NP_NODES, SPREAD_221,
        [UNSCHED, UNSCHED, OK],
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",  # noqa: E501 - upstream case name
        pod("p", FOO_L, tsc(2, "node", min_domains=2)), NP_NODES, SPREAD_221, [OK, OK, OK],
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",  # noqa: E501 - upstream case name
        pod("p", FOO_L, tsc(2, "zone", min_domains=3)), ZONE4, ZONE_21,
        [UNSCHED, UNSCHED, OK, OK],
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",  # noqa: E501 - upstream case name
        pod("p", FOO_L, tsc(2, "zone", min_domains=1)), ZONE4, ZONE_21, [OK, OK, OK, OK],
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        pod("p", FOO_L, tsc(1, "node"), node_selector={"foo": ""}), POLICY4, POLICY4_PODS,
        [UNSCHED, UNSCHED, OK, OK],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p", FOO_L, tsc(1, "node", affinity_policy=IGNORE), node_selector={"foo": ""}),
        POLICY4, POLICY4_PODS, [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        pod("p", FOO_L, tsc(1, "node"), affinity=node_affinity("foo", "In", "")),
        POLICY4, POLICY4_PODS, [UNSCHED, UNSCHED, OK, OK],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",  # upstream reuses the name
        pod("p", FOO_L, tsc(1, "node", affinity_policy=IGNORE),
            affinity=node_affinity("foo", "In", "")),
        POLICY4, POLICY4_PODS, [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "NodeTaintsPolicy honored",
        pod("p", FOO_L, tsc(1, "node", taints_policy=HONOR)), POLICY4_TAINTED, POLICY4_PODS,
        [UNSCHED, UNSCHED, OK, OK],
    ),
    (
        "NodeTaintsPolicy ignored",
        pod("p", FOO_L, tsc(1, "node")), POLICY4_TAINTED, POLICY4_PODS,
        [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
]  # fmt: skip

MULTI_CONSTRAINT_CASES: list[tuple[Any, ...]] = [
    (
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node")), ZONE4, SPREAD_2103,
        [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node")), ZONE4,
        [*SPREAD_2103, *existing("node-y", "p-y4", foo="")],
        [UNSCHED, UNSCHED, UNSCHED, UNSCHED],
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone"), tsc(1, "node", selector=BAR)), ZONE4,
        [pod("p-a1", FOO_L, on="node-a"), pod("p-y1", {"bar": ""}, on="node-y")],
        [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone"), tsc(1, "node", selector=BAR)), ZONE4,
        [pod("p-a1", FOO_L, on="node-a"), pod("p-x1", {"bar": ""}, on="node-x"),
         pod("p-y1", {"bar": ""}, on="node-y")],
        [UNSCHED, UNSCHED, UNSCHED, UNSCHED],
    ),
    (
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone"), tsc(1, "node", selector=BAR)), ZONE4,
        [pod("p-a1", FOO_L, on="node-a"), pod("p-a2", {"foo": "", "bar": ""}, on="node-a"),
         pod("p-y1", FOO_L, on="node-y"), pod("p-y2", {"foo": "", "bar": ""}, on="node-y"),
         pod("p-y3", FOO_L, on="node-y")],
        [UNSCHED, OK, UNSCHED, UNSCHED],
    ),
    (
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",  # noqa: E501 - upstream case name
        pod("p", {"bar": ""}, tsc(1, "zone"), tsc(1, "node", selector=BAR)), ZONE4,
        [pod("p-a1", FOO_L, on="node-a"), pod("p-x1", {"bar": ""}, on="node-x"),
         pod("p-y1", {"bar": ""}, on="node-y")],
        [OK, OK, UNSCHED, UNSCHED],
    ),
    (
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",  # noqa: E501 - upstream case name
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node")),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), node_l("node-x", {"zone": "zone2"}),
         zn("node-y", "zone2")],
        [*existing("node-a", "p-a1", foo=""), *existing("node-y", "p-y3", foo="")],
        [UNSCHED, OK, UNRESOLVABLE, UNSCHED],
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node", affinity_policy=IGNORE),
            node_selector={"foo": ""}),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""),
         zn("node-x", "zone2", foo=""), zn("node-y", "zone2")],
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-y", "p-y1", foo="")],
        [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod("p", FOO_L, tsc(1, "zone", taints_policy=HONOR), tsc(1, "node")),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""),
         zn("node-x", "zone2", foo=""), zn("node-y", "zone2", taints=[UNSCHEDULABLE_TAINT])],
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-y", "p-y1", foo="")],
        [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node"), node_selector={"foo": ""}),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
         zn("node-y", "zone2", taints=[UNSCHEDULABLE_TAINT], foo="")],
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-y", "p-y1", foo="")],
        [UNSCHED, OK, OK, UNSCHED],
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        pod("p", FOO_L, tsc(1, "zone", taints_policy=HONOR),
            tsc(1, "node", affinity_policy=IGNORE), node_selector={"foo": ""}),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
         zn("node-y", "zone2", taints=[UNSCHEDULABLE_TAINT], foo="")],
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-y", "p-y1", foo="")],
        [UNSCHED, UNSCHED, OK, UNSCHED],
    ),
]  # fmt: skip


def _run_filter(pod_: Pod, nodes: list[Node], pods: list[Pod]) -> list[Status | None]:
    infos = build(nodes, pods)
    pl = plugin(infos)
    state = CycleState()
    assert pl.pre_filter(state, pod_, infos) is None
    return [pl.filter(state, pod_, info) for info in infos]


def _code(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


@pytest.mark.parametrize(
    ("pod_", "nodes", "pods", "want"),
    [c[1:] for c in SINGLE_CONSTRAINT_CASES],
    ids=[c[0] for c in SINGLE_CONSTRAINT_CASES],
)
def test_single_constraint(pod_: Pod, nodes: list[Node], pods: list[Pod], want: list[Code]) -> None:
    assert [_code(s) for s in _run_filter(pod_, nodes, pods)] == want


@pytest.mark.parametrize(
    ("pod_", "nodes", "pods", "want"),
    [c[1:] for c in MULTI_CONSTRAINT_CASES],
    ids=[c[0] for c in MULTI_CONSTRAINT_CASES],
)
def test_multiple_constraints(
    pod_: Pod, nodes: list[Node], pods: list[Pod], want: list[Code]
) -> None:
    assert [_code(s) for s in _run_filter(pod_, nodes, pods)] == want


def test_filter_reasons() -> None:
    """The reason strings go out verbatim, as upstream's ErrReason constants."""
    statuses = _run_filter(*SINGLE_CONSTRAINT_CASES[5][1:4])
    assert statuses[1] == Status(UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,))
    assert statuses[2] == Status(UNSCHED, (ERR_REASON_CONSTRAINTS_NOT_MATCH,))
    assert (
        ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    )
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    )


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an error."""
    pl = plugin([])
    status = pl.filter(CycleState(), Pod(metadata=meta("p")), NodeInfo.of(node_l("n", {})))
    assert status == Status.error('reading "PreFilterPodTopologySpread" from cycleState: not found')


def test_empty_selector_counts_every_pod() -> None:
    """``labelSelector: {}`` selects every pod of the namespace (kubernetes#141340)."""
    statuses = _run_filter(
        pod("p", FOO_L, tsc(1, "node", selector=LabelSelector())),
        [node_l("node-a", {"node": "node-a"}), node_l("node-b", {"node": "node-b"})],
        [pod("p-a1", {"x": "1"}, on="node-a")],
    )
    assert [_code(s) for s in statuses] == [UNSCHED, OK]


def test_invalid_selector_is_an_error() -> None:
    bad = LabelSelector(match_expressions=(LabelSelectorRequirement(key="k", operator="In"),))
    pl = plugin([])
    result = pl.pre_filter(CycleState(), pod("p", FOO_L, tsc(1, "zone", selector=bad)), [])
    assert isinstance(result, Status)
    assert result.code is Code.ERROR


# ---- TestPreScoreSkip / TestPreScoreStateEmptyNodes ----------------------------------------

RS1_FOO = ReplicaSet(metadata=meta("rs1"), selector=FOO)
RS_OWNER = OwnerReference(kind="ReplicaSet", name="rs1", controller=True)


def test_pre_score_skip_without_soft_constraints() -> None:
    """TestPreScoreSkip: the pod doesn't have soft topology spread Constraints."""
    infos = build([hn("node-a"), hn("node-b")], [])
    pl = plugin(infos)
    assert pl.pre_score(CycleState(), pod("p"), infos) == Status(Code.SKIP)


def test_pre_score_skip_replicaset_not_matching() -> None:
    """TestPreScoreSkip: default constraints and a replicaset that doesn't match."""
    infos = build([node_l("node-a", {"planet": "mars"})], [])
    rs = ReplicaSet(metadata=meta("rs1"), selector=exists("tar"))
    pl = plugin(infos, [rs], {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
    })  # fmt: skip
    p = pod("p", {"foo": "bar", "baz": "sup"},
            owner=OwnerReference(kind="ReplicaSet", name="rs2", controller=True))  # fmt: skip
    assert pl.pre_score(CycleState(), p, infos) == Status(Code.SKIP)


PRE_SCORE_STATE_CASES: list[tuple[Any, ...]] = [
    (
        "normal case",
        pod("p", FOO_L, tsc(1, "zone", SA), tsc(1, HOSTNAME, SA)),
        [zhn("node-a", "zone1"), zhn("node-b", "zone1"),
         zhn("node-x", "zone2")],
        [], {"defaultingType": "List"},
        [("zone", 1, FOO), (HOSTNAME, 1, FOO)], set(),
        [{"zone1": 0, "zone2": 0}, {}], [2, 3],
    ),
    (
        "null selector",
        pod("p", FOO_L, tsc(1, "zone", SA, None)),
        [zhn("node-a", "zone1"), zhn("node-b", "zone1"),
         zhn("node-x", "zone2")],
        [], {"defaultingType": "List"},
        [("zone", 1, None)], set(), [{"zone1": 0, "zone2": 0}], [2],
    ),
    (
        "node-x doesn't have label zone",
        pod("p", FOO_L, tsc(1, "zone", SA), tsc(1, HOSTNAME, SA, BAR)),
        [zhn("node-a", "zone1"), zhn("node-b", "zone1"),
         hn("node-x")],
        [], {"defaultingType": "List"},
        [("zone", 1, FOO), (HOSTNAME, 1, BAR)], {"node-x"}, [{"zone1": 0}, {}], [1, 2],
    ),
    (
        "system default constraints and a replicaset",
        pod("p", {"foo": "tar", "baz": "sup"}, owner=RS_OWNER),
        [hn("node-a", **{ZONE: "mars"}), hn("node-b", **{ZONE: "mars"}),
         hn("node-c"), hn("node-d")],
        [RS1_FOO], {"defaultingType": "System"},
        [(HOSTNAME, 3, FOO), (ZONE, 5, FOO)], set(), [{}, {"mars": 0, "": 0}], [4, 2],
    ),
    (
        "default constraints and a replicaset",
        pod("p", {"foo": "tar", "baz": "sup"}, owner=RS_OWNER),
        [node_l("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})],
        [RS1_FOO],
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SA},
            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},
        ]},
        [(HOSTNAME, 1, FOO), ("planet", 2, FOO)], set(), [{}, {"mars": 0}], [1, 1],
    ),
    (
        "default constraints and a replicaset, but pod has constraints",
        pod("p", {"foo": "bar", "baz": "sup"},
            tsc(1, "zone", DNS, BAR),
            tsc(2, "planet", SA, LabelSelector(match_labels={"baz": "sup"})), owner=RS_OWNER),
        [node_l("node-a", {"planet": "mars", "galaxy": "andromeda"})],
        [RS1_FOO],
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA},
        ]},
        [("planet", 2, LabelSelector(match_labels={"baz": "sup"}))], set(), [{"mars": 0}], [1],
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        pod("p", FOO_L, tsc(1, "zone", SA, BAR), node_selector={"foo": ""}),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2")],
        [], {"defaultingType": "List"},
        [("zone", 1, BAR)], set(), [{"zone1": 0, "zone2": 0}], [2],
    ),
    (
        "NodeTaintsPolicy honored",
        pod("p", FOO_L, tsc(1, "zone", SA, BAR, taints_policy=HONOR)),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""),
         zn("node-x", "zone2", taints=[UNSCHEDULABLE_TAINT])],
        [], {"defaultingType": "List"},
        [("zone", 1, BAR)], set(), [{"zone1": 0, "zone2": 0}], [2],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_", "nodes", "objects", "args", "constraints", "ignored", "counts", "sizes"),
    [c[1:] for c in PRE_SCORE_STATE_CASES],
    ids=[c[0] for c in PRE_SCORE_STATE_CASES],
)
def test_pre_score_state_empty_nodes(
    pod_: Pod,
    nodes: list[Node],
    objects: list[Any],
    args: dict[str, Any],
    constraints: list[tuple[str, int, LabelSelector | None]],
    ignored: set[str],
    counts: list[dict[str, int]],
    sizes: list[int],
) -> None:
    infos = build(nodes, [])
    pl = plugin(infos, objects, args)
    state = CycleState()
    assert pl.pre_score(state, pod_, infos) is None
    s = state.read(PRE_SCORE_STATE_KEY)
    assert isinstance(s, PreScoreState)
    got = [
        (c.topology_key, c.max_skew, None if c.selector.requirements is None
         else frozenset(c.selector.requirements))
        for c in s.constraints
    ]  # fmt: skip
    assert got == [(k, skew, requirements(sel)) for k, skew, sel in constraints]
    assert s.ignored_nodes == ignored
    assert s.topology_value_to_pod_counts == counts
    assert s.topology_normalizing_weight == [topology_normalizing_weight(n) for n in sizes]


# ---- TestPodTopologySpreadScore -------------------------------------------------------------

HOST4 = [hn(f"node-{c}") for c in "abcd"]
SPREAD_4321 = [
    *existing("node-a", "p-a1", "p-a2", "p-a3", "p-a4", foo=""),
    *existing("node-b", "p-b1", "p-b2", "p-b3", foo=""),
    *existing("node-c", "p-c1", "p-c2", foo=""),
    *existing("node-d", "p-d1", foo=""),
]
SPREAD_4213 = [
    *existing("node-a", "p-a1", "p-a2", "p-a3", "p-a4", foo=""),
    *existing("node-b", "p-b1", "p-b2", foo=""),
    *existing("node-x", "p-x1", foo=""),
    *existing("node-y", "p-y1", "p-y2", "p-y3", foo=""),
]
SPREAD_2103_D = [
    *existing("node-a", "p-a1", "p-a2", foo=""),
    *existing("node-b", "p-b1", foo=""),
    *existing("node-d", "p-d1", "p-d2", "p-d3", foo=""),
]
ZH = [zhn(f"node-{c}", z) for c, z in
      [("a", "zone1"), ("b", "zone1"), ("x", "zone2"), ("y", "zone2")]]  # fmt: skip
ZH_ABCD = [zhn(f"node-{c}", z) for c, z in
           [("a", "zone1"), ("b", "zone1"), ("c", "zone2"), ("d", "zone2")]]  # fmt: skip
DIFF_SELECTOR_PODS = [
    pod("p-a1", FOO_L, on="node-a"),
    pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
    pod("p-y1", FOO_L, on="node-y"),
    pod("p-y2", {"bar": ""}, on="node-y"),
]
POLICY3 = [
    node_l("node-a", {"node": "node-a", "foo": ""}),
    node_l("node-b", {"node": "node-b", "foo": ""}),
    node_l("node-c", {"node": "node-c"}),
]
POLICY3_TAINTED = [
    node_l("node-a", {"node": "node-a"}),
    node_l("node-b", {"node": "node-b"}),
    node_l("node-c", {"node": "node-c"}, [UNSCHEDULABLE_TAINT]),
]
POLICY3_PODS = [*existing("node-a", "p-a1", "p-a2", foo=""), *existing("node-b", "p-b1", foo=""),
                *existing("node-c", "p-c1", foo="")]  # fmt: skip

# (name, pod, existing, nodes, failed nodes, objects, want)
SCORE_CASES: list[tuple[Any, ...]] = [
    (
        "one constraint on node, no existing pods",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)), [], HOST4[:2], [], [],
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, only one node is candidate",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)),
        [*existing("node-a", "p-a1", "p-a2", foo=""), *existing("node-b", "p-b1", foo="")],
        HOST4[:1], HOST4[1:2], [], {"node-a": 100},
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)),
        [*existing("node-a", "p-a1", foo=""), *existing("node-b", "p-b1", foo="")],
        HOST4[:2], [], [], {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)), SPREAD_2103_D, HOST4, [], [],
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    (
        "one constraint on node, null selector",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA, None)), SPREAD_2103_D, HOST4, [], [],
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod("p", FOO_L, tsc(2, HOSTNAME, SA)), SPREAD_2103_D, HOST4, [], [],
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod("p", FOO_L, tsc(3, HOSTNAME, SA)), SPREAD_4321, HOST4, [], [],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "system defaulting, nodes don't have zone, pods match service",
        pod("p", FOO_L), SPREAD_4321, HOST4, [],
        [Service(metadata=meta("svc"), selector={"foo": ""})],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)), SPREAD_4213,
        [hn("node-a"), hn("node-b"), hn("node-x")], [hn("node-y")], [],
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",  # noqa: E501 - upstream case name
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)), SPREAD_4213,
        [hn("node-a"), node_l("node-b", {"n": "node-b"}), hn("node-x")], [hn("node-y")], [],
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        pod("p", FOO_L, tsc(1, "zone", SA)), SPREAD_4213, ZH[:3], ZH[3:], [],
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    (
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod("p", FOO_L, tsc(1, "zone", SA), tsc(1, HOSTNAME, SA)),
        [*existing("node-a", "p-a1", "p-a2", foo=""), *existing("node-b", "p-b1", foo=""),
         *existing("node-x", "p-x1", "p-x2", foo=""),
         *existing("node-y", "p-y1", "p-y2", "p-y3", "p-y4", foo="")],
        [ZH[0], ZH[2]], [ZH[1], ZH[3]], [],
        {"node-a": 100, "node-x": 63},
    ),
    (
        "two Constraints on zone and node, with different labelSelectors",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone", SA), tsc(1, HOSTNAME, SA, BAR)),
        DIFF_SELECTOR_PODS, ZH, [], [],
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone", SA), tsc(1, HOSTNAME, SA, BAR)),
        [pod("p-b1", {"bar": ""}, on="node-b"), pod("p-x1", FOO_L, on="node-x"),
         pod("p-y1", {"foo": "", "bar": ""}, on="node-y")],
        ZH, [], [],
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",  # noqa: E501 - upstream case name
        pod("p", {"foo": "", "bar": ""}, tsc(1, "zone", SA), tsc(1, HOSTNAME, SA, BAR)),
        DIFF_SELECTOR_PODS, ZH[:3], ZH[3:], [],
        {"node-a": 50, "node-b": 25, "node-x": 100},
    ),
    (
        "existing pods in a different namespace do not count",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)),
        [pod("p-a1", FOO_L, on="node-a", namespace="ns1"), pod("p-a2", FOO_L, on="node-a"),
         *existing("node-b", "p-b1", "p-b2", foo="")],
        HOST4[:2], [], [], {"node-a": 100, "node-b": 33},
    ),
    (
        "terminating Pods should be excluded",
        pod("p", FOO_L, tsc(1, HOSTNAME, SA)),
        [pod("p-a", FOO_L, on="node-a", terminating=True), pod("p-b", FOO_L, on="node-b")],
        HOST4[:2], [], [], {"node-a": 100, "node-b": 0},
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        pod("p", FOO_L, tsc(2, "node", SA, min_domains=10)), SPREAD_221, NP_NODES, [], [],
        {"node-a": 75, "node-b": 75, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy honoed with labelSelectors",
        pod("p", FOO_L, tsc(1, "node", SA), node_selector={"foo": ""}), POLICY3_PODS, POLICY3,
        [], [], {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p", FOO_L, tsc(1, "node", SA, affinity_policy=IGNORE), node_selector={"foo": ""}),
        POLICY3_PODS, POLICY3, [], [], {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy honoed with nodeAffinity",
        pod("p", FOO_L, tsc(1, "node", SA), affinity=node_affinity("foo", "In", "")),
        POLICY3_PODS, POLICY3, [], [], {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        pod("p", FOO_L, tsc(1, "node", SA, affinity_policy=IGNORE),
            affinity=node_affinity("foo", "In", "")),
        POLICY3_PODS, POLICY3, [], [], {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "NodeTaintsPolicy honored",
        pod("p", FOO_L, tsc(1, "node", SA, taints_policy=HONOR)), POLICY3_PODS, POLICY3_TAINTED,
        [], [], {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeTaintsPolicy ignored",
        pod("p", FOO_L, tsc(1, "node", SA)), POLICY3_PODS, POLICY3_TAINTED,
        [], [], {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod("p", {"foo": "", "bar": ""},
            tsc(1, "zone", SA, LabelSelector(), match_label_keys=("foo",)),
            tsc(1, HOSTNAME, SA, LabelSelector(), match_label_keys=("bar",))),
        [pod("p-a1", FOO_L, on="node-a"), pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
         pod("p-y1", FOO_L, on="node-c"), pod("p-y2", {"bar": ""}, on="node-c")],
        ZH_ABCD, [], [],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod("p", {"foo": "", "bar": "", "baz": ""},
            tsc(1, "zone", SA), tsc(1, HOSTNAME, SA, BAR, match_label_keys=("baz",))),
        [pod("p-a1", FOO_L, on="node-a"),
         pod("p-b1", {"foo": "", "bar": "", "baz": ""}, on="node-b"),
         pod("p-c1", FOO_L, on="node-c"), pod("p-c2", {"bar": ""}, on="node-c"),
         pod("p-d3", {"bar": "", "baz": ""}, on="node-c")],
        ZH_ABCD, [], [],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
]  # fmt: skip


def _run_score(
    pod_: Pod,
    pods: list[Pod],
    nodes: list[Node],
    failed: list[Node],
    objects: list[Any],
    args: Mapping[str, Any] | None = None,
) -> dict[str, int]:
    all_infos = build([*nodes, *failed], pods)
    feasible = all_infos[: len(nodes)]
    pl = plugin(all_infos, objects, args or {"defaultingType": "System"})
    state = CycleState()
    assert pl.pre_score(state, pod_, feasible) is None
    scores = {info.name: pl.score(state, pod_, info) for info in feasible}
    assert pl.normalize_score(state, pod_, scores) is None
    return scores


@pytest.mark.parametrize(
    ("pod_", "pods", "nodes", "failed", "objects", "want"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_pod_topology_spread_score(
    pod_: Pod,
    pods: list[Pod],
    nodes: list[Node],
    failed: list[Node],
    objects: list[Any],
    want: dict[str, int],
) -> None:
    assert _run_score(pod_, pods, nodes, failed, objects) == want


def test_score_rounds_halves_away_from_zero() -> None:
    from ksched.plugins.pod_topology_spread._scoring import round_half_away

    assert [round_half_away(x) for x in (0.5, 1.5, 2.5, 2.4999, 0.0)] == [1, 2, 3, 2, 0]
    assert round_half_away(3 * math.log(6)) == 5


# ---- default constraints and the default selector ------------------------------------------


def test_default_selector_merges_services_and_controller() -> None:
    """helper.DefaultSelector: services that select the pod, plus its controller's selector."""
    infos = build([hn("node-a"), hn("node-b")], [])
    objects = [
        Service(metadata=meta("svc"), selector={"app": "web"}),
        Service(metadata=meta("other"), selector={"app": "db"}),
        ReplicaSet(metadata=meta("rs"), selector=exists("tier")),
    ]
    owner = OwnerReference(kind="ReplicaSet", name="rs", controller=True)
    p = pod("p", {"app": "web", "tier": "fe"}, owner=owner)
    pl = plugin(infos, objects, {"defaultingType": "System"})
    constraints = pl.constraints_for(p, SA)
    assert [c.topology_key for c in constraints] == [HOSTNAME, ZONE]
    assert frozenset(constraints[0].selector.requirements or ()) == {
        ("app", "In", frozenset({"web"})),
        ("tier", "Exists", frozenset()),
    }
    # Only p-a1 carries both labels: hostname counts 1/0; the nodes have no zone, so the
    # zone constraint does not score: raw 3/2 -> 66/100.
    pods = [
        pod("p-a1", {"app": "web", "tier": "fe"}, on="node-a"),
        pod("p-a2", {"app": "web"}, on="node-a"),
    ]
    scores = _run_score(p, pods, [hn("node-a"), hn("node-b")], [], objects)
    assert scores == {"node-a": 66, "node-b": 100}


def test_default_selector_ignores_non_controller_owner() -> None:
    objects = [ReplicationController(metadata=meta("rc"), selector={"app": "web"})]
    p = pod("p", {"app": "web"}, owner=OwnerReference(kind="ReplicationController", name="rc"))
    pl = plugin([], objects, {"defaultingType": "System"})
    assert pl.constraints_for(p, SA) == []
    owned = pod("p", {"app": "web"},
                owner=OwnerReference(kind="ReplicationController", name="rc",
                                     controller=True))  # fmt: skip
    assert len(pl.constraints_for(owned, SA)) == 2


def test_default_selector_statefulset() -> None:
    objects = [StatefulSet(metadata=meta("db"), selector=LabelSelector(match_labels={"app": "db"}))]
    p = pod(
        "p", {"app": "db"}, owner=OwnerReference(kind="StatefulSet", name="db", controller=True)
    )
    pl = plugin([], objects, {"defaultingType": "System"})
    assert [c.max_skew for c in pl.constraints_for(p, SA)] == [3, 5]
    assert pl.constraints_for(p, DNS) == []


def test_system_defaults_hostname_spreading_without_zone() -> None:
    """System defaults do not require every key: zone-less nodes still spread by hostname."""
    infos = build([hn("node-a"), hn("node-b")], existing("node-a", "p-a1", "p-a2", app="web"))
    objects = [Service(metadata=meta("svc"), selector={"app": "web"})]
    pl = plugin(infos, objects, {"defaultingType": "System"})
    state = CycleState()
    p = pod("p", {"app": "web"})
    assert pl.pre_filter(state, p, infos) == Status(Code.SKIP)
    assert pl.pre_score(state, p, infos) is None
    scores = {i.name: pl.score(state, p, i) for i in infos}
    pl.normalize_score(state, p, scores)
    # Raw 2 * ln(4) + (3 - 1) = 5 and 2; the zone constraint does not score zone-less nodes.
    assert scores == {"node-a": 40, "node-b": 100}


# ---- args -------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert PodTopologySpreadArgs.from_dict(None) == PodTopologySpreadArgs()
    assert PodTopologySpreadArgs.from_dict({}).defaulting_type == "System"


VALIDATION_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    (
        "valid config",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": SA},
        ]},
        None,
    ),
    (
        "maxSkew less than zero",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": DNS}]},
        "PodTopologySpread: args.defaultConstraints[0].maxSkew: Invalid value: -1: "
        "not in valid range (0, inf)",
    ),
    (
        "empty topology key",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": DNS}]},
        "PodTopologySpread: args.defaultConstraints[0].topologyKey: Required value: "
        "can not be empty",
    ),
    (
        "whenUnsatisfiable is empty",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": ""}]},
        "PodTopologySpread: args.defaultConstraints[0].whenUnsatisfiable: Required value: "
        "can not be empty",
    ),
    (
        "whenUnsatisfiable contains unsupported action",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "unknown action"}]},
        'PodTopologySpread: args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: '
        '"unknown action": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
    (
        "duplicated constraints",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}]},
        'PodTopologySpread: args.defaultConstraints[1]: Duplicate value: '
        '"{node, DoNotSchedule}"',
    ),
    (
        "label selector present",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": DNS,
             "labelSelector": {"matchLabels": {"a": "b"}}}]},
        "PodTopologySpread: args.defaultConstraints[0].labelSelector: Forbidden: constraint "
        "must not define a selector, as they deduced for each pod",
    ),
    ("list default constraints, no constraints", {"defaultingType": "List"}, None),
    ("system default constraints", {"defaultingType": "System"}, None),
    (
        "wrong constraints",
        {"defaultingType": "unknown"},
        'PodTopologySpread: args.defaultingType: Unsupported value: "unknown": '
        'supported values: "System", "List"',
    ),
    (
        "system default constraints, but has constraints",
        {"defaultingType": "System", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": DNS}]},
        'PodTopologySpread: args.defaultingType: Invalid value: "System": '
        "when .defaultConstraints are not empty",
    ),
    (
        "invalid topology key",
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "a/b/c", "whenUnsatisfiable": DNS}]},
        'PodTopologySpread: args.defaultConstraints[0].topologyKey: Invalid value: "a/b/c": '
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "error"), [c[1:] for c in VALIDATION_CASES], ids=[c[0] for c in VALIDATION_CASES]
)
def test_validate_pod_topology_spread_args(args: dict[str, Any], error: str | None) -> None:
    if error is None:
        PodTopologySpreadArgs.from_dict(args)
        return
    with pytest.raises(ConfigError) as info:
        PodTopologySpreadArgs.from_dict(args)
    assert str(info.value) == error


def test_args_several_errors_reported_together() -> None:
    with pytest.raises(ConfigError) as info:
        PodTopologySpreadArgs.from_dict({"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": DNS}]})  # fmt: skip
    assert str(info.value).count("PodTopologySpread: args.") == 2


# ---- EnqueueExtensions ----------------------------------------------------------------------


def test_events_to_register() -> None:
    events = plugin([]).events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (
            EventResource.POD,
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE,
        ),
        (
            EventResource.NODE,
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT,
        ),
    ]
    assert all(e.hint is not None for e in events)


Q, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP
ZONE_ONLY = pod("p", None, tsc(1, "zone"))
ZONE_NODE = pod("p", None, tsc(1, "zone"), tsc(1, "node"))

NODE_CHANGE_CASES: list[tuple[Any, ...]] = [
    ("node updates label which matches topologyKey", ZONE_ONLY,
     node_l("node-a", {"zone": "zone1"}), node_l("node-a", {"zone": "zone2"}), Q),
    ("node that doesn't match topologySpreadConstraints updates non-related label", ZONE_ONLY,
     node_l("node-a", {"foo": "bar1"}), node_l("node-a", {"foo": "bar2"}), SKIP),
    ("node that match topologySpreadConstraints adds non-related label", ZONE_NODE,
     node_l("node-a", {"zone": "zone1", "node": "node1", "foo": "bar"}),
     node_l("node-a", {"zone": "zone1", "node": "node1"}), SKIP),
    ("create node with non-related labels", ZONE_ONLY,
     None, node_l("node-a", {"foo": "bar"}), SKIP),
    ("create node with related labels", ZONE_ONLY, None, node_l("node-a", {"zone": "zone1"}), Q),
    ("delete node with non-related labels", ZONE_ONLY,
     node_l("node-a", {"foo": "bar"}), None, SKIP),
    ("delete node with related labels", ZONE_ONLY, node_l("node-a", {"zone": "zone1"}), None, Q),
    ("add node with related labels that only match one of topologySpreadConstraints", ZONE_NODE,
     None, node_l("node-a", {"zone": "zone1"}), SKIP),
    ("add node with related labels that match all topologySpreadConstraints", ZONE_NODE,
     None, node_l("node-a", {"zone": "zone1", "node": "node1"}), Q),
    ("update node with related labels that only match one of topologySpreadConstraints",
     ZONE_NODE, node_l("node-a", {"zone": "zone1"}), node_l("node-a", {"zone": "zone1"}), SKIP),
    ("update node with related labels that match all topologySpreadConstraints", ZONE_NODE,
     node_l("node-a", {"zone": "zone1", "node": "node1"}),
     node_l("node-a", {"zone": "zone1", "node": "node2"}), Q),
    ("node updates taints", ZONE_ONLY, node_l("node-a", {"zone": "zone1"}),
     node_l("node-a", {"zone": "zone1"}, [UNSCHEDULABLE_TAINT]), Q),
    ("node without the keys updates taints", ZONE_ONLY, node_l("node-a", {}),
     node_l("node-a", {}, [UNSCHEDULABLE_TAINT]), SKIP),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_", "old", "new", "want"),
    [c[1:] for c in NODE_CHANGE_CASES],
    ids=[c[0] for c in NODE_CHANGE_CASES],
)
def test_is_schedulable_after_node_change(
    pod_: Pod, old: Node | None, new: Node | None, want: QueueingHint
) -> None:
    assert plugin([]).is_schedulable_after_node_change(pod_, old, new) == want


TARGET = pod("p", FOO_L, tsc(1, "zone"))
TARGET_2 = pod("p", FOO_L, tsc(1, "zone"), tsc(1, "node", selector=BAR))
TOLERATION = Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")

POD_CHANGE_CASES: list[tuple[Any, ...]] = [
    ("add pod with labels match topologySpreadConstraints selector", TARGET,
     None, pod("o", FOO_L, on="fake-node"), Q),
    ("add un-scheduled pod", TARGET, None, pod("o", FOO_L), SKIP),
    ("update un-scheduled pod", TARGET, pod("o", {"bar": ""}), pod("o", FOO_L), SKIP),
    ("delete un-scheduled pod", TARGET, pod("o", FOO_L), None, SKIP),
    ("add pod with different namespace", TARGET,
     None, pod("o", FOO_L, on="fake-node", namespace="fake-namespace"), SKIP),
    ("add pod with labels don't match topologySpreadConstraints selector", TARGET,
     None, pod("o", {"bar": ""}, on="fake-node"), SKIP),
    ("delete pod with labels that match topologySpreadConstraints selector", TARGET,
     pod("o", FOO_L, on="fake-node"), None, Q),
    ("delete pod with labels that don't match topologySpreadConstraints selector", TARGET,
     pod("o", {"bar": ""}, on="fake-node"), None, SKIP),
    ("update pod's non-related label", TARGET,
     pod("o", {"foo": "", "bar": "bar1"}, on="fake-node"),
     pod("o", {"foo": "", "bar": "bar2"}, on="fake-node"), SKIP),
    ("add pod's label that matches topologySpreadConstraints selector", TARGET,
     pod("o", None, on="fake-node"), pod("o", FOO_L, on="fake-node"), Q),
    ("delete pod label that matches topologySpreadConstraints selector", TARGET,
     pod("o", FOO_L, on="fake-node"), pod("o", None, on="fake-node"), Q),
    ("change pod's label that matches topologySpreadConstraints selector", TARGET,
     pod("o", {"foo": "foo1"}, on="fake-node"), pod("o", {"foo": "foo2"}, on="fake-node"), SKIP),
    ("change pod's label that doesn't match topologySpreadConstraints selector", TARGET,
     pod("o", {"foo": "", "bar": "bar1"}, on="fake-node"),
     pod("o", {"foo": "", "bar": "bar2"}, on="fake-node"), SKIP),
    ("add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",  # noqa: E501 - upstream case name
     TARGET_2, pod("o", FOO_L, on="fake-node"),
     pod("o", {"foo": "", "bar": "bar2"}, on="fake-node"), Q),
    ("change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",  # noqa: E501 - upstream case name
     TARGET_2, pod("o", FOO_L, on="fake-node"),
     pod("o", {"foo": "", "baz": ""}, on="fake-node"), SKIP),
    ("change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",  # noqa: E501 - upstream case name
     TARGET_2, pod("o", {"foo": "", "bar": ""}, on="fake-node"),
     pod("o", {"foo": "", "bar": "bar2"}, on="fake-node"), SKIP),
    ("the unschedulable pod gets a toleration and a constraint honours taints",
     pod("p", FOO_L, tsc(1, "zone", taints_policy=HONOR)),
     pod("p", FOO_L, tsc(1, "zone", taints_policy=HONOR)),
     pod("p", FOO_L, tsc(1, "zone", taints_policy=HONOR), tolerations=[TOLERATION]), Q),
    ("the unschedulable pod gets a toleration but no constraint honours taints", TARGET,
     TARGET, pod("p", FOO_L, tsc(1, "zone"), tolerations=[TOLERATION]), SKIP),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_", "old", "new", "want"),
    [c[1:] for c in POD_CHANGE_CASES],
    ids=[c[0] for c in POD_CHANGE_CASES],
)
def test_is_schedulable_after_pod_change(
    pod_: Pod, old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    assert plugin([]).is_schedulable_after_pod_change(pod_, old, new) == want
