"""The extender wire format: k8s.io/kube-scheduler/extender/v1 as Go's encoding/json writes it.

# staging/src/k8s.io/kube-scheduler/extender/v1/types.go
The structs carry no json tags, so keys are the Go field names (``Pod``, ``NodeNames``,
``FailedNodes``...); Go decodes keys case-insensitively, and so does :func:`field`.
Pods and nodes inside are ordinary Kubernetes JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_EXTENDER_PRIORITY", "WireError", "field"]

MAX_EXTENDER_PRIORITY = 10
"""Extender scores are 0..10; the scheduler scales them to 0..100 (MaxNodeScore)."""


class WireError(ValueError):
    """A message that is not what the protocol says (the text names the field)."""


def field(message: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """``message[name]``, matching the key without regard to case, as Go's decoder."""
    if name in message:
        return message[name]
    lowered = name.lower()
    for key, value in message.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return default


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WireError(f"{what}: expected an object, got {type(value).__name__}")
    return value
