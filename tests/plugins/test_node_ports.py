"""NodePorts: upstream node_ports_test.go (TestNodePorts, TestPreFilterDisabled,
Test_isSchedulableAfterPodDeleted)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ksched.api import Container, ContainerPort, ObjectMeta, Pod, PodSpec
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueueingHint,
    Status,
)
from ksched.framework.batch import NodeTable
from ksched.plugins.node_ports import ERR_REASON, NodePorts, fits
from ksched.testing import make_node, make_pod


def new_pod(host: str, *host_port_infos: str) -> Pod:
    """upstream newPod: ports written PROTOCOL/hostIP/hostPort, all in one container."""
    ports = []
    for info in host_port_infos:
        protocol, host_ip, port = info.split("/")
        ports.append(
            ContainerPort(
                container_port=int(port), host_port=int(port), host_ip=host_ip, protocol=protocol
            )
        )
    return make_pod("p").container(ports=tuple(ports)).node(host).obj()


def init_container_port_pod(sidecar: bool) -> Pod:
    """st.MakePod().InitContainerPort(sidecar, [TCP 8001 -> 8001])."""
    port = ContainerPort(container_port=8001, host_port=8001, protocol="TCP")
    init = Container(name="init", ports=(port,), restart_policy="Always" if sidecar else None)
    return Pod(metadata=ObjectMeta(name="p", uid="p"), spec=PodSpec(init_containers=(init,)))


REJECTED = Status(Code.UNSCHEDULABLE, (ERR_REASON,))
SKIPPED = Status(Code.SKIP)

# (name, pod, existing pod on m1 or None, want PreFilter status, want Filter status)
CASES: list[tuple[str, Pod, Pod | None, Status | None, Status | None]] = [
    ("skip filter", Pod(metadata=ObjectMeta(name="p")), None, SKIPPED, None),
    ("other port", new_pod("m1", "UDP/127.0.0.1/8080"), new_pod("m1", "UDP/127.0.0.1/9090"),
     None, None),
    ("same udp port", new_pod("m1", "UDP/127.0.0.1/8080"), new_pod("m1", "UDP/127.0.0.1/8080"),
     None, REJECTED),
    ("same tcp port", new_pod("m1", "TCP/127.0.0.1/8080"), new_pod("m1", "TCP/127.0.0.1/8080"),
     None, REJECTED),
    ("different host ip", new_pod("m1", "TCP/127.0.0.1/8080"),
     new_pod("m1", "TCP/127.0.0.2/8080"), None, None),
    ("different protocol", new_pod("m1", "UDP/127.0.0.1/8080"),
     new_pod("m1", "TCP/127.0.0.1/8080"), None, None),
    ("second udp port conflict", new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     new_pod("m1", "UDP/127.0.0.1/8080"), None, REJECTED),
    ("first tcp port conflict", new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), None, REJECTED),
    ("first tcp port conflict due to 0.0.0.0 hostIP", new_pod("m1", "TCP/0.0.0.0/8001"),
     new_pod("m1", "TCP/127.0.0.1/8001"), None, REJECTED),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP",
     new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     new_pod("m1", "TCP/127.0.0.1/8001"), None, REJECTED),
    ("second tcp port conflict to 0.0.0.0 hostIP", new_pod("m1", "TCP/127.0.0.1/8001"),
     new_pod("m1", "TCP/0.0.0.0/8001"), None, REJECTED),
    ("second different protocol", new_pod("m1", "UDP/127.0.0.1/8001"),
     new_pod("m1", "TCP/0.0.0.0/8001"), None, None),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", new_pod("m1", "UDP/127.0.0.1/8001"),
     new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), None, REJECTED),
    ("non-sidecar initContainer using hostPort", init_container_port_pod(sidecar=False),
     new_pod("m1", "TCP/0.0.0.0/8001"), SKIPPED, None),
    ("TCP hostPort conflict from sidecar initContainer", init_container_port_pod(sidecar=True),
     new_pod("m1", "TCP/0.0.0.0/8001"), None, REJECTED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "existing", "want_pre_filter", "want_filter"),
    [row[1:] for row in CASES],
    ids=[row[0] for row in CASES],
)
def test_node_ports(
    pod: Pod, existing: Pod | None, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    node_info = NodeInfo.of(make_node("m1").obj(), [existing] if existing else [])
    plugin = NodePorts()
    state = CycleState()
    assert plugin.pre_filter(state, pod, [node_info]) == want_pre_filter
    if want_pre_filter is not None:
        return
    assert plugin.filter(state, pod, node_info) == want_filter
    assert fits(pod, node_info) is (want_filter is None)


@pytest.mark.parametrize(
    ("pod", "existing", "want_pre_filter", "want_filter"),
    [row[1:] for row in CASES if row[3] is None],
    ids=[row[0] for row in CASES if row[3] is None],
)
def test_filter_batch_agrees_with_filter(
    pod: Pod, existing: Pod | None, want_pre_filter: None, want_filter: Status | None
) -> None:
    # m1 holds the upstream pod; m2 is empty; m3 runs a pod without host ports; m4 holds
    # the upstream pod too.
    assert existing is not None
    infos = [
        NodeInfo.of(make_node("m1").obj(), [existing]),
        NodeInfo.of(make_node("m2").obj()),
        NodeInfo.of(make_node("m3").obj(), [make_pod("plain").req(cpu="1").node("m3").obj()]),
        NodeInfo.of(make_node("m4").obj(), [existing]),
    ]
    plugin = NodePorts()
    state = CycleState()
    assert plugin.pre_filter(state, pod, infos) is None
    mask = plugin.filter_batch(state, pod, NodeTable(infos))
    assert mask is not None and mask.dtype == np.bool_
    assert mask.tolist() == [plugin.filter(state, pod, info) is None for info in infos]
    fits_m1 = want_filter is None
    assert mask.tolist() == [fits_m1, True, True, fits_m1]


def test_filter_batch_steps_aside_without_pre_filter() -> None:
    table = NodeTable([NodeInfo.of(make_node("m1").obj())])
    assert NodePorts().filter_batch(CycleState(), new_pod("", "TCP/0.0.0.0/80"), table) is None


def test_pre_filter_disabled() -> None:
    node_info = NodeInfo.of(make_node("m1").obj())
    got = NodePorts().filter(CycleState(), Pod(metadata=ObjectMeta(name="p")), node_info)
    assert got is not None and got.code is Code.ERROR


def test_events_to_register() -> None:
    events = NodePorts().events_to_register()
    assert [(e.event, e.hint is not None) for e in events] == [
        (ClusterEvent(EventResource.POD, ActionType.DELETE), True),
        (ClusterEvent(EventResource.NODE, ActionType.ADD), False),
    ]


POD_WITH_HOST_PORT = make_pod("target").host_port(8080).obj()
POD_DELETED = [
    ("backoff-wrong-old-object", "not-a-pod", QueueingHint.QUEUE),
    ("skip-queue-on-unscheduled", make_pod("p").obj(), QueueingHint.SKIP),
    ("skip-queue-on-non-hostport", make_pod("p").node("fake-node").obj(), QueueingHint.SKIP),
    ("skip-queue-on-unrelated-hostport", make_pod("p").node("fake-node").host_port(8081).obj(),
     QueueingHint.SKIP),
    ("queue-on-released-hostport", make_pod("p").node("fake-node").host_port(8080).obj(),
     QueueingHint.QUEUE),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "want"), [row[1:] for row in POD_DELETED], ids=[row[0] for row in POD_DELETED]
)
def test_is_schedulable_after_pod_deleted(old: Any, want: QueueingHint) -> None:
    assert NodePorts().is_schedulable_after_pod_deleted(POD_WITH_HOST_PORT, old, None) is want
