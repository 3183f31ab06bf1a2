"""``ksched record --anonymize``: names and label values replaced, consistently.

Every name (objects, namespaces, nodes, owners, claims, PriorityClasses, StorageClasses,
images) and every label value becomes ``x`` + 12 hex digits of an HMAC-SHA256 under a key
drawn for the recording and never written: the same text always gets the same token, so
a node's ``kubernetes.io/hostname`` still equals its name, a selector still matches the
labels it matched, a PodGroup label still names its PodGroup. What keeps its meaning:

- label, annotation and taint *keys* (topology keys, well-known labels), resource names,
  quantities, scheduler names, operators and effects;
- label values that are integers (``Gt``/``Lt`` compare them), and the values of
  ``kubernetes.io/os``, ``kubernetes.io/arch`` and ``node.kubernetes.io/instance-type``;
- the built-in PriorityClasses ``system-node-critical`` and ``system-cluster-critical``;
- CSI driver names (volume limits are keyed by them in node allocatable).

Annotations are dropped (their values can hold anything).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

__all__ = ["KEPT_LABEL_VALUES", "Anonymizer"]

KEPT_LABEL_VALUES = frozenset(
    {"kubernetes.io/os", "kubernetes.io/arch", "node.kubernetes.io/instance-type"}
)
_KEPT_NAMES = frozenset({"system-node-critical", "system-cluster-critical"})
_NAME_FIELDS = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "nodeName",
        "nominatedNodeName",
        "claimName",
        "volumeName",
        "priorityClassName",
        "storageClassName",
        "image",
        "resourceClaimName",
        "resourceClaimTemplateName",
        "deviceClassName",
        "secretName",
        "serviceName",
    }
)
_NAME_LISTS = frozenset({"namespaces", "names"})
_LABEL_MAPS = frozenset({"labels", "matchLabels", "nodeSelector", "selector"})
_DRIVER_LISTS = frozenset({"drivers"})
"""Lists whose items' ``name`` is a CSI driver's (CSINode)."""


class Anonymizer:
    """Replaces names and label values of stripped objects and of record keys."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        self._tokens: dict[str, str] = {}

    def token(self, text: str) -> str:
        """The token of a name (empty text and the kept names stay as they are)."""
        if not text or text in _KEPT_NAMES:
            return text
        token = self._tokens.get(text)
        if token is None:
            digest = hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()
            token = self._tokens[text] = "x" + digest[:12]
        return token

    def label_value(self, label_key: str, value: str) -> str:
        if label_key in KEPT_LABEL_VALUES or _is_integer(value):
            return value
        return self.token(value)

    def key(self, key: str) -> str:
        """A record key: ``namespace/name`` or ``name``."""
        return "/".join(self.token(part) for part in key.split("/"))

    def object(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """The anonymized copy of a stripped object."""
        kind = manifest.get("kind")
        out = self._walk(manifest, None)
        meta = out.get("metadata")
        if kind == "CSIDriver" and isinstance(meta, dict):
            meta["name"] = (manifest.get("metadata") or {}).get("name", "")
        assert isinstance(out, dict)
        return out

    def _walk(self, value: Any, parent: str | None) -> Any:
        if isinstance(value, Mapping):
            return self._mapping(value, parent)
        if isinstance(value, list):
            return [self._walk(item, parent) for item in value]
        return value

    def _mapping(self, data: Mapping[str, Any], parent: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        label_key = data.get("key") if isinstance(data.get("key"), str) else None
        for field, value in data.items():
            if field == "annotations":
                continue
            if isinstance(value, str):
                out[field] = self._text(field, value, label_key, parent)
            elif field in _LABEL_MAPS and _is_string_map(value):
                out[field] = {k: self.label_value(k, v) for k, v in value.items()}
            elif field == "values" and _is_string_list(value):
                out[field] = [
                    self.label_value(label_key, v) if label_key else self._name(v) for v in value
                ]
            elif field in _NAME_LISTS and _is_string_list(value):
                out[field] = [self.token(v) for v in value]
            else:
                out[field] = self._walk(value, field)
        return out

    def _text(self, field: str, value: str, label_key: str | None, parent: str | None) -> str:
        if field == "value" and label_key is not None:  # a taint's or toleration's value
            return self.label_value(label_key, value)
        if field in _NAME_FIELDS and not (field == "name" and parent in _DRIVER_LISTS):
            return self.token(value)
        return value

    def _name(self, value: str) -> str:
        return value if _is_integer(value) else self.token(value)


def _is_integer(text: str) -> bool:
    return text.lstrip("-").isdigit()


def _is_string_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
