"""The updateAny op: replace existing objects with a rendered template, at a pace.

# test/integration/scheduler_perf/update.go updateAny (isValid, patchParams, run, update)
Each of ``count`` objects is rendered with ``.Index`` and ``.Count`` and replaces the object
of the same kind and name (an Update followed by an UpdateStatus upstream). The object must
exist. ``namespace`` must be set for namespaced kinds and unset for cluster-scoped ones.
With ``updatePerSecond`` one object is written per tick (the first after one interval),
else all at once.

What the API server keeps across an update, ksched keeps too: a pod's uid and its node
(a bound pod stays bound), and the status of a pod or node whose template has none. A node
keeps its ``kubernetes.io/hostname`` label, which ksched's createNodes gives every node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..api import KubeObject, Node, Pod
from ..cluster import KINDS, InMemoryCluster, object_key
from ._errors import WorkloadError
from ._pace import Ticker
from ._template import ObjectTemplate
from ._testcase import strings

__all__ = ["UPDATE_ANY_FIELDS", "UpdateAny", "parse_update_any", "update_any"]

UPDATE_ANY_FIELDS = {
    "opcode",
    "namespace",
    "templatePath",
    "count",
    "countParam",
    "updatePerSecond",
    "subresources",
}
HOSTNAME_LABEL = "kubernetes.io/hostname"
SUBRESOURCES = frozenset({"resize", "status"})
"""Subresources an update may name; both write the same object in an embedded cluster."""
CLUSTER_SCOPED = frozenset(
    {"Node", "Namespace", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver"}
    | {"PriorityClass"}
)


@attrs.frozen(kw_only=True)
class UpdateAny:
    """updateAny: the template, how many objects, where, and the pace."""

    index: int
    template: ObjectTemplate
    count: int = 1
    namespace: str = ""
    per_second: int = 0
    subresources: tuple[str, ...] = ()


def parse_update_any(
    op: Mapping[str, Any],
    index: int,
    where: str,
    count: int,
    template: ObjectTemplate | None,
) -> UpdateAny:
    """The updateAny op at ``index`` (count and template already resolved)."""
    if template is None:
        raise WorkloadError(f"{where}: TemplatePath must be set")
    rate = op.get("updatePerSecond", 0)
    if isinstance(rate, bool) or not isinstance(rate, int):
        raise WorkloadError(f"{where}: updatePerSecond: expected an integer, got {rate!r}")
    if rate < 0:
        raise WorkloadError(f"{where}: invalid UpdatePerSecond={rate}; should be non-negative")
    subresources = strings(op.get("subresources"), f"{where}: subresources")
    unknown = sorted(set(subresources) - SUBRESOURCES)
    if unknown:
        raise WorkloadError(f"{where}: subresources: unsupported {unknown} (known: resize, status)")
    return UpdateAny(
        index=index,
        template=template,
        count=count,
        namespace=str(op.get("namespace") or ""),
        per_second=rate,
        subresources=subresources,
    )


def _merged(current: KubeObject, new: KubeObject, has_status: bool) -> KubeObject:
    if isinstance(current, Pod) and isinstance(new, Pod):
        spec = new.spec
        if not spec.node_name and current.spec.node_name:
            spec = attrs.evolve(spec, node_name=current.spec.node_name)
        meta = attrs.evolve(new.metadata, uid=current.metadata.uid)
        status = new.status if has_status else current.status
        return attrs.evolve(new, metadata=meta, spec=spec, status=status)
    if isinstance(current, Node) and isinstance(new, Node):
        # As createNodes does, a node keeps its hostname label.
        labels = {**new.labels, HOSTNAME_LABEL: new.name}
        node = attrs.evolve(new, metadata=attrs.evolve(new.metadata, labels=labels))
        return node if has_status else attrs.evolve(node, status=current.status)
    return new


async def update_any(
    cluster: InMemoryCluster,
    op: UpdateAny,
    env: Callable[[int, int], dict[str, Any]],
    where: str,
) -> None:
    """Replace ``op.count`` objects with the rendered template, at the op's pace.

    Raises:
        WorkloadError: the object does not exist, or its scope and ``namespace`` disagree.
    """
    ticker = Ticker(op.per_second) if op.per_second else None
    for i in range(op.count):
        if ticker is not None:
            await ticker.tick()
        values = env(i, op.count)
        data = op.template.data(values)
        meta = data.get("metadata") or {}
        name = meta.get("name")
        if not name:
            raise WorkloadError(f"{where}: {op.template.path}: metadata.name: required")
        kind = str(data.get("kind") or "")
        if op.namespace and kind in CLUSTER_SCOPED:
            raise WorkloadError(
                f"{where}: namespace {op.namespace!r} set for {op.template.path}, "
                f"but {kind} is cluster-scoped"
            )
        if not op.namespace and kind not in CLUSTER_SCOPED:
            raise WorkloadError(
                f"{where}: namespace not set for {op.template.path}, but {kind} is namespaced"
            )
        new = op.template.build(values, str(name), op.namespace or None)
        key = object_key(new)
        current = cluster.get(KINDS[type(new)], key)
        if current is None:
            raise WorkloadError(f"{where}: failed to update object: {kind} {key!r} not found")
        cluster.apply(_merged(current, new, "status" in data))
