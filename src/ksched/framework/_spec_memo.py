"""What a plugin works out from a pod's spec alone, kept for the pods sharing that spec.

The pods of one workload share one parsed ``PodSpec`` object (a template's pods, equal
manifests read once), so PreFilter and PreScore need not work out the same requests,
images or signature fragments pod after pod: the value is kept by the spec's identity.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from ..api import Pod, PodSpec

__all__ = ["SpecMemo"]

T = TypeVar("T")

_LIMIT = 64
"""Specs kept; past it the memo starts over (a workload has few shapes)."""


class SpecMemo(Generic[T]):
    """``make(pod)`` per pod spec, for a ``make`` that reads nothing but ``pod.spec`` and
    returns a value nobody changes. Each entry keeps its spec alive, so the identity the
    entry is filed under cannot be taken by another spec."""

    __slots__ = ("_entries", "_make")

    def __init__(self, make: Callable[[Pod], T]) -> None:
        self._make = make
        self._entries: dict[int, tuple[PodSpec, T]] = {}

    def __call__(self, pod: Pod) -> T:
        spec = pod.spec
        entry = self._entries.get(id(spec))
        if entry is not None and entry[0] is spec:
            return entry[1]
        value = self._make(pod)
        if len(self._entries) >= _LIMIT:
            self._entries.clear()
        self._entries[id(spec)] = (spec, value)
        return value
