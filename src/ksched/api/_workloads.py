"""Workload controllers' objects: Deployment, DaemonSet, Job, and the pod-template hash.

# pkg/controller/controller_utils.go (ComputeHash) and
# staging/src/k8s.io/apimachinery/pkg/util/rand/rand.go (SafeEncodeString).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from ._model import ObjectMeta, PodTemplate
from ._selectors import LabelSelector

__all__ = ["POD_TEMPLATE_HASH_LABEL", "DaemonSet", "Deployment", "Job", "compute_hash"]

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
"""apps/v1 DefaultDeploymentUniqueLabelKey."""

_SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
"""rand.go's alphabet: no vowels, so no words."""

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def _fnv1a32(data: bytes) -> int:
    value = _FNV32_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each character mapped into the vowel-free alphabet."""
    return "".join(_SAFE_ALPHANUMS[ord(c) % len(_SAFE_ALPHANUMS)] for c in text)


def compute_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of a pod template, as ComputeHash builds it.

    FNV-1a (32 bit) over the template, then the collision count as 8 little-endian
    bytes when set, the decimal sum encoded with SafeEncodeString. Upstream hashes Go's
    dump of the typed, defaulted struct; ksched hashes the template's canonical JSON, so
    the label has upstream's form and stability (same template, same hash; a changed
    template, a new hash) but not the same characters as a real cluster's.
    """
    canonical = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    data = canonical.encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    return safe_encode(str(_fnv1a32(data)))


@attrs.frozen(kw_only=True)
class Deployment:
    """apps/v1 Deployment: a ReplicaSet per template, named ``NAME-HASH``."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    replicas: int = 1
    template: PodTemplate


@attrs.frozen(kw_only=True)
class DaemonSet:
    """apps/v1 DaemonSet: one pod on every node its template may run on."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    template: PodTemplate


@attrs.frozen(kw_only=True)
class Job:
    """batch/v1 Job. ``completions`` None: finished by any one pod (work queue)."""

    metadata: ObjectMeta
    parallelism: int = 1
    completions: int | None = None
    template: PodTemplate
