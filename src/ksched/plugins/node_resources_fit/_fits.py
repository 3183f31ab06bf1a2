"""The pod's request and the Fits verdict.

# pkg/scheduler/framework/plugins/noderesources/fit.go (computePodResourceRequest,
# fitsRequest)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from ...api import Pod, pod_requests
from ...framework import NodeInfo
from ._constants import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
)
from ._names import (
    is_extended_resource_name,
    is_scalar_resource_name,
)

# ---- the pod's request and the Fits verdict ----------------------------------------------


@attrs.frozen(slots=True)
class PodResourceRequest:
    """What a pod asks of a node: the largest need in each dimension (upstream preFilterState).

    ``scalars`` keeps every scalar resource the pod names, zero amounts included.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalars: tuple[tuple[str, int], ...] = ()

    def clone(self) -> PodResourceRequest:
        return self


def compute_pod_resource_request(pod: Pod) -> PodResourceRequest:
    """The pod's effective requests (app containers summed, init containers by maximum,
    sidecars and overhead added), as the Fit filter counts them."""
    reqs = pod_requests(pod)
    return PodResourceRequest(
        milli_cpu=reqs.get(CPU, 0),
        memory=reqs.get(MEMORY, 0),
        ephemeral_storage=reqs.get(EPHEMERAL_STORAGE, 0),
        scalars=tuple((n, q) for n, q in reqs.items() if is_scalar_resource_name(n)),
    )


@attrs.frozen(slots=True)
class InsufficientResource:
    """One resource the node cannot give the pod.

    ``unresolvable``: the request exceeds the node's whole allocatable, so evicting pods
    (preemption) cannot help.
    """

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def is_ignored(
    name: str, ignored_resources: frozenset[str], ignored_groups: frozenset[str]
) -> bool:
    if not is_extended_resource_name(name):
        return False
    return name in ignored_resources or name.split("/", 1)[0] in ignored_groups


def checked_scalars(
    request: PodResourceRequest, ignored_resources: frozenset[str], ignored_groups: frozenset[str]
) -> tuple[tuple[str, int], ...]:
    """The scalar requests the filter must check: non-zero and not ignored by the args."""
    return tuple(
        (name, qty)
        for name, qty in request.scalars
        if qty != 0 and not is_ignored(name, ignored_resources, ignored_groups)
    )


def insufficient(
    request: PodResourceRequest,
    scalars: Sequence[tuple[str, int]],
    node_info: NodeInfo,
) -> list[InsufficientResource] | None:
    """Every resource the node lacks for ``request`` (None when the pod fits)."""
    alloc = node_info.allocatable
    used = node_info.requested
    out: list[InsufficientResource] | None = None
    num_pods = len(node_info.pods)
    if num_pods + 1 > alloc.allowed_pod_number:
        out = [
            InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, num_pods, alloc.allowed_pod_number)
        ]
    cpu = request.milli_cpu
    if cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu:
        out = out or []
        out.append(
            InsufficientResource(
                CPU,
                REASON_INSUFFICIENT_CPU,
                cpu,
                used.milli_cpu,
                alloc.milli_cpu,
                unresolvable=cpu > alloc.milli_cpu,
            )
        )
    memory = request.memory
    if memory > 0 and memory > alloc.memory - used.memory:
        out = out or []
        out.append(
            InsufficientResource(
                MEMORY,
                REASON_INSUFFICIENT_MEMORY,
                memory,
                used.memory,
                alloc.memory,
                unresolvable=memory > alloc.memory,
            )
        )
    storage = request.ephemeral_storage
    if storage > 0 and storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out = out or []
        out.append(
            InsufficientResource(
                EPHEMERAL_STORAGE,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
                storage,
                used.ephemeral_storage,
                alloc.ephemeral_storage,
                unresolvable=storage > alloc.ephemeral_storage,
            )
        )
    if scalars:
        alloc_scalar = alloc.scalar
        used_scalar = used.scalar
        for name, qty in scalars:
            capacity = alloc_scalar.get(name, 0)
            in_use = used_scalar.get(name, 0)
            if qty > capacity - in_use:
                out = out or []
                out.append(
                    InsufficientResource(
                        name,
                        f"Insufficient {name}",
                        qty,
                        in_use,
                        capacity,
                        unresolvable=qty > capacity,
                    )
                )
    return out


def fits_request(
    request: PodResourceRequest,
    node_info: NodeInfo,
    ignored_resources: Iterable[str] = (),
    ignored_resource_groups: Iterable[str] = (),
) -> list[InsufficientResource]:
    """Every resource ``node_info`` lacks for ``request`` (empty: it fits). Upstream fitsRequest."""
    scalars = checked_scalars(
        request, frozenset(ignored_resources), frozenset(ignored_resource_groups)
    )
    return insufficient(request, scalars, node_info) or []


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Upstream ``Fits``: what ``node_info`` lacks to host ``pod`` (empty: it fits).

    Ignores no resource, as upstream's exported helper (used by preemption and others).
    """
    return fits_request(compute_pod_resource_request(pod), node_info)
