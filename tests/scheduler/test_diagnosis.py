"""FitError messages: framework/types_test.go TestFitError_Error."""

from __future__ import annotations

import pytest

from ksched.framework import Code, NodeToStatus, Status
from ksched.scheduler import FitError

PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
POST = "Error running PostFilter plugin FailedPostFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"


def _statuses(reasons: dict[str, str]) -> NodeToStatus:
    out = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    for node, reason in reasons.items():
        out.set(node, Status(Code.UNSCHEDULABLE, (reason,)))
    return out


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
