"""A pod's effective resource requests.

# component-helpers resource/helpers.go PodRequests (containers summed, init containers
# by maximum, restartable sidecars added cumulatively, pod overhead added);
# pkg/scheduler/util NonZero defaults: 100m cpu, 200Mi memory for a container that asks none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._model import Container, Pod, PodSpec

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "pod_requests",
]

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, 0) + amount


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > into.get(name, 0):
            into[name] = amount


def _container_requests(container: Container, non_zero: bool) -> Mapping[str, int]:
    if not non_zero:
        return container.requests
    reqs = dict(container.requests)
    if "cpu" not in reqs:
        reqs["cpu"] = DEFAULT_MILLI_CPU_REQUEST
    if "memory" not in reqs:
        reqs["memory"] = DEFAULT_MEMORY_REQUEST
    return reqs


def _sum(containers: Iterable[Container], non_zero: bool) -> dict[str, int]:
    total: dict[str, int] = {}
    for container in containers:
        _add(total, _container_requests(container, non_zero))
    return total


_MEMO_LIMIT = 256
_memo: dict[tuple[int, int, int, bool], tuple[PodSpec, dict[str, int]]] = {}
"""The last specs' requests, by the identity of the parts they are read from (the entry
keeps one such spec alive, so those parts stay the ones the key names)."""


def pod_requests(pod: Pod, *, non_zero: bool = False) -> dict[str, int]:
    """The requests the scheduler counts for ``pod`` (cpu in millicores).

    With ``non_zero``, a container that requests no cpu (memory) counts 100m (200Mi),
    as the scoring plugins do.
    """
    # A pod's cycle asks several plugins, each asking for the same requests; the
    # assumed and the bound copy of the pod share the containers with it.
    spec = pod.spec
    slot = (id(spec.containers), id(spec.init_containers), id(spec.overhead), non_zero)
    kept = _memo.get(slot)
    if kept is not None:
        seen = kept[0]
        if (
            seen.containers is spec.containers
            and seen.init_containers is spec.init_containers
            and seen.overhead is spec.overhead
        ):
            return dict(kept[1])
    reqs = _requests(spec, non_zero)
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
    _memo[slot] = (spec, reqs)
    return dict(reqs)


def _requests(spec: PodSpec, non_zero: bool) -> dict[str, int]:
    reqs = _sum(spec.containers, non_zero)
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for container in spec.init_containers:
        creqs = _container_requests(container, non_zero)
        if container.restart_policy == "Always":
            _add(reqs, creqs)
            _add(sidecars, creqs)
            step: Mapping[str, int] = sidecars
        else:
            tmp = dict(creqs)
            _add(tmp, sidecars)
            step = tmp
        _max(init_max, step)
    _max(reqs, init_max)
    _add(reqs, spec.overhead)
    return reqs
