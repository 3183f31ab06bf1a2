"""A StatefulSet's volumeClaimTemplates: the claims each replica gets, and its volumes.

# pkg/controller/statefulset/stateful_set_utils.go (getPersistentVolumeClaimName,
# getPersistentVolumeClaims, updateStorage)
Each template makes one claim per replica, named ``<template>-<set>-<ordinal>``, in the
set's namespace, labelled with the set's selector labels; the replica's pod gets a volume
of the template's name pointing at it (replacing a template volume of that name). A claim
that already exists is kept as it is, as the controller keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..api import (
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Pod,
    StatefulSet,
    Volume,
    read_object,
    stateful_set_claim_name,
)

__all__ = ["stateful_set_claims", "with_claim_volumes"]


def _template_name(template: Mapping[str, object]) -> str:
    meta = template.get("metadata")
    return str(meta.get("name", "")) if isinstance(meta, Mapping) else ""


def stateful_set_claims(sts: StatefulSet, ordinal: int) -> list[PersistentVolumeClaim]:
    """The claims the controller creates for replica ``ordinal`` of ``sts``."""
    claims: list[PersistentVolumeClaim] = []
    selector = sts.selector.match_labels if sts.selector is not None else {}
    for raw in sts.volume_claim_templates:
        template: Mapping[str, Any] = raw
        name = _template_name(template)
        if not name:
            continue
        meta: dict[str, Any] = dict(template.get("metadata") or {})
        labels = {**(meta.get("labels") or {}), **dict(selector)}
        doc = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                **meta,
                "name": stateful_set_claim_name(name, sts.metadata.name, ordinal),
                "namespace": sts.metadata.namespace,
                "labels": labels,
            },
            "spec": dict(template.get("spec") or {}),
        }
        claim = read_object(doc)
        assert isinstance(claim, PersistentVolumeClaim)
        claims.append(claim)
    return claims


def with_claim_volumes(pod: Pod, sts: StatefulSet, ordinal: int) -> Pod:
    """The replica's pod with one volume per claim template, pointing at its claim."""
    names = [n for n in (_template_name(t) for t in sts.volume_claim_templates) if n]
    if not names:
        return pod
    claimed = [
        Volume(
            name=name,
            kind="persistentVolumeClaim",
            persistent_volume_claim=PersistentVolumeClaimVolumeSource(
                claim_name=stateful_set_claim_name(name, sts.metadata.name, ordinal)
            ),
        )
        for name in names
    ]
    kept = [v for v in pod.spec.volumes if v.name not in names]
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, volumes=(*claimed, *kept)))
