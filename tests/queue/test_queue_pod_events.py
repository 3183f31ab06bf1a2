"""pod_scheduling_properties_change (upstream framework/events.go)."""

from __future__ import annotations

import pytest

from ksched.api import Pod
from ksched.framework import ActionType, ClusterEvent, EventResource
from ksched.queue import pod_scheduling_properties_change
from ksched.testing import make_pod

UNSCHED = EventResource.UNSCHEDULED_POD


def _base() -> Pod:
    return make_pod("p").req(cpu="1", memory="1Gi").label("a", "1").scheduling_gates("g").obj()


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").label("a", "2").scheduling_gates("g").obj(),
            [ActionType.UPDATE_POD_LABEL],
            id="only label is updated",
        ),
        pytest.param(
            make_pod("p").req(cpu="500m", memory="1Gi").label("a", "1").scheduling_gates("g").obj(),
            [ActionType.UPDATE_POD_SCALE_DOWN],
            id="pod's resource request is scaled down",
        ),
        pytest.param(
            make_pod("p").req(cpu="1").label("a", "1").scheduling_gates("g").obj(),
            [ActionType.UPDATE_POD_SCALE_DOWN],
            id="a resource request is removed",
        ),
        pytest.param(
            make_pod("p").req(cpu="2", memory="1Gi").label("a", "1").scheduling_gates("g").obj(),
            [ActionType.UPDATE],
            id="pod's resource request is scaled up",
        ),
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").label("a", "1").obj(),
            [ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED],
            id="the pod's scheduling gates are eliminated",
        ),
        pytest.param(
            make_pod("p")
            .req(cpu="1", memory="1Gi")
            .label("a", "1")
            .scheduling_gates("g")
            .toleration("k")
            .obj(),
            [ActionType.UPDATE_POD_TOLERATION],
            id="pod's tolerations are updated",
        ),
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").label("b", "1").obj(),
            [ActionType.UPDATE_POD_LABEL, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED],
            id="label and scheduling gates in one update",
        ),
        pytest.param(_base(), [ActionType.UPDATE], id="nothing specific: general Update"),
    ],
)  # fmt: skip
def test_pod_scheduling_properties_change(new: Pod, want: list[ActionType]) -> None:
    got = pod_scheduling_properties_change(new, _base())
    assert got == [ClusterEvent(UNSCHED, action) for action in want]


def test_assigned_pod_events() -> None:
    old = make_pod("p").node("n1").obj()
    new = make_pod("p").node("n1").label("x", "y").obj()
    assert pod_scheduling_properties_change(new, old) == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
    ]
