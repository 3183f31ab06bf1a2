"""DynamicResourceBinding: attach a cluster-level resource to the chosen node at PreBind.

Some resources belong to the cluster, not to a node: a network-attached FPGA, a license,
a volume that can be attached to any one node. A pod asks for one with the annotation
``ksched.example/dynamic-resource: fpga``. Once the scheduling cycle has chosen a node,
PreBind attaches a resource of that class to it from a :class:`ResourcePool` (an ``async
def``: attaching takes ``attachSeconds`` of the event loop's clock). If the attach fails
(the pool is used up), PreBind says Unschedulable: the pod is unreserved, forgotten and
goes back to the queue to be retried with backoff, as a PreBind failure is upstream.
Unreserve releases what the pod holds, so a failure at a later PreBind or Bind plugin
gives the resource back; deleting a bound pod releases it too.

Args: ``capacity`` (resource class -> how many the pool has), ``attachSeconds``,
``annotation``. Embedders who keep the pool themselves use
:meth:`DynamicResourceBinding.with_pool`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import anyio
import attrs

from ksched import Pod
from ksched.framework import Code, CycleState, Handle, PluginFactory, Status, parse_plugin_args

__all__ = ["AttachError", "DynamicResourceBinding", "DynamicResourceBindingArgs", "ResourcePool"]

NAME: Final = "DynamicResourceBinding"
DEFAULT_ANNOTATION: Final = "ksched.example/dynamic-resource"


class AttachError(Exception):
    """The pool cannot attach a resource."""


@attrs.define(eq=False)
class ResourcePool:
    """Cluster-level resources by class, each attached to at most one pod's node at a time."""

    capacity: dict[str, int]
    attachments: dict[str, tuple[str, str]] = attrs.field(factory=dict)
    """Pod uid -> (resource class, node) it holds."""
    log: list[tuple[str, str, str, str]] = attrs.field(factory=list)
    """Every change: (``attach`` | ``release``, resource class, node, pod uid)."""

    def in_use(self, resource_class: str) -> int:
        return sum(1 for cls, _ in self.attachments.values() if cls == resource_class)

    def attach(self, resource_class: str, node_name: str, pod_uid: str) -> None:
        """Attach one ``resource_class`` to ``node_name`` for the pod. Raises AttachError."""
        if pod_uid in self.attachments:
            return
        total = self.capacity.get(resource_class)
        if total is None:
            raise AttachError(f"the pool has no resource class {resource_class!r}")
        if self.in_use(resource_class) >= total:
            raise AttachError(f"all {total} {resource_class} are attached")
        self.attachments[pod_uid] = (resource_class, node_name)
        self.log.append(("attach", resource_class, node_name, pod_uid))

    def release(self, pod_uid: str) -> bool:
        """Detach what the pod holds; whether it held anything (idempotent)."""
        held = self.attachments.pop(pod_uid, None)
        if held is None:
            return False
        self.log.append(("release", *held, pod_uid))
        return True


@attrs.frozen(kw_only=True)
class DynamicResourceBindingArgs:
    capacity: dict[str, int] = attrs.field(factory=dict)
    attach_seconds: float = attrs.field(default=0.0, validator=attrs.validators.ge(0.0))
    annotation: str = DEFAULT_ANNOTATION


class DynamicResourceBinding:
    """Attaches the pod's cluster-level resource at PreBind; releases it at Unreserve."""

    name = NAME

    def __init__(self, args: DynamicResourceBindingArgs, pool: ResourcePool) -> None:
        self.args = args
        self.pool = pool

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DynamicResourceBinding:
        parsed = parse_plugin_args(DynamicResourceBindingArgs, args, plugin=NAME)
        return cls._start(parsed, ResourcePool(dict(parsed.capacity)), handle)

    @classmethod
    def with_pool(cls, pool: ResourcePool) -> PluginFactory:
        """A factory whose plugin uses ``pool`` (its ``capacity`` arg is ignored)."""

        def factory(args: Mapping[str, Any] | None, handle: Handle) -> DynamicResourceBinding:
            parsed = parse_plugin_args(DynamicResourceBindingArgs, args, plugin=NAME)
            return cls._start(parsed, pool, handle)

        return factory

    @classmethod
    def _start(
        cls, args: DynamicResourceBindingArgs, pool: ResourcePool, handle: Handle
    ) -> DynamicResourceBinding:
        plugin = cls(args, pool)
        handle.cluster.subscribe(plugin._on_cluster_change)
        return plugin

    def _on_cluster_change(self, kind: str, old: Any, new: Any) -> None:
        if kind == "Pod" and new is None and old is not None:
            self.pool.release(old.uid)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        # Nothing to hold yet; being a Reserve plugin is what brings Unreserve.
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.pool.release(pod.uid)

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        wanted = pod.metadata.annotations.get(self.args.annotation)
        if wanted is None:
            return None
        if self.args.attach_seconds:
            await anyio.sleep(self.args.attach_seconds)
        try:
            self.pool.attach(wanted, node_name, pod.uid)
        except AttachError as exc:
            return Status(Code.UNSCHEDULABLE, f"cannot attach {wanted} to {node_name}: {exc}")
        return None
