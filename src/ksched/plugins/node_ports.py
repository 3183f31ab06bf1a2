"""NodePorts: the node must have the host ports the pod asks for free.

# pkg/scheduler/framework/plugins/nodeports/node_ports.go; GetHostPorts from
# pkg/scheduler/util/utils.go (app containers and restartable sidecar init containers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from ..api import Pod
from ..framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    SpecMemo,
    Status,
)
from ..framework.batch import (
    HOST_PORTS,
    POD_HOST_PORTS,
    BoolArray,
    Capabilities,
    HostPortInfo,
    NodeTable,
    SignFragment,
    host_ports_signer,
)

__all__ = ["ERR_REASON", "NodePorts", "fits", "host_ports"]

NAME: Final = "NodePorts"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
ALL_IPS: Final = "0.0.0.0"

HostPort = tuple[str, str, int]
"""(host IP, protocol, host port)."""


def _host_ports(pod: Pod) -> tuple[HostPort, ...]:
    sidecars = (c for c in pod.spec.init_containers if c.restart_policy == "Always")
    return tuple(
        (p.host_ip, p.protocol, p.host_port)
        for containers in (sidecars, pod.spec.containers)
        for c in containers
        for p in c.ports
        if p.host_port > 0
    )


host_ports: Callable[[Pod], tuple[HostPort, ...]] = SpecMemo(_host_ports)
"""The host ports ``pod`` binds: sidecar (restartPolicy Always) init containers first,
then app containers; ports without a host port are left out (kept per pod spec)."""


def _fits_ports(wanted: Sequence[HostPort], in_use: HostPortInfo) -> bool:
    return not any(in_use.conflicts(ip, protocol, port) for ip, protocol, port in wanted)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether none of ``pod``'s host ports conflicts with those used on the node."""
    return _fits_ports(host_ports(pod), node_info.used_ports)


class _PreFilterState(tuple[HostPort, ...]):
    """The pod's host ports; unaffected by pods added or removed, so never copied."""

    __slots__ = ()

    def clone(self) -> _PreFilterState:
        return self


class NodePorts:
    """Rejects nodes where a host port the pod wants is taken (0.0.0.0 clashes with all)."""

    name = NAME
    capabilities = Capabilities(node_local_filter=True, pod_fields=(POD_HOST_PORTS,))

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodePorts:
        return cls()

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((HOST_PORTS, host_ports_signer(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        ports = host_ports(pod)
        if not ports:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = state.get(PRE_FILTER_STATE_KEY)
        if wanted is None:
            return Status(
                Code.ERROR, (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',)
            )
        if _fits_ports(wanted, node_info.used_ports):
            return None
        return Status(Code.UNSCHEDULABLE, (ERR_REASON,))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        wanted = state.get(PRE_FILTER_STATE_KEY)
        if wanted is None:
            return None  # the per-node method reports the missing state
        # A wanted port conflicts only on rows using its (protocol, port) on some ip: on
        # all of them when it binds every ip, else where its ip or 0.0.0.0 holds it.
        mask: BoolArray = np.ones(len(table), dtype=np.bool_)
        infos = table.infos
        for ip, protocol, port in wanted:
            in_use = table.port_in_use(protocol, port)
            if in_use is None:
                continue
            if not ip or ip == ALL_IPS:
                mask &= ~in_use
                continue
            for row in np.flatnonzero(in_use & mask).tolist():
                mask[row] = not infos[row].used_ports.conflicts(ip, protocol, port)
        return mask

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Container ports are immutable: only a deletion can free one.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            # A new node always has its ports free: no hint needed.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue only when the deleted pod was placed and held a port ``pod`` wants."""
        if not isinstance(old, Pod):
            return QueueingHint.QUEUE
        if not old.spec.node_name and not old.status.nominated_node_name:
            return QueueingHint.SKIP
        released = host_ports(old)
        if not released:
            return QueueingHint.SKIP
        in_use = HostPortInfo()
        for ip, protocol, port in released:
            in_use.add(ip, protocol, port)
        if _fits_ports(host_ports(pod), in_use):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
