"""FitError messages: framework/types_test.go TestFitError_Error, and how in-tree Filter
reasons aggregate in them."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from ksched.framework import Code, CycleState, Handle, NodeInfo, NodeToStatus, Status
from ksched.plugins.node_affinity import NodeAffinity
from ksched.plugins.taint_toleration import TaintToleration
from ksched.scheduler import FitError
from ksched.testing import make_node, make_pod

PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
POST = "Error running PostFilter plugin FailedPostFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"


def _statuses(reasons: dict[str, str]) -> NodeToStatus:
    out = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    for node, reason in reasons.items():
        out.set(node, Status(Code.UNSCHEDULABLE, (reason,)))
    return out


def _compact(reasons: dict[str, str]) -> NodeToStatus:
    """The same statuses in the compact form a batch Filter pass hands over (rows in
    reverse, one shared Status per distinct reason)."""
    names = list(reasons)
    distinct = {r: Status(Code.UNSCHEDULABLE, (r,)) for r in reasons.values()}
    order = list(range(len(names)))[::-1]
    kinds = list(distinct)
    return NodeToStatus.of_rows(
        names,
        {n: i for i, n in enumerate(names)},
        np.array(order, dtype=np.int64),
        np.array([kinds.index(reasons[names[i]]) for i in order], dtype=np.int64),
        list(distinct.values()),
    )


@pytest.mark.parametrize(
    ("num_all_nodes", "reasons", "pre", "post", "want"),
    [
        pytest.param(
            3,
            {"node1": PRE, "node2": PRE, "node3": PRE},
            PRE,
            "",
            f"0/3 nodes are available: {PRE}.",
            id="nodes failed Prefilter plugin",
        ),
        pytest.param(
            3,
            {"node1": PRE, "node2": PRE, "node3": PRE},
            PRE,
            POST,
            f"0/3 nodes are available: {PRE}. {POST}",
            id="nodes failed Prefilter plugin and the preemption also failed",
        ),
        pytest.param(
            3,
            {"node1": F1, "node2": F1, "node3": F1},
            "",
            "",
            f"0/3 nodes are available: 3 {F1}.",
            id="nodes failed one Filter plugin with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            {"node1": F1, "node2": F1, "node3": F1},
            "",
            POST,
            f"0/3 nodes are available: 3 {F1}. {POST}",
            id="nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ),
        pytest.param(
            3,
            {"node1": F1, "node2": F1, "node3": F2},
            "",
            "",
            f"0/3 nodes are available: 1 {F2}, 2 {F1}.",
            id="nodes failed two Filter plugins with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            {"node1": F1, "node2": F1, "node3": F2},
            "",
            POST,
            f"0/3 nodes are available: 1 {F2}, 2 {F1}. {POST}",
            id="nodes failed two Filter plugins with a non-empty PostFilterMsg",
        ),
        pytest.param(
            1,
            {"node1": "Node failed Permit plugin Permit-1"},
            "",
            "",
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
            id="failed to Permit on node",
        ),
        pytest.param(
            1,
            {"node1": "Node failed Reserve plugin Reserve-1"},
            "",
            "",
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
            id="failed to Reserve on node",
        ),
    ],
)
def test_fit_error_message(
    num_all_nodes: int, reasons: dict[str, str], pre: str, post: str, want: str
) -> None:
    fit = FitError(
        num_all_nodes=num_all_nodes,
        statuses=_statuses(reasons),
        pre_filter_message=pre,
        post_filter_message=post,
    )
    assert fit.message() == want
    compact = FitError(
        num_all_nodes=num_all_nodes,
        statuses=_compact(reasons),
        pre_filter_message=pre,
        post_filter_message=post,
    )
    assert compact.message() == want


def test_absent_nodes_count_the_absent_status() -> None:
    statuses = NodeToStatus(
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy plugin(s) [X]",))
    )
    statuses.set("n1", Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)))
    fit = FitError(num_all_nodes=4, statuses=statuses)
    assert fit.message() == (
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [X]."
    )


def test_every_reason_of_a_status_counts() -> None:
    statuses = NodeToStatus()
    statuses.set("n1", Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")))
    statuses.set("n2", Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)))
    fit = FitError(num_all_nodes=2, statuses=statuses)
    assert fit.message() == "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."


def test_untolerated_taints_aggregate_whatever_the_taint() -> None:
    # Since v1.35 TaintToleration's reason does not name the taint: nodes rejected for
    # different taints count under one reason, beside NodeAffinity's.
    pod = make_pod("p").node_selector({"pool": "gpu"}).obj()
    nodes = [
        make_node("n1").label("pool", "gpu").taint("dedicated", "a").obj(),
        make_node("n2").label("pool", "gpu").taint("maintenance", "", "NoExecute").obj(),
        make_node("n3").label("pool", "cpu").obj(),
    ]
    handle = cast(Handle, None)  # neither plugin uses its handle
    taints, affinity = TaintToleration.new(None, handle), NodeAffinity.new(None, handle)
    statuses = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    for node in nodes:
        info = NodeInfo.of(node)
        status = affinity.filter(CycleState(), pod, info) or taints.filter(CycleState(), pod, info)
        assert status is not None
        statuses.set(node.name, status)
    fit = FitError(num_all_nodes=3, statuses=statuses)
    assert fit.message() == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) had untolerated taint(s)."
    )
