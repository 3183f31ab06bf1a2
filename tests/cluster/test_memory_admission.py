"""What InMemoryCluster does on create as admission would: priority from PriorityClass,
and the default StorageClass for a claim that names none (DefaultStorageClass)."""

from __future__ import annotations

from ksched.api import ObjectMeta, PersistentVolumeClaim, StorageClass
from ksched.cluster import InMemoryCluster

DEFAULT = {"storageclass.kubernetes.io/is-default-class": "true"}


def _class(name: str, created: float, annotations: dict[str, str] | None = None) -> StorageClass:
    meta = ObjectMeta(name=name, annotations=annotations or {}, creation_timestamp=created)
    return StorageClass(metadata=meta, provisioner="p")


def _claim(name: str, storage_class: str | None = None) -> PersistentVolumeClaim:
    meta = ObjectMeta(name=name, namespace="default")
    return PersistentVolumeClaim(metadata=meta, storage_class_name=storage_class)


def _class_of(cluster: InMemoryCluster, name: str) -> str | None:
    """The storage class of the claim default/<name>."""
    claim: PersistentVolumeClaim | None = cluster.get("PersistentVolumeClaim", f"default/{name}")
    assert claim is not None
    return claim.storage_class_name


def test_a_claim_without_a_class_gets_the_newest_default() -> None:
    cluster = InMemoryCluster()
    cluster.apply(_class("old", 1.0, DEFAULT))
    cluster.apply(_class("new", 2.0, DEFAULT))
    cluster.apply(_class("plain", 3.0))
    cluster.apply(_claim("c"))
    assert _class_of(cluster, "c") == "new"


def test_equally_new_defaults_go_by_name_and_beta_annotation_counts() -> None:
    cluster = InMemoryCluster()
    cluster.apply(_class("b", 1.0, DEFAULT))
    cluster.apply(_class("a", 1.0, {"storageclass.beta.kubernetes.io/is-default-class": "true"}))
    cluster.apply(_claim("c"))
    assert _class_of(cluster, "c") == "a"


def test_an_explicit_or_empty_class_and_updates_are_left_alone() -> None:
    cluster = InMemoryCluster()
    cluster.apply(_claim("before"))  # no default class yet
    cluster.apply(_class("std", 1.0, DEFAULT))
    cluster.apply(_claim("empty", ""))
    cluster.apply(_claim("named", "fast"))
    cluster.apply(_claim("before"))  # an update: admission does not run again
    got = {k: _class_of(cluster, k) for k in ("before", "empty", "named")}
    assert got == {"before": None, "empty": "", "named": "fast"}
