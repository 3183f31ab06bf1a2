"""NodeName: upstream node_name_test.go TestNodeName."""

from __future__ import annotations

import pytest

from ksched.api import ObjectMeta, Pod
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    Status,
)
from ksched.plugins.node_name import ERR_REASON, NodeName
from ksched.testing import make_node, make_pod

CASES = [
    ("no host specified", Pod(metadata=ObjectMeta(name="p")), None),
    ("host matches", make_pod("p").node("foo").obj(), None),
    ("host doesn't match", make_pod("p").node("bar").obj(),
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))),
]  # fmt: skip


@pytest.mark.parametrize(("pod", "want"), [r[1:] for r in CASES], ids=[r[0] for r in CASES])
def test_node_name(pod: Pod, want: Status | None) -> None:
    node_info = NodeInfo.of(make_node("foo").obj())
    assert NodeName().filter(CycleState(), pod, node_info) == want


def test_events_to_register() -> None:
    events = NodeName().events_to_register()
    assert [(e.event, e.hint) for e in events] == [
        (ClusterEvent(EventResource.NODE, ActionType.ADD), None)
    ]
