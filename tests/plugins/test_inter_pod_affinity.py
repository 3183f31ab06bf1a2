"""InterPodAffinity: upstream filtering_test.go (TestRequiredAffinitySingleNode,
TestRequiredAffinityMultipleNodes, TestPreFilterDisabled, TestPreFilterStateAddRemovePod,
TestGetTPMapMatchingIncomingAffinityAntiAffinity), scoring_test.go (TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight) and plugin_test.go
(Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange) tables.

Upstream pods have namespace "" and often no name: here "" reads as "default" (so a term
listing namespace "" lists "default") and names are added. Pods are read from manifest
shapes; st.MakePod().PodAffinityIn(key, topologyKey, values) is ``term(key, "In", ...)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from ksched._errors import ConfigError
from ksched.api import Node, ObjectMeta, Pod, read_object
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from ksched.plugins import in_tree_factory
from ksched.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)
from ksched.plugins.inter_pod_affinity._filtering import PRE_FILTER_STATE_KEY, PreFilterState
from ksched.testing import FakeHandle, FakeSnapshot

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

AFF = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))
ANTI = Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
EXISTING = Status(Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))
SKIP = Status(Code.SKIP)

NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}


# ---- fakes -------------------------------------------------------------------------------


def plugin(
    snapshot: FakeSnapshot,
    args: Mapping[str, Any] | None = None,
    namespaces: Mapping[str, Mapping[str, str]] | None = NAMESPACES,
) -> InterPodAffinity:
    return InterPodAffinity.new(args, FakeHandle(snapshot=snapshot, namespaces=namespaces))


# ---- builders ------------------------------------------------------------------------------


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def term(
    exprs: Sequence[dict[str, Any]],
    topology: str = "",
    namespaces: Sequence[str] | None = None,
    namespace_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "labelSelector": {"matchExpressions": list(exprs)},
        "topologyKey": topology,
    }
    if namespaces is not None:
        out["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        out["namespaceSelector"] = namespace_selector
    return out


def t(key: str, op: str, topology: str, *values: str) -> dict[str, Any]:
    """st.MakePod().PodAffinity<Op>(key, topologyKey, values): one expression."""
    return term([expr(key, op, *values)], topology)


_names = itertools.count()


def make_pod(
    labels: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    ns: str = "",
    node: str | None = None,
    uid: str = "",
    affinity: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    pref: Sequence[tuple[int, dict[str, Any]]] = (),
    pref_anti: Sequence[tuple[int, dict[str, Any]]] = (),
) -> Pod:
    spec: dict[str, Any] = {}
    if node:
        spec["nodeName"] = node
    aff: dict[str, Any] = {}
    if affinity or pref:
        aff["podAffinity"] = {
            REQUIRED: list(affinity),
            PREFERRED: [{"weight": w, "podAffinityTerm": x} for w, x in pref],
        }
    if anti or pref_anti:
        aff["podAntiAffinity"] = {
            REQUIRED: list(anti),
            PREFERRED: [{"weight": w, "podAffinityTerm": x} for w, x in pref_anti],
        }
    if aff:
        spec["affinity"] = aff
    meta = {"name": name or f"p{next(_names)}", "namespace": ns, "uid": uid,
            "labels": dict(labels or {})}  # fmt: skip
    pod = read_object({"kind": "Pod", "metadata": meta, "spec": spec})
    assert isinstance(pod, Pod)
    return pod


def make_node(name: str, labels: Mapping[str, str] | None = None) -> Node:
    return Node(metadata=ObjectMeta(name=name, namespace="", labels=dict(labels or {})))


# ---- TestRequiredAffinitySingleNode ------------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
EXISTING_POD = make_pod(POD_LABEL, node="node1")
NODE1 = make_node("node1", {"region": "r1", "zone": "z11"})
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}
SCAN = [expr("service", "In", "securityscan", "value2")]
BAD_VALUE = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

# name, pod, existing pods, want PreFilter, want Filter
SINGLE_NODE_ROWS: list[tuple[Any, ...]] = [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no "
     "existing pods", make_pod(), [], SKIP, None),
    ("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
     "operator that matches the existing pod",
     make_pod(POD_LABEL2, affinity=[t("service", "In", "region", "securityscan", "value2")]),
     [EXISTING_POD], None, None),
    ("satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using "
     "not in operator in labelSelector that matches the existing pod",
     make_pod(POD_LABEL2, affinity=[t("service", "NotIn", "region", "securityscan3", "value3")]),
     [EXISTING_POD], None, None),
    ("Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     make_pod(POD_LABEL2, affinity=[term(SCAN, namespaces=["DiffNameSpace"])]),
     [make_pod({"service": "securityscan"}, ns="ns", node="node1")], None, AFF),
    ("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     make_pod(POD_LABEL, affinity=[t("service", "In", "", "antivirusscan", "value2")]),
     [EXISTING_POD], None, AFF),
    ("satisfies the PodAffinity with different label Operators in multiple "
     "RequiredDuringSchedulingIgnoredDuringExecution ",
     make_pod(POD_LABEL2, affinity=[
         term([expr("service", "Exists"), expr("wrongkey", "DoesNotExist")], "region"),
         term([expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")],
              "region"),
     ]), [EXISTING_POD], None, None),
    ("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
     "schedule onto the node because one of the matchExpression item don't match.",
     make_pod(POD_LABEL2, affinity=[
         term([expr("service", "Exists"), expr("wrongkey", "DoesNotExist")], "region"),
         term([expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")],
              "region"),
     ]), [EXISTING_POD], None, AFF),
    ("satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     make_pod(POD_LABEL2, affinity=[t("service", "In", "region", "securityscan", "value2")],
              anti=[t("service", "In", "node", "antivirusscan", "value2")]),
     [EXISTING_POD], None, None),
    ("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
     "existing pod",
     make_pod(POD_LABEL2, affinity=[t("service", "In", "region", "securityscan", "value2")],
              anti=[t("service", "In", "node", "antivirusscan", "value2")]),
     [make_pod(POD_LABEL, node="node1",
               anti=[t("service", "In", "node", "antivirusscan", "value2")])], None, None),
    ("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     make_pod(POD_LABEL2, affinity=[t("service", "In", "region", "securityscan", "value2")],
              anti=[t("service", "In", "zone", "securityscan", "value2")]),
     [EXISTING_POD], None, ANTI),
    ("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
     "symmetry with the existing pod",
     make_pod(POD_LABEL, affinity=[t("service", "In", "region", "securityscan", "value2")],
              anti=[t("service", "In", "node", "antivirusscan", "value2")]),
     [make_pod(POD_LABEL, node="node1",
               anti=[t("service", "In", "zone", "securityscan", "value2")])], None, EXISTING),
    ("pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     make_pod(POD_LABEL, affinity=[t("service", "NotIn", "region", "securityscan", "value2")]),
     [make_pod({"service": "securityscan"}, node="node2")], None, AFF),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
     "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     make_pod(POD_LABEL),
     [make_pod(POD_LABEL, node="node1",
               anti=[t("service", "In", "zone", "securityscan", "value2")])], None, EXISTING),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
     "constraints. satisfy PodAntiAffinity symmetry with the existing pod",
     make_pod(POD_LABEL),
     [make_pod(POD_LABEL, node="node1",
               anti=[t("service", "NotIn", "zone", "securityscan", "value2")])], SKIP, None),
    ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
     "symmetry with incoming pod",
     make_pod(POD_LABEL,
              anti=[t("service", "Exists", "region"), t("security", "Exists", "region")]),
     [make_pod(POD_LABEL2, node="node1", anti=[t("security", "Exists", "zone")])], None, ANTI),
    ("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each "
     "other on AffinityTerms",
     make_pod(POD_LABEL, anti=[t("service", "Exists", "zone"), t("security", "Exists", "zone")]),
     [make_pod(POD_LABEL2, node="node1", anti=[t("security", "Exists", "zone")])], None, ANTI),
    ("PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
     "other on AffinityTerms",
     make_pod(POD_LABEL2, anti=[t("security", "Exists", "zone")]),
     [make_pod(POD_LABEL, node="node1",
               anti=[t("service", "Exists", "zone"), t("security", "Exists", "zone")])],
     None, EXISTING),
    ("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each "
     "other on AffinityTerms",
     make_pod({"abc": "", "xyz": ""},
              anti=[t("abc", "Exists", "zone"), t("def", "Exists", "zone")]),
     [make_pod({"def": "", "xyz": ""}, node="node1",
               anti=[t("abc", "Exists", "zone"), t("def", "Exists", "zone")])], None, ANTI),
    ("PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each "
     "other on AffinityTerms",
     make_pod({"def": "", "xyz": ""},
              anti=[t("abc", "Exists", "zone"), t("def", "Exists", "zone")]),
     [make_pod({"abc": "", "xyz": ""}, node="node1",
               anti=[t("abc", "Exists", "zone"), t("def", "Exists", "zone")])], None, ANTI),
    ("PodAffinity fails PreFilter with an invalid affinity label syntax",
     make_pod(POD_LABEL, affinity=[t("service", "In", "region", "{{.bad-value.}}"),
                                   t("service", "In", "node", "antivirusscan", "value2")]),
     [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (BAD_VALUE,)), None),
    ("PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
     make_pod(POD_LABEL, affinity=[t("service", "In", "region", "foo"),
                                   t("service", "In", "node", "{{.bad-value.}}")]),
     [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (BAD_VALUE,)), None),
    ("affinity with NamespaceSelector",
     make_pod(POD_LABEL2, affinity=[term(SCAN, "region", namespace_selector=TEAM1)]),
     [make_pod(POD_LABEL, ns="subteam1.team1", node="node1")], None, None),
    ("affinity with non-matching NamespaceSelector",
     make_pod(POD_LABEL2, affinity=[term(SCAN, "region", namespace_selector=TEAM1)]),
     [make_pod(POD_LABEL, ns="subteam1.team2", node="node1")], None, AFF),
    ("anti-affinity with matching NamespaceSelector",
     make_pod(POD_LABEL2, ns="subteam1.team1",
              anti=[term(SCAN, "zone", namespace_selector=TEAM1)]),
     [make_pod(POD_LABEL, ns="subteam2.team1", node="node1")], None, ANTI),
    ("anti-affinity with matching all NamespaceSelector",
     make_pod(POD_LABEL2, ns="subteam1.team1", anti=[term(SCAN, "zone", namespace_selector={})]),
     [make_pod(POD_LABEL, ns="subteam2.team1", node="node1")], None, ANTI),
    ("anti-affinity with non-matching NamespaceSelector",
     make_pod(POD_LABEL2, ns="subteam1.team1",
              anti=[term(SCAN, "zone", namespace_selector=TEAM1)]),
     [make_pod(POD_LABEL, ns="subteam1.team2", node="node1")], None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "pods", "want_pre", "want"),
    [row[1:] for row in SINGLE_NODE_ROWS],
    ids=[row[0] for row in SINGLE_NODE_ROWS],
)
def test_required_affinity_single_node(
    pod: Pod, pods: list[Pod], want_pre: Status | None, want: Status | None
) -> None:
    snapshot = FakeSnapshot([NODE1], pods)
    p = plugin(snapshot)
    state = CycleState()
    assert p.pre_filter(state, pod, snapshot.list()) == want_pre
    if want_pre is not None:
        return
    node_info = snapshot.get("node1")
    assert node_info is not None
    assert p.filter(state, pod, node_info) == want


# ---- TestRequiredAffinityMultipleNodes ---------------------------------------------------

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def hosts(*zones: tuple[str, str, str]) -> list[Node]:
    """Nodes named after their hostname with region and zone labels."""
    return [make_node(n, {"region": r, "zone": z, "hostname": n}) for n, r, z in zones]


# name, pod, existing pods, nodes, want PreFilter, want Filter per node
MULTI_NODE_ROWS: list[tuple[Any, ...]] = [
    ("A pod can be scheduled onto all the nodes that have the same topology key & label value "
     "with one of them has an existing pod that matches the affinity rules",
     make_pod(affinity=[t("foo", "In", "region", "bar")]),
     [make_pod({"foo": "bar"}, name="p1", node="node1")],
     [make_node("node1", CHINA), make_node("node2", CHINA_AZ1), make_node("node3", INDIA)],
     None, [None, None, AFF]),
    ("The affinity rule is to schedule all of the pods of this collection to the same zone. The "
     "first pod of the collection should not be blocked from being scheduled onto any node, even "
     "there's no existing pod that matches the rule anywhere.",
     make_pod({"foo": "bar", "service": "securityscan"},
              affinity=[t("foo", "In", "zone", "bar"), t("service", "In", "zone", "securityscan")]),
     [make_pod({"foo": "bar"}, name="p1", node="nodeA")],
     [make_node("nodeA", {"zone": "az1", "hostname": "h1"}),
      make_node("nodeB", {"zone": "az2", "hostname": "h2"})],
     None, [None, None]),
    ("The first pod of the collection can only be scheduled on nodes labelled with the requested "
     "topology keys",
     make_pod({"foo": "bar", "service": "securityscan"},
              affinity=[t("foo", "In", "zone", "bar"), t("service", "In", "zone", "securityscan")]),
     [make_pod({"foo": "bar"}, name="p1", node="nodeA")],
     [make_node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
      make_node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
     None, [AFF, AFF]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
     "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     make_pod(anti=[t("foo", "In", "region", "abc")]),
     [make_pod({"foo": "abc"}, node="nodeA")],
     [make_node("nodeA", {"region": "r1", "hostname": "nodeA"}),
      make_node("nodeB", {"region": "r1", "hostname": "nodeB"})],
     None, [ANTI, ANTI]),
    ("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule "
     "matches a pod.",
     make_pod(anti=[t("foo", "In", "region", "abc"), t("service", "In", "zone", "securityscan")]),
     [make_pod({"foo": "abc", "service": "securityscan"}, node="nodeA")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [ANTI, ANTI]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
     "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but "
     "can be scheduled onto nodeC",
     make_pod(anti=[t("foo", "In", "region", "abc")]),
     [make_pod({"foo": "abc"}, node="nodeA")],
     [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
     None, [ANTI, ANTI, None]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
     "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but "
     "can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity "
     "rule but in different namespace)",
     make_pod({"foo": "123"}, ns="NS1", anti=[t("foo", "In", "region", "bar")]),
     [make_pod({"foo": "bar"}, ns="NS1", node="nodeA"),
      make_pod(ns="NS2", node="nodeC", anti=[t("foo", "In", "region", "123")])],
     [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
     None, [ANTI, ANTI, None]),
    ("Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
     "labelSelector of the term is firstly checked, and then topologyKey of the term is also "
     "checked",
     make_pod({"foo": ""}),
     [make_pod(node="nodeA", anti=[t("foo", "Exists", "invalid-node-label")])],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z1")),
     SKIP, [None, None]),
    ("Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
     "topologyKey matches",
     make_pod(node="nodeA", anti=[t("foo", "Exists", "invalid-node-label")]),
     [make_pod({"foo": ""}, node="nodeA")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z1")),
     None, [None, None]),
    ("Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
     "violates each existingPod's terms on all nodes",
     make_pod({"foo": "", "bar": ""}),
     [make_pod(node="nodeA", anti=[t("foo", "Exists", "zone")]),
      make_pod(node="nodeA", anti=[t("bar", "Exists", "region")])],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [EXISTING, EXISTING]),
    ("Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least "
     "violates one anti-affinity rule of existingPod",
     make_pod(anti=[t("foo", "Exists", "zone"), t("bar", "Exists", "region")]),
     [make_pod({"foo": ""}, node="nodeA"), make_pod({"bar": ""}, node="nodeB")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [ANTI, ANTI]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
     "counted as a single term match - case when one term has invalid topologyKey",
     make_pod({"foo": "", "bar": ""}),
     [make_pod(node="nodeA", anti=[t("foo", "Exists", "invalid-node-label"),
                                   t("bar", "Exists", "zone")])],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [EXISTING, None]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
     "counted as a single term match - case when one term has invalid topologyKey",
     make_pod(anti=[t("foo", "Exists", "invalid-node-label"), t("bar", "Exists", "zone")]),
     [make_pod({"foo": "", "bar": ""}, name="podA", node="nodeA")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [ANTI, None]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
     "counted as a single term match - case when all terms have valid topologyKey",
     make_pod({"foo": "", "bar": ""}),
     [make_pod(node="nodeA", anti=[t("foo", "Exists", "region"), t("bar", "Exists", "zone")])],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [EXISTING, EXISTING]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
     "counted as a single term match - case when all terms have valid topologyKey",
     make_pod(anti=[t("foo", "Exists", "region"), t("bar", "Exists", "zone")]),
     [make_pod({"foo": "", "bar": ""}, node="nodeA")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [ANTI, ANTI]),
    ("Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
     "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
     make_pod({"foo": "", "bar": ""}),
     [make_pod(node="nodeA", anti=[t("foo", "Exists", "zone"), t("labelA", "Exists", "zone")]),
      make_pod(node="nodeB", anti=[t("bar", "Exists", "zone"), t("labelB", "Exists", "zone")])],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2"), ("nodeC", "r1", "z3")),
     None, [EXISTING, EXISTING, None]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
     "all topologyKeys match",
     make_pod(affinity=[t("foo", "Exists", "region"), t("bar", "Exists", "zone")]),
     [make_pod({"foo": "", "bar": ""}, name="pod1", node="nodeA")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z1")),
     None, [None, None]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
     "all topologyKeys match, and the match logic should be satisfied on the same pod",
     make_pod(affinity=[t("foo", "Exists", "region"), t("bar", "Exists", "zone")]),
     [make_pod({"foo": ""}, name="pod1", node="nodeA"),
      make_pod({"bar": ""}, name="pod2", node="nodeB")],
     hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
     None, [AFF, AFF]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "want_pre", "want"),
    [row[1:] for row in MULTI_NODE_ROWS],
    ids=[row[0] for row in MULTI_NODE_ROWS],
)
def test_required_affinity_multiple_nodes(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    want_pre: Status | None,
    want: list[Status | None],
) -> None:
    snapshot = FakeSnapshot(nodes, pods)
    p = plugin(snapshot, namespaces={"NS1": {}})
    state = CycleState()
    assert p.pre_filter(state, pod, snapshot.list()) == want_pre
    if want_pre is not None:
        return
    got = [p.filter(state, pod, info) for info in snapshot.list()]
    assert got == want


def test_first_pod_rule_needs_no_matching_pod_anywhere() -> None:
    # The pod matches its own term, but a matching pod already runs in zone z1: zone z2
    # is then no exception (filtering.go satisfyPodAffinity).
    pod = make_pod({"app": "web"}, affinity=[t("app", "In", "zone", "web")])
    snapshot = FakeSnapshot(
        hosts(("nodeA", "r1", "z1"), ("nodeB", "r1", "z2")),
        [make_pod({"app": "web"}, node="nodeA")],
    )
    p = plugin(snapshot)
    state = CycleState()
    assert p.pre_filter(state, pod, snapshot.list()) is None
    assert [p.filter(state, pod, info) for info in snapshot.list()] == [None, AFF]


def test_pre_filter_disabled() -> None:
    p = plugin(FakeSnapshot([], []))
    got = p.filter(CycleState(), make_pod(), NodeInfo.of(make_node("")))
    assert got == Status(
        Code.ERROR, ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)
    )
    assert p.add_pod(CycleState(), make_pod(), PodInfo.of(make_pod()), NodeInfo.of(make_node("")))


# ---- TestPreFilterStateAddRemovePod ------------------------------------------------------

SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = [t("foo", "In", "region", "bar")]
COMPLEX = [
    t("foo", "In", "region", "bar", "buzz"),
    t("service", "NotIn", "zone", "bar", "security", "test"),
]
ADD_REMOVE_NODES = [
    make_node("nodeA", {"region": "r1", "zone": "z11"}),
    make_node("nodeB", {"region": "r1", "zone": "z12"}),
    make_node("nodeC", {"region": "r2", "zone": "z21"}),
]

# name, pending pod, existing pods, added pod, want anti-affinity counts, want affinity counts
ADD_REMOVE_ROWS: list[tuple[Any, ...]] = [
    ("preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
     make_pod(SELECTOR1, name="pending", anti=ANTI_FOO_BAR),
     [make_pod(SELECTOR1, name="p1", node="nodeA"), make_pod(name="p2", node="nodeC",
                                                               anti=ANTI_FOO_BAR)],
     make_pod(SELECTOR1, name="addedPod", node="nodeB", anti=ANTI_FOO_BAR),
     {("region", "r1"): 2}, {}),
    ("preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
     make_pod(SELECTOR1, name="pending", anti=COMPLEX),
     [make_pod(SELECTOR1, name="p1", node="nodeA"), make_pod(name="p2", node="nodeC",
                                                               anti=ANTI_FOO_BAR)],
     make_pod(SELECTOR1, name="addedPod", node="nodeA", anti=COMPLEX),
     {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {}),
    ("preFilterState matching pod affinity and anti-affinity are updated correctly after adding "
     "and removing a pod",
     make_pod(SELECTOR1, name="pending", affinity=COMPLEX),
     [make_pod(SELECTOR1, name="p1", node="nodeA"),
      make_pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR, affinity=COMPLEX)],
     make_pod(SELECTOR1, name="addedPod", node="nodeA", anti=COMPLEX),
     {}, {("region", "r1"): 2, ("zone", "z11"): 2}),
]  # fmt: skip


def _counts(state: PreFilterState) -> tuple[dict[Any, int], ...]:
    return (
        state.existing_anti_affinity_counts,
        state.affinity_counts,
        state.anti_affinity_counts,
    )


@pytest.mark.parametrize(
    ("pending", "existing", "added", "want_anti", "want_affinity"),
    [row[1:] for row in ADD_REMOVE_ROWS],
    ids=[row[0] for row in ADD_REMOVE_ROWS],
)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    want_anti: dict[Any, int],
    want_affinity: dict[Any, int],
) -> None:
    def pre_filter(pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, FakeSnapshot]:
        snapshot = FakeSnapshot(ADD_REMOVE_NODES, pods)
        p = plugin(snapshot, namespaces=None)
        state = CycleState()
        assert p.pre_filter(state, pending, snapshot.list()) is None
        return p, state, snapshot

    _, all_state, _ = pre_filter([*existing, added])
    p, state, snapshot = pre_filter(existing)
    pre: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    original = pre.clone()
    node_info = snapshot.get(added.spec.node_name or "")
    assert node_info is not None

    assert p.add_pod(state, pending, PodInfo.of(added), node_info) is None
    assert pre.anti_affinity_counts == want_anti
    assert pre.affinity_counts == want_affinity
    assert _counts(pre) == _counts(all_state.read(PRE_FILTER_STATE_KEY))

    assert p.remove_pod(state, pending, PodInfo.of(added), node_info) is None
    assert _counts(pre) == _counts(original)


def test_pre_filter_state_clone() -> None:
    snapshot = FakeSnapshot(ADD_REMOVE_NODES, [make_pod({"foo": "bar"}, node="nodeA")])
    state = CycleState()
    pending = make_pod(anti=ANTI_FOO_BAR)
    plugin(snapshot).pre_filter(state, pending, snapshot.list())
    source: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    clone = state.clone().read(PRE_FILTER_STATE_KEY)
    assert clone is not source
    assert _counts(clone) == _counts(source)
    clone.anti_affinity_counts[("region", "r9")] = 1
    assert ("region", "r9") not in source.anti_affinity_counts


# ---- TestGetTPMapMatchingIncomingAffinityAntiAffinity ------------------------------------

NODE_A = make_node("nodeA", {"hostname": "nodeA"})


def normal(*labels: str) -> Pod:
    return make_pod(dict.fromkeys(labels, ""), node="nodeA")


HOST_A = {("hostname", "nodeA"): 1}
# name, existing pods, pod, want affinity counts, want anti-affinity counts
TP_MAP_ROWS: list[tuple[Any, ...]] = [
    ("nil test", [], make_pod(name="aaa-normal"), {}, {}),
    ("incoming pod without affinity/anti-affinity causes a no-op", [normal("aaa")],
     make_pod(name="aaa-normal"), {}, {}),
    ("no pod has label that violates incoming pod's affinity and anti-affinity", [normal("bbb")],
     make_pod(affinity=[t("aaa", "Exists", "hostname")], anti=[t("aaa", "Exists", "hostname")]),
     {}, {}),
    ("existing pod matches incoming pod's affinity and anti-affinity - single term case",
     [normal("aaa")],
     make_pod(affinity=[t("aaa", "Exists", "hostname")], anti=[t("aaa", "Exists", "hostname")]),
     HOST_A, HOST_A),
    ("existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
     [normal("aaa", "bbb")],
     make_pod(affinity=[t("aaa", "Exists", "hostname"), t("bbb", "Exists", "hostname")],
              anti=[t("aaa", "Exists", "hostname")]),
     {("hostname", "nodeA"): 2}, HOST_A),
    ("existing pod not match incoming pod's affinity but matches anti-affinity", [normal("aaa")],
     make_pod(affinity=[t("aaa", "Exists", "hostname"), t("bbb", "Exists", "hostname")],
              anti=[t("aaa", "Exists", "hostname"), t("bbb", "Exists", "hostname")]),
     {}, HOST_A),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial term "
     "- case 1", [normal("aaa", "bbb")],
     make_pod(affinity=[t("aaa", "Exists", "hostname"), t("ccc", "Exists", "hostname")],
              anti=[t("aaa", "Exists", "hostname"), t("ccc", "Exists", "hostname")]),
     {}, HOST_A),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial term "
     "- case 2", [normal("bbb")],
     make_pod(affinity=[t("aaa", "Exists", "hostname"), t("bbb", "Exists", "hostname")],
              anti=[t("aaa", "Exists", "hostname"), t("bbb", "Exists", "hostname")]),
     {}, HOST_A),
]  # fmt: skip


@pytest.mark.parametrize(
    ("existing", "pod", "want_affinity", "want_anti"),
    [row[1:] for row in TP_MAP_ROWS],
    ids=[row[0] for row in TP_MAP_ROWS],
)
def test_get_tp_map_matching_incoming_affinity_anti_affinity(
    existing: list[Pod], pod: Pod, want_affinity: dict[Any, int], want_anti: dict[Any, int]
) -> None:
    snapshot = FakeSnapshot([NODE_A], existing)
    state = CycleState()
    got = plugin(snapshot).pre_filter(state, pod, snapshot.list())
    pre: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
    if pre is None:  # PreFilter skipped: nothing was counted
        assert got == SKIP
        assert (want_affinity, want_anti) == ({}, {})
        return
    assert (pre.affinity_counts, pre.anti_affinity_counts) == (want_affinity, want_anti)


# ---- TestPreferredAffinity ---------------------------------------------------------------

AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
WITH_S1_IN_REGION = [(5, t("security", "In", "region", "S1"))]
WITH_S2_IN_REGION = [(6, t("security", "In", "region", "S2"))]
AFFINITY3 = [
    (8, term([expr("security", "NotIn", "S1"), expr("security", "In", "S2")], "region")),
    (2, term([expr("security", "Exists"), expr("wrongkey", "DoesNotExist")], "region")),
]
HARD_AFFINITY = [
    t("security", "In", "region", "S1", "value2"),
    term([expr("security", "Exists"), expr("wrongkey", "DoesNotExist")], "region"),
]
AWAY_FROM_S1_IN_AZ = [(5, t("security", "In", "az", "S1"))]
AWAY_FROM_S2_IN_AZ = [(5, t("security", "In", "az", "S2"))]
WITH_S1_AWAY_S2: dict[str, Any] = {
    "pref": [(8, t("security", "In", "region", "S1"))],
    "pref_anti": [(5, t("security", "In", "az", "S2"))],
}
NS_SELECTOR_TERM = term([expr("security", "In", "S1")], "region", ["subteam2.team2"], TEAM1)
BAD_IN_REGION = [(8, t("security", "In", "region", "{{.bad-value.}}"))]
BAD_IN_AZ = [(5, t("security", "In", "az", "{{.bad-value.}}"))]
BAD_MESSAGE = Status(Code.ERROR, ('Invalid value: "{{.bad-value.}}"',))


def nodes(*labels: Mapping[str, str]) -> list[Node]:
    return [make_node(f"node{i}", lab) for i, lab in enumerate(labels, 1)]


def on(node: str, labels: Mapping[str, str] | None = None, **kwargs: Any) -> Pod:
    return make_pod(labels, node=node, **kwargs)


NS_PODS = [
    on("node1", S1, ns="subteam1.team1"),
    on("node1", S1, ns="subteam1.team1"),
    on("node1", S1, ns="subteam1.team2"),
    on("node2", S1, ns="subteam2.team1"),
]
NS_AND_NAMESPACES_PODS = [
    on("node1", S1, ns="subteam1.team1"),
    on("node1", S1, ns="subteam1.team1"),
    on("node1", S1, ns="subteam2.team2"),
    on("node2", S1, ns="subteam2.team1"),
]

# name, pod, existing pods, nodes, expected (node -> score), ignore preferred, want PreScore
PREFERRED_ROWS: list[tuple[Any, ...]] = [
    ("all nodes are same priority as Affinity is nil", make_pod(S1), [],
     nodes(CHINA, INDIA, AZ1), None, False, SKIP),
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to "
     "otherswhich doesn't match either pods in nodes or in topology key",
     make_pod(S1, pref=WITH_S1_IN_REGION),
     [on("node1", S1), on("node2", S2), on("node3", S1)],
     nodes(CHINA, INDIA, AZ1), [100, 0, 0], False, None),
    ("All the nodes that have the same topology key & label value with one of them has an "
     "existing pod that match the affinity rules, have the same score",
     make_pod(pref=WITH_S1_IN_REGION), [on("node1", S1)],
     nodes(CHINA, CHINA_AZ1, INDIA), [100, 100, 0], False, None),
    ("Affinity: nodes in one region has more matching pods comparing to other region, so the "
     "region which has more matches will get high score",
     make_pod(S1, pref=WITH_S2_IN_REGION),
     [on("node1", S2), on("node1", S2), on("node2", S2), on("node3", S2), on("node4", S2),
      on("node5", S2)],
     nodes(CHINA, INDIA, CHINA, CHINA, INDIA), [100, 0, 100, 100, 0], False, None),
    ("Affinity: different Label operators and values for pod affinity scheduling preference, "
     "including some match failures ",
     make_pod(S1, pref=AFFINITY3), [on("node1", S1), on("node2", S2), on("node3", S1)],
     nodes(CHINA, INDIA, AZ1), [20, 100, 0], False, None),
    ("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in "
     "pod affinity symmetry",
     make_pod(S2),
     [on("node1", S1, pref=WITH_S1_IN_REGION), on("node2", S2, pref=WITH_S2_IN_REGION)],
     nodes(CHINA, INDIA, AZ1), [0, 100, 0], False, None),
    ("Affinity symmetry with namespace selector",
     make_pod(S1, ns="subteam1.team1"),
     [on("node1", S1, pref=[(5, NS_SELECTOR_TERM)]), on("node2", S2, pref=WITH_S2_IN_REGION)],
     nodes(CHINA, INDIA, AZ1), [100, 0, 0], False, None),
    ("AntiAffinity symmetry with namespace selector",
     make_pod(S1, ns="subteam1.team1"),
     [on("node1", S1, pref_anti=[(5, NS_SELECTOR_TERM)]),
      on("node2", S2, pref=WITH_S2_IN_REGION)],
     nodes(CHINA, INDIA, AZ1), [0, 100, 100], False, None),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
     "affinity symmetry",
     make_pod(S1),
     [on("node1", S1, affinity=HARD_AFFINITY), on("node2", S2, affinity=HARD_AFFINITY)],
     nodes(CHINA, INDIA, AZ1), [100, 100, 0], False, None),
    ("Anti Affinity: pod that does not match existing pods in node will get high score ",
     make_pod(S1, pref_anti=AWAY_FROM_S1_IN_AZ), [on("node1", S1), on("node2", S2)],
     nodes(AZ1, CHINA), [0, 100], False, None),
    ("Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
     "higher score comparing to others ",
     make_pod(S1, pref_anti=AWAY_FROM_S1_IN_AZ), [on("node1", S1), on("node2", S1)],
     nodes(AZ1, CHINA), [0, 100], False, None),
    ("Anti Affinity: one node has more matching pods comparing to other node, so the node which "
     "has more unmatches will get high score",
     make_pod(S1, pref_anti=AWAY_FROM_S1_IN_AZ),
     [on("node1", S1), on("node1", S1), on("node2", S2)],
     nodes(AZ1, INDIA), [0, 100], False, None),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get "
     "high score",
     make_pod(S2),
     [on("node1", S1, pref_anti=AWAY_FROM_S2_IN_AZ), on("node2", S2, pref_anti=AWAY_FROM_S1_IN_AZ)],
     nodes(AZ1, AZ2), [0, 100], False, None),
    ("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution "
     "in both pod affinity & anti affinity",
     make_pod(S1, **WITH_S1_AWAY_S2), [on("node1", S1), on("node2", S1)],
     nodes(CHINA, AZ1), [100, 0], False, None),
    ("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
     "schedule and existing pods have the same labels",
     make_pod(S1, **WITH_S1_AWAY_S2),
     [on("node1", S1), on("node1", S1), on("node2", S1), on("node3", S1), on("node3", S1),
      on("node4", S1), on("node5", S1)],
     nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA), [100, 0, 100, 100, 0], False, None),
    ("Affinity and Anti Affinity and symmetry: considered only "
     "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
     "symmetry",
     make_pod(S1, **WITH_S1_AWAY_S2),
     [on("node1", S1), on("node2", S2), on("node3", **WITH_S1_AWAY_S2),
      on("node4", pref_anti=AWAY_FROM_S1_IN_AZ)],
     nodes(CHINA, AZ1, INDIA, AZ2), [100, 0, 100, 0], False, None),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity",
     make_pod(S1), [on("node1", S1), on("node2", **WITH_S1_AWAY_S2)],
     nodes(CHINA, CHINA), [0, 0], False, None),
    ("invalid Affinity fails PreScore", make_pod(pref=BAD_IN_REGION), [], nodes(CHINA, CHINA),
     None, False, BAD_MESSAGE),
    ("invalid AntiAffinity fails PreScore", make_pod(pref_anti=BAD_IN_AZ), [],
     nodes(CHINA, CHINA), None, False, BAD_MESSAGE),
    ("Affinity with pods matching NamespaceSelector",
     make_pod(S1, ns="subteam1.team1", pref=[(5, NS_SELECTOR_TERM)]), NS_PODS,
     nodes(CHINA, INDIA), [100, 0], False, None),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields",
     make_pod(S1, ns="subteam1.team1", pref=[(5, NS_SELECTOR_TERM)]), NS_AND_NAMESPACES_PODS,
     nodes(CHINA, INDIA), [100, 0], False, None),
    ("Affinity with pods matching NamespaceSelector",
     make_pod(S1, ns="subteam1.team1", pref_anti=[(5, NS_SELECTOR_TERM)]), NS_PODS,
     nodes(CHINA, INDIA), [0, 100], False, None),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields",
     make_pod(S1, ns="subteam1.team1", pref_anti=[(5, NS_SELECTOR_TERM)]),
     NS_AND_NAMESPACES_PODS, nodes(CHINA, INDIA), [0, 100], False, None),
    ("Ignore preferred terms of existing pods",
     make_pod(S2),
     [on("node1", S1, **WITH_S1_AWAY_S2), on("node2", S2, pref=WITH_S2_IN_REGION)],
     nodes(CHINA, INDIA), None, True, SKIP),
    ("Do not ignore preferred terms of existing pods",
     make_pod(S2),
     [on("node1", S1, **WITH_S1_AWAY_S2), on("node2", S2, pref=WITH_S2_IN_REGION)],
     nodes(CHINA, INDIA), [0, 100], False, None),
    ("No nodes to score", make_pod(S2), [], [], None, False, SKIP),
]  # fmt: skip


def _score_all(
    p: InterPodAffinity, state: CycleState, pod: Pod, snapshot: FakeSnapshot
) -> list[int]:
    scores = {info.name: p.score(state, pod, info) for info in snapshot.list()}
    assert p.normalize_score(state, pod, scores) is None
    return list(scores.values())


@pytest.mark.parametrize(
    ("pod", "pods", "node_list", "expected", "ignore", "want_pre_score"),
    [row[1:] for row in PREFERRED_ROWS],
    ids=[row[0] for row in PREFERRED_ROWS],
)
def test_preferred_affinity(
    pod: Pod,
    pods: list[Pod],
    node_list: list[Node],
    expected: list[int] | None,
    ignore: bool,
    want_pre_score: Status | None,
) -> None:
    snapshot = FakeSnapshot(node_list, pods)
    args = {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore}
    p = plugin(snapshot, args)
    state = CycleState()
    status = p.pre_score(state, pod, snapshot.list())
    if want_pre_score is not None:
        # Upstream compares the code and that the message contains the wanted text.
        assert status is not None and status.code is want_pre_score.code
        assert want_pre_score.message in status.message
        return
    assert status is None
    assert _score_all(p, state, pod, snapshot) == expected


# ---- TestPreferredAffinityWithHardPodAffinitySymmetricWeight -----------------------------

HARD_POD_AFFINITY = [
    term([expr("service", "In", "S1")], "region", ["default", "subteam2.team2"], TEAM1)
]
SERVICE_S1 = {"service": "S1"}

HARD_WEIGHT_ROWS: list[tuple[Any, ...]] = [
    ("with default weight", make_pod(SERVICE_S1), 1, [100, 100, 0], None),
    ("with zero weight", make_pod(SERVICE_S1), 0, None, SKIP),
    ("with no matching namespace", make_pod(SERVICE_S1, ns="subteam1.team2"), 1, None, SKIP),
    ("with matching NamespaceSelector", make_pod(SERVICE_S1, ns="subteam1.team1"), 1,
     [100, 100, 0], None),
    ("with matching Namespaces", make_pod(SERVICE_S1, ns="subteam2.team2"), 1, [100, 100, 0],
     None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "weight", "expected", "want_pre_score"),
    [row[1:] for row in HARD_WEIGHT_ROWS],
    ids=[row[0] for row in HARD_WEIGHT_ROWS],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    pod: Pod, weight: int, expected: list[int] | None, want_pre_score: Status | None
) -> None:
    pods = [on("node1", affinity=HARD_POD_AFFINITY), on("node2", affinity=HARD_POD_AFFINITY)]
    snapshot = FakeSnapshot(nodes(CHINA, INDIA, AZ1), pods)
    p = plugin(snapshot, {"hardPodAffinityWeight": weight})
    state = CycleState()
    assert p.pre_score(state, pod, snapshot.list()) == want_pre_score
    if want_pre_score is None:
        assert _score_all(p, state, pod, snapshot) == expected


def test_score_without_pre_score_fails() -> None:
    p = plugin(FakeSnapshot([], []))
    with pytest.raises(LookupError, match="PreScoreInterPodAffinity"):
        p.score(CycleState(), make_pod(), NodeInfo.of(make_node("n")))
    assert p.normalize_score(CycleState(), make_pod(), {}) is not None


# ---- Test_isSchedulableAfterPodChange ----------------------------------------------------

TARGET_AFFINITY: dict[str, Any] = {
    "affinity": [t("service", "In", "region", "securityscan", "value2")]
}
TARGET_ANTI: dict[str, Any] = {"anti": [t("service", "In", "region", "securityscan", "value2")]}
MULTI_AFFINITY: dict[str, Any] = {
    "affinity": [t("aaa", "Exists", "hostname"), t("bbb", "Exists", "hostname")]
}


def target(labels: Mapping[str, str] | None = None, **kwargs: Any) -> Pod:
    return make_pod(labels, name="p", uid="p", **kwargs)


def other(labels: Mapping[str, str] | None = None, node: str | None = "fake-node") -> Pod:
    return make_pod(labels, name="other", uid="other", node=node)


SCAN_LABEL = {"service": "securityscan"}
# name, pod, old, new, expected
POD_HINT_ROWS: list[tuple[Any, ...]] = [
    ("add a pod which matches the pod affinity", target(**TARGET_AFFINITY), None,
     other(SCAN_LABEL), QueueingHint.QUEUE),
    ("add an un-scheduled pod", target(**TARGET_AFFINITY), None, other(SCAN_LABEL, node=None),
     QueueingHint.SKIP),
    ("add a pod which doesn't match the pod affinity", target(**TARGET_AFFINITY), None,
     other({"aaa": "a"}), QueueingHint.SKIP),
    ("update a pod from non-match to match pod affinity", target(**TARGET_AFFINITY),
     other({"aaa": "a"}), other(SCAN_LABEL), QueueingHint.QUEUE),
    ("the updating pod matches target pod's affinity both before and after label changes",
     target(**TARGET_AFFINITY), other({"service": "value2"}), other(SCAN_LABEL),
     QueueingHint.SKIP),
    ("update an un-scheduled pod", target(**TARGET_AFFINITY), other({"aaa": "a"}, node=None),
     other(SCAN_LABEL, node=None), QueueingHint.SKIP),
    ("update a pod from match to non-match the pod affinity", target(**TARGET_AFFINITY),
     other(SCAN_LABEL), other({"aaa": "a"}), QueueingHint.SKIP),
    ("update a pod from match to non-match pod's affinity - multiple terms case",
     target(**MULTI_AFFINITY), other({"aaa": "a"}), other(SCAN_LABEL), QueueingHint.SKIP),
    ("update a pod from non-match to match pod's affinity - multiple terms case",
     target(**MULTI_AFFINITY), other({"aaa": "a"}), other({"aaa": "", "bbb": ""}),
     QueueingHint.QUEUE),
    ("updated pod is the target pod", target({"foo": "baz"}), target({"foo": "bar"}),
     target({"foo": "baz"}), QueueingHint.QUEUE),
    ("modify pod label to change it from satisfying pod anti-affinity to not satisfying "
     "anti-affinity", target(**TARGET_ANTI), other(SCAN_LABEL), other({"service": "aaaa"}),
     QueueingHint.QUEUE),
    ("modify pod label to change it from not satisfying pod anti-affinity to satisfying "
     "anti-affinity", target(**TARGET_ANTI), other({"service": "bbb"}), other(SCAN_LABEL),
     QueueingHint.SKIP),
    ("delete a pod which doesn't match pod's anti-affinity", target(**TARGET_ANTI),
     other({"aaa": "a"}), None, QueueingHint.SKIP),
    ("delete a pod which matches pod's anti-affinity", target(**TARGET_ANTI), other(SCAN_LABEL),
     None, QueueingHint.QUEUE),
    ("delete a pod with anti-affinity that matches pending pod",
     make_pod(SCAN_LABEL, name="p"), make_pod(node="fake-node", **TARGET_ANTI), None,
     QueueingHint.QUEUE),
    ("delete a pod with anti-affinity that doesn't match pending pod",
     make_pod({"service": "foo"}, name="p"), make_pod(node="fake-node", **TARGET_ANTI), None,
     QueueingHint.SKIP),
    ("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that "
     "doesn't match pending pod",
     make_pod({"service": "foo"}, name="p", **TARGET_ANTI),
     make_pod({"service": "foo"}, node="fake-node", **TARGET_ANTI), None, QueueingHint.SKIP),
]  # fmt: skip


def _hints() -> dict[EventResource, Any]:
    p = plugin(FakeSnapshot([], []))
    return {r.event.resource: r.hint for r in p.events_to_register()}


@pytest.mark.parametrize(
    ("pod", "old", "new", "expected"),
    [row[1:] for row in POD_HINT_ROWS],
    ids=[row[0] for row in POD_HINT_ROWS],
)
def test_is_schedulable_after_pod_change(
    pod: Pod, old: Any, new: Any, expected: QueueingHint
) -> None:
    assert _hints()[EventResource.POD](pod, old, new) is expected


# ---- Test_isSchedulableAfterNodeChange ---------------------------------------------------

ZONE_AFFINITY = make_pod(name="p", affinity=[t("service", "In", "zone", "securityscan", "value2")])
REGION_AFFINITY = make_pod(
    name="p", affinity=[t("service", "In", "region", "securityscan", "value2")]
)
ZONE_ANTI = make_pod(
    name="p", anti=[{"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}]
)


def node_a(**labels: str) -> Node:
    return make_node("node-a", labels)


# name, pod, old, new, expected
NODE_HINT_ROWS: list[tuple[Any, ...]] = [
    ("add a new node with matched pod affinity topologyKey", ZONE_AFFINITY, None,
     node_a(zone="zone1"), QueueingHint.QUEUE),
    ("add a new node without matched topologyKey", REGION_AFFINITY, None, node_a(zone="zone1"),
     QueueingHint.SKIP),
    ("update node label but not topologyKey", ZONE_AFFINITY, node_a(aaa="a"), node_a(aaa="b"),
     QueueingHint.SKIP),
    ("update node label that isn't related to the pod affinity", ZONE_AFFINITY,
     node_a(zone="zone1"), node_a(zone="zone1", **{"unrelated-label": "unrelated"}),
     QueueingHint.SKIP),
    ("update node with different affinity topologyKey value", ZONE_AFFINITY,
     node_a(zone="zone1"), node_a(zone="zone2"), QueueingHint.QUEUE),
    ("update node to have the affinity topology label", ZONE_AFFINITY, node_a(aaa="a"),
     node_a(zone="zone1"), QueueingHint.QUEUE),
    ("add a new node with matched pod anti-affinity topologyKey", ZONE_ANTI, None,
     node_a(zone="zone1"), QueueingHint.QUEUE),
    ("add a new node without matched pod anti-affinity topologyKey", ZONE_ANTI, None, node_a(),
     QueueingHint.QUEUE),
    ("update node label that isn't related to the pod anti-affinity", ZONE_ANTI,
     node_a(zone="zone1"), node_a(zone="zone1", **{"unrelated-label": "unrelated"}),
     QueueingHint.SKIP),
    ("update node with different anti-affinity topologyKey value", ZONE_ANTI,
     node_a(zone="zone1"), node_a(zone="zone2"), QueueingHint.QUEUE),
    ("update node to have the anti-affinity topology label", ZONE_ANTI, node_a(aaa="a"),
     node_a(zone="zone1"), QueueingHint.SKIP),
    ("update node label not to have anti-affinity topology label", ZONE_ANTI,
     node_a(zone="zone1"), node_a(aaa="a"), QueueingHint.QUEUE),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "old", "new", "expected"),
    [row[1:] for row in NODE_HINT_ROWS],
    ids=[row[0] for row in NODE_HINT_ROWS],
)
def test_is_schedulable_after_node_change(
    pod: Pod, old: Node | None, new: Node, expected: QueueingHint
) -> None:
    assert _hints()[EventResource.NODE](pod, old, new) is expected


def test_hints_queue_on_objects_of_the_wrong_kind() -> None:
    hints = _hints()
    assert hints[EventResource.POD](target(), None, "not-a-pod") is QueueingHint.QUEUE
    assert hints[EventResource.NODE](target(), "not-a-node", node_a()) is QueueingHint.QUEUE


def test_events_to_register() -> None:
    events = [r.event for r in plugin(FakeSnapshot([], [])).events_to_register()]
    assert events == [
        ClusterEvent(
            EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        ),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]


# ---- args --------------------------------------------------------------------------------


def test_registry_builds_the_plugin() -> None:
    factory = in_tree_factory("InterPodAffinity")
    assert factory is not None
    p = factory(None, FakeHandle(snapshot=FakeSnapshot([], [])))
    assert isinstance(p, InterPodAffinity)
    assert p.args.hard_pod_affinity_weight == 1
    assert p.args.ignore_preferred_terms_of_existing_pods is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"hardPodAffinityWeight": 101},
            "InterPodAffinity: args.hardPodAffinityWeight: Invalid value: 101: "
            "not in valid range [0, 100]",
        ),
        (
            {"hardPodAffinityWeight": -1},
            "InterPodAffinity: args.hardPodAffinityWeight: Invalid value: -1: "
            "not in valid range [0, 100]",
        ),
        ({"hardPodAffinityWeight": "1"}, "InterPodAffinity: args.hardPodAffinityWeight:"),
        (
            {"ignorePreferredTermsOfExistingPods": "yes"},
            "InterPodAffinity: args.ignorePreferredTermsOfExistingPods:",
        ),
        (
            {"hardPodAffinityWieght": 1},
            'InterPodAffinity: args: unknown field "hardPodAffinityWieght"',
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plugin(FakeSnapshot([], []), args)
    assert str(info.value).startswith(message)
