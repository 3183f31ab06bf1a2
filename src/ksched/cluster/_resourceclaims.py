"""The resourceclaim controller's part, for the in-memory cluster.

# pkg/controller/resourceclaim/controller.go: a pod entry with resourceClaimTemplateName
# gets a ResourceClaim made from the template (generateName "<pod>-<entry>-", owned by the
# pod) and its name in ``status.resourceClaimStatuses``; a claim no longer used by a pod
# loses the pod from ``reservedFor``, its allocation once nobody holds it, and is deleted
# with its owning pod.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import attrs

from ..api import (
    ObjectMeta,
    OwnerReference,
    Pod,
    PodResourceClaimStatus,
    ResourceClaim,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)

__all__ = ["generated_claim_name", "make_template_claims", "release_claims"]

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand alphanumerics


class _Store(Protocol):
    def get(self, kind: str, key: str) -> Any | None: ...

    def objects(self, kind: str) -> list[Any]: ...


def generated_claim_name(pod: Pod, entry: str) -> str:
    """``<pod>-<entry>-<5 characters>``, deterministic per pod uid (generateName's shape)."""
    digest = hashlib.sha256(f"{pod.uid}/{entry}".encode()).digest()
    suffix = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])
    return f"{pod.name}-{entry}-{suffix}"


def make_template_claims(store: _Store, pod: Pod) -> tuple[Pod, list[ResourceClaim]]:
    """For a pending pod, the claims its template entries still need (those whose template
    exists), and the pod with their names in its status."""
    if pod.spec.node_name or not pod.spec.resource_claims:
        return pod, []
    done = {s.name for s in pod.status.resource_claim_statuses}
    created: list[ResourceClaim] = []
    statuses = list(pod.status.resource_claim_statuses)
    for entry in pod.spec.resource_claims:
        template_name = entry.resource_claim_template_name
        if template_name is None or entry.name in done:
            continue
        template: ResourceClaimTemplate | None = store.get(
            "ResourceClaimTemplate", f"{pod.namespace}/{template_name}"
        )
        if template is None:
            continue
        name = generated_claim_name(pod, entry.name)
        statuses.append(PodResourceClaimStatus(name=entry.name, resource_claim_name=name))
        if store.get("ResourceClaim", f"{pod.namespace}/{name}") is not None:
            continue  # made before (the pod was replaced without its status): keep it
        created.append(
            ResourceClaim(
                metadata=ObjectMeta(
                    name=name,
                    namespace=pod.namespace,
                    uid=f"{pod.uid}-{entry.name}",
                    labels=dict(template.labels),
                    annotations={"resource.kubernetes.io/pod-claim-name": entry.name},
                    owner_references=(
                        OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True),
                    ),
                ),
                spec=template.spec,
            )
        )
    if len(statuses) == len(pod.status.resource_claim_statuses):
        return pod, []
    status = attrs.evolve(pod.status, resource_claim_statuses=tuple(statuses))
    return attrs.evolve(pod, status=status), created


def release_claims(store: _Store, pod: Pod) -> tuple[list[ResourceClaim], list[str]]:
    """After ``pod`` is gone: claims to update (pod out of ``reservedFor``, deallocated
    when nobody is left; the pod's own claims too, before they go) and keys of the
    claims it owned, to delete."""
    updates: list[ResourceClaim] = []
    deletes: list[str] = []
    for claim in store.objects("ResourceClaim"):
        if claim.namespace != pod.namespace:
            continue
        owner = next((o for o in claim.metadata.owner_references if o.controller), None)
        owned = owner is not None and owner.kind == "Pod" and owner.uid == pod.uid
        if owned:
            deletes.append(claim.key)
        reserved = tuple(r for r in claim.status.reserved_for if r.uid != pod.uid)
        if reserved == claim.status.reserved_for and not (owned and claim.status.allocation):
            continue
        allocation = claim.status.allocation if reserved else None
        status = ResourceClaimStatus(allocation=allocation, reserved_for=reserved)
        updates.append(attrs.evolve(claim, status=status))
    return updates, deletes
