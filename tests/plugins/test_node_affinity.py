"""NodeAffinity: upstream node_affinity_test.go tables (TestNodeAffinity,
TestNodeAffinityPriority, Test_isSchedulableAfterNodeChange).

Upstream pods are bare ``v1.Pod`` literals; here they are read from the same shapes as
manifests (a name is added). A node without a name in the upstream row has none here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pytest

from ksched._errors import ConfigError
from ksched.api import Node, ObjectMeta, Pod, read_object
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PreFilterResult,
    QueueingHint,
    Status,
)
from ksched.framework.batch import NodeTable
from ksched.plugins import in_tree_factory
from ksched.plugins.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
)

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
NAME = "metadata.name"

POD_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,))
ENFORCED_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,))
SKIP = Status(Code.SKIP)
HANDLE = cast(Handle, None)  # NodeAffinity never uses its handle


def test_reasons_are_worded_as_upstream() -> None:
    # pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go (v1.35): ErrReasonPod,
    # errReasonEnforced, errReasonConflict.
    assert ERR_REASON_POD == "node(s) didn't match Pod's node affinity/selector"
    assert ERR_REASON_ENFORCED == "node(s) didn't match scheduler-enforced node affinity"
    assert ERR_REASON_CONFLICT == "pod affinity terms conflict"


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def term(
    exprs: Sequence[dict[str, Any]] = (), fields: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields:
        out["matchFields"] = list(fields)
    return out


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {REQUIRED: {"nodeSelectorTerms": list(terms)}}


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {PREFERRED: [{"weight": w, "preference": t} for w, t in weighted]}


def make_pod(
    node_affinity: dict[str, Any] | None = None, node_selector: Mapping[str, str] | None = None
) -> Pod:
    spec: dict[str, Any] = {}
    if node_affinity is not None:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    pod = read_object({"kind": "Pod", "metadata": {"name": "pod"}, "spec": spec})
    assert isinstance(pod, Pod)
    return pod


def make_node(name: str = "", labels: Mapping[str, str] | None = None) -> Node:
    return Node(metadata=ObjectMeta(name=name, namespace="", labels=dict(labels or {})))


def plugin(args: Mapping[str, Any] | None = None) -> NodeAffinity:
    return NodeAffinity.new(args, HANDLE)


# ---- TestNodeAffinity --------------------------------------------------------------------

IN_FOO = term([req("foo", "In", "bar", "value2")])
NODE1_FIELD = req(NAME, "In", "node1")
NODE2_FIELD = req(NAME, "In", "node2")
ADDED_NODE2 = {"addedAffinity": required(term(fields=[NODE2_FIELD]))}

# name, pod, labels, node name, want Filter, want PreFilter, want PreFilterResult, args,
# run PreFilter
AFFINITY_ROWS: list[tuple[Any, ...]] = [
    ("missing labels", make_pod(node_selector={"foo": "bar"}), {}, "",
     POD_MISMATCH, None, None, None, True),
    ("same labels", make_pod(node_selector={"foo": "bar"}), {"foo": "bar"}, "",
     None, None, None, None, True),
    ("node labels are superset", make_pod(node_selector={"foo": "bar"}),
     {"foo": "bar", "baz": "blah"}, "", None, None, None, None, True),
    ("node labels are subset", make_pod(node_selector={"foo": "bar", "baz": "blah"}),
     {"foo": "bar"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with matchExpressions using In operator that matches the existing node",
     make_pod(required(IN_FOO)), {"foo": "bar"}, "", None, None, None, None, True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     make_pod(required(term([req("kernel-version", "Gt", "0204")]))),
     {"kernel-version": "0206"}, "", None, None, None, None, True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     make_pod(required(term([req("mem-type", "NotIn", "DDR", "DDR2")]))),
     {"mem-type": "DDR3"}, "", None, None, None, None, True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     make_pod(required(term([req("GPU", "Exists")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     make_pod(required(term([req("foo", "In", "value1", "value2")]))),
     {"foo": "bar"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't "
     "schedule onto the node",
     make_pod(required(term())), {"foo": "bar"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with no Affinity will schedule onto a node", make_pod(), {"foo": "bar"}, "",
     None, SKIP, None, None, True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node",
     make_pod({REQUIRED: None}), {"foo": "bar"}, "", None, SKIP, None, None, True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     make_pod(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     make_pod(required(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will "
     "schedule onto the node",
     make_pod(required(IN_FOO, term([req("diffkey", "In", "wrong", "value2")]))),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) "
     "both are satisfied, will schedule onto the node",
     make_pod(required(term([req("foo", "Exists")])), {"foo": "bar"}),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing "
     "that we are deprecating) is not satisfied, won't schedule onto the node",
     make_pod(required(term([req("foo", "Exists")])), {"foo": "bar"}),
     {"foo": "barrrrrr"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     make_pod(required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))),
     {"foo": "bar"}, "", POD_MISMATCH, None, None, None, True),
    ("Pod with matchFields using In operator that matches the existing node",
     make_pod(required(term(fields=[NODE1_FIELD]))), {}, "node1",
     None, None, PreFilterResult(frozenset({"node1"})), None, True),
    ("Pod with matchFields using In operator that does not match the existing node",
     make_pod(required(term(fields=[NODE1_FIELD]))), {}, "node2",
     POD_MISMATCH, None, PreFilterResult(frozenset({"node1"})), None, True),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     make_pod(required(term(fields=[NODE1_FIELD]), term([req("foo", "In", "bar")]))),
     {"foo": "bar"}, "node2", None, None, None, None, True),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     make_pod(required(term([req("foo", "In", "bar")], [NODE1_FIELD]))),
     {"foo": "bar"}, "node2", POD_MISMATCH, None, PreFilterResult(frozenset({"node1"})), None,
     True),
    ("Pod with one term: both matchFields and matchExpressions match",
     make_pod(required(term([req("foo", "In", "bar")], [NODE1_FIELD]))),
     {"foo": "bar"}, "node1", None, None, PreFilterResult(frozenset({"node1"})), None, True),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     make_pod(required(term(fields=[NODE1_FIELD]),
                       term([req("foo", "In", "not-match-to-bar")]))),
     {"foo": "bar"}, "node2", POD_MISMATCH, None, None, None, True),
    ("Pod with two terms of node.Name affinity",
     make_pod(required(term(fields=[NODE1_FIELD]), term(fields=[NODE2_FIELD]))), {}, "node2",
     None, None, PreFilterResult(frozenset({"node1", "node2"})), None, True),
    ("Pod with two conflicting mach field requirements",
     make_pod(required(term(fields=[NODE1_FIELD, NODE2_FIELD]))), {"foo": "bar"}, "node2",
     POD_MISMATCH, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,)), None,
     None, True),
    ("Matches added affinity and Pod's node affinity",
     make_pod(required(term([req("zone", "In", "foo")]))), {"zone": "foo"}, "node2",
     None, None, None, ADDED_NODE2, True),
    ("Matches added affinity but not Pod's node affinity",
     make_pod(required(term([req("zone", "In", "bar")]))), {"zone": "foo"}, "node2",
     POD_MISMATCH, None, None, ADDED_NODE2, True),
    ("Doesn't match added affinity", make_pod(), {"zone": "foo"}, "node2",
     ENFORCED_MISMATCH, None, None,
     {"addedAffinity": required(term([req("zone", "In", "bar")]))}, True),
    ("Matches node selector correctly even if PreFilter is not called",
     make_pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "",
     None, None, None, None, False),
    ("Matches node affinity correctly even if PreFilter is not called",
     make_pod(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "labels", "node_name", "want", "want_pre", "want_result", "args", "run_pre"),
    [row[1:] for row in AFFINITY_ROWS],
    ids=[row[0] for row in AFFINITY_ROWS],
)
def test_node_affinity(
    pod: Pod,
    labels: dict[str, str],
    node_name: str,
    want: Status | None,
    want_pre: Status | None,
    want_result: PreFilterResult | None,
    args: dict[str, Any] | None,
    run_pre: bool,
) -> None:
    p = plugin(args)
    node_info = NodeInfo.of(make_node(node_name, labels))
    state = CycleState()
    if run_pre:
        got = p.pre_filter(state, pod, [node_info])
        if isinstance(got, PreFilterResult):
            assert (None, got) == (want_pre, want_result)
        else:
            assert (got, None) == (want_pre, want_result)
    assert p.filter(state, pod, node_info) == want


# ---- TestNodeAffinityPriority ------------------------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
FOO_BAR = term([req("foo", "In", "bar")])
KEY_VALUE = term([req("key", "In", "value")])
AFFINITY1 = preferred((2, FOO_BAR))
AFFINITY2 = preferred(
    (2, FOO_BAR),
    (4, KEY_VALUE),
    (5, term([req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1")])),
)
BAD_KEY_MESSAGE = (
    '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of '
    "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# name, pod, nodes (name, labels), expected, args, run PreScore, want PreScore
PRIORITY_ROWS: list[tuple[Any, ...]] = [
    ("all nodes are same priority as NodeAffinity is nil", make_pod(),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
     {"node1": 0, "node2": 0, "node3": 0}, None, False, None),
    ("Skip is returned in PreScore when NodeAffinity is nil", make_pod(), [("node1", LABEL1)],
     None, None, True, SKIP),
    ("PreScore returns error when an incoming Pod has a broken affinity",
     make_pod(preferred((2, term([req("invalid key", "In", "bar")])))), [("node1", LABEL1)],
     None, None, True, Status(Code.ERROR, (BAD_KEY_MESSAGE,))),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
     "priority is zero", make_pod(AFFINITY1),
     [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
     {"node1": 0, "node2": 0, "node3": 0}, None, True, None),
    ("only node1 matches the preferred scheduling requirements of pod", make_pod(AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
     {"node1": 100, "node2": 0, "node3": 0}, None, True, None),
    ("all nodes matches the preferred scheduling requirements of pod but with different "
     "priorities ", make_pod(AFFINITY2), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
     {"node1": 18, "node5": 100, "node2": 36}, None, True, None),
    ("added affinity", make_pod(), [("node1", LABEL1), ("node2", LABEL2)],
     {"node1": 100, "node2": 0}, {"addedAffinity": AFFINITY1}, True, None),
    ("added affinity and pod has default affinity", make_pod(AFFINITY1),
     [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
     {"node1": 40, "node2": 60, "node3": 100},
     {"addedAffinity": preferred((3, KEY_VALUE))}, True, None),
    ("calculate the priorities correctly even if PreScore is not called", make_pod(AFFINITY2),
     [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
     {"node1": 18, "node5": 100, "node2": 36}, None, True, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "nodes", "expected", "args", "run_pre_score", "want_pre_score"),
    [row[1:] for row in PRIORITY_ROWS],
    ids=[row[0] for row in PRIORITY_ROWS],
)
def test_node_affinity_priority(
    pod: Pod,
    nodes: list[tuple[str, dict[str, str]]],
    expected: dict[str, int] | None,
    args: dict[str, Any] | None,
    run_pre_score: bool,
    want_pre_score: Status | None,
) -> None:
    p = plugin(args)
    infos = [NodeInfo.of(make_node(name, labels)) for name, labels in nodes]
    state = CycleState()
    if run_pre_score:
        status = p.pre_score(state, pod, infos)
        assert status == want_pre_score
        if status is not None:
            return
    scores = {info.name: p.score(state, pod, info) for info in infos}
    p.normalize_score(state, pod, scores)
    assert scores == expected


def test_score_without_pre_score_raises_on_broken_affinity() -> None:
    pod = make_pod(preferred((2, term([req("invalid key", "In", "bar")]))))
    with pytest.raises(ValueError, match="invalid key"):
        plugin().score(CycleState(), pod, NodeInfo.of(make_node("node1", LABEL1)))


# ---- Test_isSchedulableAfterNodeChange ---------------------------------------------------

POD_WITH_NODE_AFFINITY = make_pod(required(term([req("foo", "In", "bar")])))
ADDED_FOO_BAR = {"addedAffinity": required(term([req("foo", "In", "bar")]))}

# name, args, old, new, expected
HINT_ROWS: list[tuple[Any, ...]] = [
    ("backoff-wrong-new-object", None, None, "not-a-node", QueueingHint.QUEUE),
    ("backoff-wrong-old-object", None, "not-a-node", make_node(), QueueingHint.QUEUE),
    ("skip-queue-on-add", None, None, make_node(), QueueingHint.SKIP),
    ("queue-on-add", None, None, make_node(labels={"foo": "bar"}), QueueingHint.QUEUE),
    ("skip-unrelated-changes", None, make_node(), make_node(), QueueingHint.SKIP),
    ("skip-unrelated-changes-on-labels", None, make_node(), make_node(labels={"k": "v"}),
     QueueingHint.SKIP),
    ("skip-labels-changes-on-node-from-suitable-to-unsuitable", None,
     make_node(labels={"foo": "bar"}), make_node(labels={"k": "v"}), QueueingHint.SKIP),
    ("queue-on-labels-change-makes-pod-schedulable", None, make_node(),
     make_node(labels={"foo": "bar"}), QueueingHint.QUEUE),
    ("skip-queue-on-add-scheduler-enforced-node-affinity", ADDED_FOO_BAR, None, make_node(),
     QueueingHint.SKIP),
    ("queue-on-add-scheduler-enforced-node-affinity", ADDED_FOO_BAR, None,
     make_node(labels={"foo": "bar"}), QueueingHint.QUEUE),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "old", "new", "expected"),
    [row[1:] for row in HINT_ROWS],
    ids=[row[0] for row in HINT_ROWS],
)
def test_is_schedulable_after_node_change(
    args: dict[str, Any] | None, old: Any, new: Any, expected: QueueingHint
) -> None:
    (registration,) = plugin(args).events_to_register()
    assert registration.hint is not None
    assert registration.hint(POD_WITH_NODE_AFFINITY, old, new) is expected


def test_hint_queues_when_the_pods_affinity_cannot_be_parsed() -> None:
    # A term that does not parse makes Match report an error: the pod is queued.
    pod = make_pod(required(term([req("foo", "In")])))
    (registration,) = plugin().events_to_register()
    assert registration.hint is not None
    assert registration.hint(pod, None, make_node(labels={"foo": "bar"})) is QueueingHint.QUEUE


def test_events_to_register() -> None:
    (registration,) = plugin().events_to_register()
    assert registration.event == ClusterEvent(
        EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    )


# ---- args --------------------------------------------------------------------------------


def test_registry_builds_the_plugin() -> None:
    factory = in_tree_factory("NodeAffinity")
    assert factory is not None
    assert isinstance(factory(None, HANDLE), NodeAffinity)


def test_added_affinity_with_empty_required_matches_no_node() -> None:
    p = plugin({"addedAffinity": {REQUIRED: {"nodeSelectorTerms": []}}})
    assert p.filter(CycleState(), make_pod(), NodeInfo.of(make_node("n1"))) == ENFORCED_MISMATCH


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"addedAffinity": required(term([req("foo", "In")]))},
            "NodeAffinity: args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string(nil): "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"addedAffinity": preferred((1, term(fields=[req(NAME, "In", "a", "b")])))},
            "NodeAffinity: args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            '.matchFields[0].values: Invalid value: []string{"a", "b"}: must have one element',
        ),
        ({"addedAffinity": "zone"}, "NodeAffinity: args.addedAffinity: expected a mapping"),
        ({"addedAfinity": {}}, 'NodeAffinity: args: unknown field "addedAfinity"'),
        (
            {"addedAffinity": required(term([req("zone", "Near", "a")]))},
            "NodeAffinity: args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plugin(args)
    assert str(info.value).startswith(message)


# ---- batch forms -------------------------------------------------------------------------


def _filter_both_ways(
    p: NodeAffinity, pod: Pod, infos: list[NodeInfo], run_pre: bool = True
) -> tuple[list[bool], list[bool]]:
    """(per-node Filter passes, filter_batch mask) over ``infos``."""
    state = CycleState()
    pre = p.pre_filter(state, pod, infos) if run_pre else None
    per_node = [p.filter(state, pod, info) is None for info in infos]
    mask = p.filter_batch(state, pod, NodeTable(infos))
    names = pre.node_names if isinstance(pre, PreFilterResult) else None
    if names is not None and names.isdisjoint(info.name for info in infos):
        assert mask is None  # no node left to judge: the batch form steps aside
        return per_node, per_node
    assert mask is not None and mask.dtype == np.bool_
    return per_node, mask.tolist()


@pytest.mark.parametrize(
    ("pod", "labels", "node_name", "want", "args", "run_pre"),
    [(row[1], row[2], row[3], row[4], row[7], row[8]) for row in AFFINITY_ROWS],
    ids=[row[0] for row in AFFINITY_ROWS],
)
def test_filter_batch_agrees_with_filter_on_upstream_rows(
    pod: Pod,
    labels: dict[str, str],
    node_name: str,
    want: Status | None,
    args: dict[str, Any] | None,
    run_pre: bool,
) -> None:
    # The upstream node, then others that differ by name or labels, in one table.
    others = [("node1", labels), ("node2", {}), ("node3", {**labels, "foo": "bar"})]
    nodes = [make_node(node_name, labels)]
    nodes += [make_node(name, lbls) for name, lbls in others if name != node_name]
    infos = [NodeInfo.of(n) for n in nodes]
    per_node, mask = _filter_both_ways(plugin(args), pod, infos, run_pre)
    assert mask == per_node
    assert mask[0] is (want is None)


GENERATIONS = ["3", "+3", "007", "-2", "2", "4", "2.5", "", " 3", "0x3", "9223372036854775808",
               "-9223372036854775808", "x9", None]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "value", "want"),
    [
        # strconv.ParseInt: a sign and leading zeros are fine; anything else is no number.
        ("Gt", "2", [True, True, True, False, False, True] + [False] * 8),
        ("Lt", "4", [True, True, False, True, True, False] + [False] * 5 + [True, False, False]),
    ],
)
def test_filter_batch_parses_gt_lt_values_as_upstream(
    op: str, value: str, want: list[bool]
) -> None:
    infos = [
        NodeInfo.of(make_node(f"n{i}", {} if g is None else {"gen": g}))
        for i, g in enumerate(GENERATIONS)
    ]
    pod = make_pod(required(term([req("gen", op, value)])))
    per_node, mask = _filter_both_ways(plugin(), pod, infos)
    assert per_node == want
    assert mask == want


def test_filter_batch_set_lookup_and_empty_values() -> None:
    # More values than the compare-each path handles; an empty label value is a value.
    values = [f"v{i}" for i in range(9)] + [""]
    infos = [
        NodeInfo.of(make_node("a", {"k": "v7"})),
        NodeInfo.of(make_node("b", {"k": ""})),
        NodeInfo.of(make_node("c", {"k": "w"})),
        NodeInfo.of(make_node("d", {})),
    ]
    for op, want in (
        ("In", [True, True, False, False]),
        ("NotIn", [False, False, True, True]),
    ):
        per_node, mask = _filter_both_ways(
            plugin(), make_pod(required(term([req("k", op, *values)]))), infos
        )
        assert (per_node, mask) == (want, want), op
    for op, want in (("Exists", [True, True, True, False]), ("DoesNotExist", [False] * 3 + [True])):
        per_node, mask = _filter_both_ways(
            plugin(), make_pod(required(term([req("k", op)]))), infos
        )
        assert (per_node, mask) == (want, want), op


def test_filter_batch_match_fields_skip_a_node_without_a_name() -> None:
    infos = [NodeInfo.of(make_node(name, {"zone": "a"})) for name in ("n1", "", "n2", "n3")]
    cases = [
        (required(term(fields=[req(NAME, "In", "n2")])), [False, True, True, False]),
        (required(term(fields=[req(NAME, "NotIn", "n2")])), [True, True, False, True]),
        (required(term(fields=[req(NAME, "In", "gone")])), [False, True, False, False]),
        (required(term(fields=[req("metadata.uid", "In", "")])), [True] * 4),
        (required(term(fields=[req("metadata.uid", "In", "n1")])), [False, True, False, False]),
        (required(term(fields=[req("metadata.uid", "NotIn", "")])), [False, True, False, False]),
        (
            required(term([req("zone", "In", "b")], [req(NAME, "In", "n1")]),
                     term(fields=[req(NAME, "In", "n3")])),
            [False, True, False, True],
        ),
    ]  # fmt: skip
    for affinity, want in cases:
        per_node, mask = _filter_both_ways(plugin(), make_pod(affinity), infos, run_pre=False)
        assert (per_node, mask) == (want, want), affinity


def test_filter_batch_tells_enforced_and_pod_mismatch_apart_from_passing() -> None:
    p = plugin({"addedAffinity": required(term([req("zone", "NotIn", "c")]))})
    infos = [
        NodeInfo.of(make_node(name, labels))
        for name, labels in (("n1", {"zone": "a"}), ("n2", {"zone": "c"}), ("n3", {"zone": "b"}))
    ]
    pod = make_pod(node_selector={"zone": "a"})
    per_node, mask = _filter_both_ways(p, pod, infos)
    assert (per_node, mask) == ([True, False, False], [True, False, False])


@pytest.mark.parametrize(
    ("pod", "nodes", "expected", "args", "run_pre_score", "want_pre_score"),
    [row[1:] for row in PRIORITY_ROWS if row[6] is None],
    ids=[row[0] for row in PRIORITY_ROWS if row[6] is None],
)
def test_score_batch_agrees_with_score_on_upstream_rows(
    pod: Pod,
    nodes: list[tuple[str, dict[str, str]]],
    expected: dict[str, int],
    args: dict[str, Any] | None,
    run_pre_score: bool,
    want_pre_score: Status | None,
) -> None:
    p = plugin(args)
    infos = [NodeInfo.of(make_node("spare", LABEL5))]
    infos += [NodeInfo.of(make_node(name, labels)) for name, labels in nodes]
    state = CycleState()
    if p.pre_score(state, pod, infos[1:]) is not None:
        return  # SKIP: the framework scores nothing
    table = NodeTable(infos)
    rows = np.arange(1, len(infos), dtype=np.int64)
    raw = p.score_batch(state, pod, table, rows)
    assert raw is not None
    assert raw.tolist() == [p.score(state, pod, info) for info in infos[1:]]
    p.normalize_score_batch(state, pod, raw)
    assert dict(zip((info.name for info in infos[1:]), raw.tolist(), strict=True)) == expected


def test_score_batch_steps_aside_without_pre_score() -> None:
    infos = [NodeInfo.of(make_node("node1", LABEL1))]
    got = plugin().score_batch(
        CycleState(), make_pod(AFFINITY1), NodeTable(infos), np.arange(1, dtype=np.int64)
    )
    assert got is None


def test_normalize_score_batch_agrees_with_normalize_score() -> None:
    # The framework uses the batch form whenever it exists, so compare the two directly.
    p = plugin()
    rng = np.random.default_rng(3)
    samples = [[0, 0, 0], [7], [], [1, 2, 3, 250], *rng.integers(0, 400, (20, 9)).tolist()]
    for raw in samples:
        by_node = {f"n{i}": v for i, v in enumerate(raw)}
        p.normalize_score(CycleState(), make_pod(), by_node)
        scores = np.array(raw, dtype=np.int64)
        p.normalize_score_batch(CycleState(), make_pod(), scores)
        assert scores.tolist() == list(by_node.values()), raw
