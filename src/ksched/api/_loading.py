"""Loading manifests: multi-document YAML into checked Kubernetes objects.

The one place that turns YAML text into objects: documents are read, ``kind: List`` items
unpacked, and each object checked and read as ``read_manifest`` does.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._errors import ManifestError
from .._yaml import YamlInputError, read_yaml
from ._input_limits import check_document, check_text
from ._manifest import KubeObject
from ._validation import read_manifest

__all__ = ["load_manifests"]


def load_manifests(text: str, *, source: str = "<string>", strict: bool = True) -> list[KubeObject]:
    """Every object in multi-document YAML (``kind: List`` items are unpacked)."""
    check_text(text, source)
    try:
        docs = read_yaml(text, source, strict=strict)
    except YamlInputError as exc:  # a syntax error, a repeated key, an int too long
        raise ManifestError(str(exc)) from None
    out: list[KubeObject] = []
    for doc in docs:
        check_document(doc, source)
        items = (
            doc.get("items") if isinstance(doc, Mapping) and doc.get("kind") == "List" else [doc]
        )
        out.extend(read_manifest(item, strict=strict) for item in items or [])
    return out
