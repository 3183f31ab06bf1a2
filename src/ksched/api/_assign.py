"""A pod placed on a node: a copy that shares every value but ``spec.nodeName``.

The scheduling cycle assumes each pod on its node and the in-memory store then binds the
same pod, so this copy is on the hot path: made without ``attrs.evolve``'s generic
re-construction (a spec copier written out once for PodSpec's fields), and recognised by
identity when the binding writes it back.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import attrs

from ._model import Pod, PodSpec

__all__ = ["assigned", "is_assigned_copy"]

_SPEC_FIELDS = tuple(f.name for f in attrs.fields(PodSpec) if f.name != "node_name")
_spec_values = operator.attrgetter(*_SPEC_FIELDS)


def _spec_copier() -> Callable[[PodSpec, str], PodSpec]:
    """``copy(spec, node_name)``: one slot write per field, unrolled (no getattr loop)."""
    names = (*_SPEC_FIELDS, "node_name")
    namespace: dict[str, Any] = {"new": object.__new__, "PodSpec": PodSpec}
    for i, name in enumerate(names):
        namespace[f"put{i}"] = getattr(PodSpec, name).__set__  # the slot's own setter
    body = "".join(f"    put{i}(c, spec.{name})\n" for i, name in enumerate(_SPEC_FIELDS))
    source = (
        "def copy(spec, node_name):\n"
        "    c = new(PodSpec)\n"
        f"{body}"
        f"    put{len(_SPEC_FIELDS)}(c, node_name)\n"
        "    return c\n"
    )
    exec(source, namespace)  # names come from attrs.fields(PodSpec) only
    copy: Callable[[PodSpec, str], PodSpec] = namespace["copy"]
    return copy


_copy_spec = _spec_copier()


def assigned(pod: Pod, node_name: str) -> Pod:
    """``pod`` with ``spec.nodeName`` set to ``node_name``, every other field shared."""
    return Pod(metadata=pod.metadata, spec=_copy_spec(pod.spec, node_name), status=pod.status)


def is_assigned_copy(candidate: Pod, pod: Pod) -> bool:
    """Whether ``candidate`` is ``pod`` with only ``spec.nodeName`` set: its metadata,
    status and every other spec field the very same objects (as ``assigned`` makes)."""
    if candidate.metadata is not pod.metadata or candidate.status is not pod.status:
        return False
    return all(map(operator.is_, _spec_values(candidate.spec), _spec_values(pod.spec)))
