"""A pod placed on a node: a copy that shares every value but ``spec.nodeName``.

The scheduling cycle assumes each pod on its node and the in-memory store then binds the
same pod, so this copy is on the hot path: made without ``attrs.evolve``'s generic
re-construction, and recognised by identity when the binding writes it back.
"""

from __future__ import annotations

import attrs

from ._model import Pod, PodSpec

__all__ = ["assigned", "is_assigned_copy"]

_SPEC_FIELDS = tuple(f.name for f in attrs.fields(PodSpec) if f.name != "node_name")


def assigned(pod: Pod, node_name: str) -> Pod:
    """``pod`` with ``spec.nodeName`` set to ``node_name``, every other field shared."""
    spec = pod.spec
    copy = object.__new__(PodSpec)
    put = object.__setattr__
    for name in _SPEC_FIELDS:
        put(copy, name, getattr(spec, name))
    put(copy, "node_name", node_name)
    return attrs.evolve(pod, spec=copy)


def is_assigned_copy(candidate: Pod, pod: Pod) -> bool:
    """Whether ``candidate`` is ``pod`` with only ``spec.nodeName`` set: its metadata,
    status and every other spec field the very same objects (as ``assigned`` makes)."""
    if candidate.metadata is not pod.metadata or candidate.status is not pod.status:
        return False
    a, b = candidate.spec, pod.spec
    return all(getattr(a, name) is getattr(b, name) for name in _SPEC_FIELDS)
