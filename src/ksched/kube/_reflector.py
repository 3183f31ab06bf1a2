"""One list-and-watch loop per kind, feeding a cache that notifies listeners.

# client-go/tools/cache/reflector.go: list (paged), then watch from the list's
# resourceVersion with allowWatchBookmarks and a random timeoutSeconds in
# [5 min, 10 min); resume from the last seen resourceVersion after a closed watch; on
# 410 Gone ("too old resource version") relist; on errors back off 800 ms doubling to
# 30 s, jittered, reset after 2 min without a backoff
# (wait.NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)); watch/streamwatcher.go:
# a watch stream that breaks (EOF, reset, a body that does not decode) just ends that
# watch, and the next one starts at once.
# Relist = DeltaFIFO.Replace: adds, updates, and deletes of keys the list no longer holds.
# pkg/scheduler/scheduler.go newPodInformer: pods in phase Succeeded/Failed are not read.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any

import anyio
import attrs
import httpx

from .._errors import ManifestError
from ..api import validate_and_read
from ..cluster import object_key
from ._client import ApiError, KubeClient, decode_json

__all__ = ["RESOURCES", "Reflector", "Resource"]

log = logging.getLogger("ksched.kube")

MIN_WATCH_TIMEOUT = 300.0
BACKOFF_RESET = 120.0
"""The backoff starts over after this long without one (the backoff manager's reset)."""
PAGE_SIZE = 500
OFF_LOOP_BYTES = 64 * 1024
"""A watch event or list page this large is read (validated, turned into objects) in a
worker thread: a megabyte object costs tens of milliseconds of Python, which would hold
the loop (lease renewal, the scheduling cycle) for all of it; in a thread the loop runs
between the interpreter's switch intervals. Smaller ones cost less than the hop."""


@attrs.frozen(kw_only=True)
class Resource:
    """A kind the scheduler reads, and where the API serves it."""

    kind: str
    group: str
    version: str
    plural: str
    field_selector: str = ""

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/{self.plural}"


RESOURCES: tuple[Resource, ...] = (
    Resource(kind="Node", group="", version="v1", plural="nodes"),
    Resource(
        kind="Pod",
        group="",
        version="v1",
        plural="pods",
        field_selector="status.phase!=Succeeded,status.phase!=Failed",
    ),
    Resource(kind="Namespace", group="", version="v1", plural="namespaces"),
    Resource(kind="Service", group="", version="v1", plural="services"),
    Resource(kind="ReplicationController", group="", version="v1", plural="replicationcontrollers"),
    Resource(
        kind="PriorityClass", group="scheduling.k8s.io", version="v1", plural="priorityclasses"
    ),
    Resource(
        kind="PodDisruptionBudget", group="policy", version="v1", plural="poddisruptionbudgets"
    ),
    Resource(kind="ReplicaSet", group="apps", version="v1", plural="replicasets"),
    Resource(kind="StatefulSet", group="apps", version="v1", plural="statefulsets"),
    Resource(kind="PodGroup", group="scheduling.x-k8s.io", version="v1alpha1", plural="podgroups"),
    # the volume plugins
    Resource(kind="PersistentVolume", group="", version="v1", plural="persistentvolumes"),
    Resource(kind="PersistentVolumeClaim", group="", version="v1", plural="persistentvolumeclaims"),
    Resource(kind="StorageClass", group="storage.k8s.io", version="v1", plural="storageclasses"),
    Resource(kind="CSINode", group="storage.k8s.io", version="v1", plural="csinodes"),
    Resource(kind="CSIDriver", group="storage.k8s.io", version="v1", plural="csidrivers"),
    Resource(
        kind="CSIStorageCapacity",
        group="storage.k8s.io",
        version="v1",
        plural="csistoragecapacities",
    ),
    # DynamicResources (resource.k8s.io/v1, served from Kubernetes 1.34)
    Resource(kind="DeviceClass", group="resource.k8s.io", version="v1", plural="deviceclasses"),
    Resource(kind="ResourceSlice", group="resource.k8s.io", version="v1", plural="resourceslices"),
    Resource(kind="ResourceClaim", group="resource.k8s.io", version="v1", plural="resourceclaims"),
    Resource(
        kind="ResourceClaimTemplate",
        group="resource.k8s.io",
        version="v1",
        plural="resourceclaimtemplates",
    ),
    # the Workload API (KEP-4671), newest version first: a kind is read in the first
    # version the server serves (v1alpha1 has no PodGroup object)
    *(
        Resource(kind="Workload", group="scheduling.k8s.io", version=v, plural="workloads")
        for v in ("v1beta1", "v1alpha3", "v1alpha2", "v1alpha1")
    ),
    *(
        Resource(
            kind="SchedulingPodGroup", group="scheduling.k8s.io", version=v, plural="podgroups"
        )
        for v in ("v1beta1", "v1alpha3", "v1alpha2")
    ),
)
"""Every kind the in-tree plugins read (PodGroup: scheduler-plugins' Coscheduling CRD).
A group the server does not serve is skipped after discovery."""


@attrs.frozen
class _Event:
    """A watch event read: its type, its raw object, and the object read from it
    (for ADDED and MODIFIED; None when it did not read)."""

    type: str
    raw: Mapping[str, Any]
    obj: Any | None


class _Gone(Exception):
    """The resourceVersion to resume from is too old (410): relist."""


Apply = Callable[[str, Any, Mapping[str, Any]], None]
Remove = Callable[[str, str], None]


@attrs.define(eq=False)
class Reflector:
    """ListAndWatch for one resource into the store's ``apply``/``remove`` callbacks.

    ``versions`` maps object key -> resourceVersion of what the store holds, so a relist
    reports only real changes and deletes what vanished while the watch was down.
    """

    client: KubeClient
    resource: Resource
    apply: Apply
    remove: Remove
    synced: anyio.Event = attrs.field(factory=anyio.Event)
    versions: dict[str, str] = attrs.field(factory=dict)
    resource_version: str = ""
    lists: int = 0
    """How many times a full list ran (1 + relists)."""
    initial_backoff: float = 0.8
    max_backoff: float = 30.0
    watch_events: int = -1
    """Events the current watch delivered (-1: none started)."""
    _bad: set[str] = attrs.field(factory=set)

    def _params(self) -> dict[str, str]:
        sel = self.resource.field_selector
        return {"fieldSelector": sel} if sel else {}

    def _convert(self, raw: Mapping[str, Any]) -> Any | None:
        data = dict(raw)
        data.setdefault("kind", self.resource.kind)
        data.setdefault("apiVersion", self.resource.group_version)  # list items have none
        meta = raw.get("metadata") or {}
        label = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        # What the API server should not have accepted is logged and skipped (fields
        # ksched does not know are not errors here: the server may be newer).
        try:
            problems, obj = validate_and_read(data, strict=False, from_json=True)
            if obj is None:
                errors = [p for p in problems if not p.warning]
                raise ManifestError("; ".join(f"{p.path}: {p.body()}" for p in errors[:3]))
            return obj
        except (ManifestError, ValueError) as exc:
            if label not in self._bad:
                self._bad.add(label)
                log.warning("skipping %s %s: %s", self.resource.kind, label, exc)
            return None

    async def list(self) -> None:
        """A full (paged, consistent) list, then Replace into the store."""
        params = self._params()
        params["limit"] = str(PAGE_SIZE)
        seen: dict[str, tuple[str, Any, Mapping[str, Any]]] = {}
        while True:
            body, size = await self.client.request_sized("GET", self.resource.path, params=params)
            items = body.get("items") or []
            if size < OFF_LOOP_BYTES:
                seen.update(self._read_items(items))
            else:
                seen.update(await anyio.to_thread.run_sync(self._read_items, items))
            meta = body.get("metadata") or {}
            token = meta.get("continue")
            if not token:
                break
            params["continue"] = token
        for key in [k for k in self.versions if k not in seen]:
            del self.versions[key]
            self.remove(self.resource.kind, key)
        for key, (rv, obj, raw) in seen.items():
            if self.versions.get(key) != rv:
                self.versions[key] = rv
                self.apply(self.resource.kind, obj, raw)
        self.resource_version = str(meta.get("resourceVersion", ""))
        self.lists += 1
        self.synced.set()

    def _read_items(
        self, items: Sequence[Mapping[str, Any]]
    ) -> dict[str, tuple[str, Any, Mapping[str, Any]]]:
        """A list page's objects by key (what does not read is skipped), with their
        resourceVersion and raw form; touches no state but the skipped-object log."""
        out: dict[str, tuple[str, Any, Mapping[str, Any]]] = {}
        for raw in items:
            obj = self._convert(raw)
            if obj is not None:
                out[object_key(obj)] = (raw["metadata"].get("resourceVersion", ""), obj, raw)
        return out

    def _handle(self, event: Mapping[str, Any]) -> None:
        """Apply one decoded watch event to the store."""
        self._apply_event(self._read_event(event))

    def _read_event(self, event: Mapping[str, Any]) -> _Event:
        """What a watch event says, its object read (the costly part, which touches no
        state: it may run in a worker thread)."""
        kind, raw = event.get("type"), event.get("object") or {}
        obj = self._convert(raw) if kind in ("ADDED", "MODIFIED") else None
        return _Event(str(kind), raw, obj)

    def _read_line(self, line: bytes) -> _Event | None:
        """A watch event from its line: decoded and read; None for a line that is not
        an object (the stream's end, or a proxy's noise)."""
        event = decode_json(line)
        return self._read_event(event) if isinstance(event, Mapping) else None

    def _apply_event(self, event: _Event) -> None:
        kind, raw = event.type, event.raw
        if kind == "ERROR":
            if raw.get("code") == 410 or raw.get("reason") in ("Expired", "Gone"):
                raise _Gone(raw.get("message", "resource version too old"))
            raise ApiError(int(raw.get("code") or 500), str(raw.get("reason")), str(raw))
        rv = str((raw.get("metadata") or {}).get("resourceVersion", ""))
        if kind == "BOOKMARK":
            self.resource_version = rv or self.resource_version
            return
        if kind == "DELETED":
            meta = raw.get("metadata") or {}
            ns, name = meta.get("namespace"), str(meta.get("name", ""))
            key = f"{ns}/{name}" if ns else name
            if self.versions.pop(key, None) is not None:
                self.remove(self.resource.kind, key)
        elif event.obj is not None:
            key = object_key(event.obj)
            self.versions[key] = rv
            self.apply(self.resource.kind, event.obj, raw)
        if rv:
            self.resource_version = rv

    async def watch(self) -> None:
        """One watch request from ``resource_version`` until the server closes it.

        An event of ``OFF_LOOP_BYTES`` or more is decoded and read in a worker thread
        while the loop goes on (events still apply one by one, in order)."""
        timeout = MIN_WATCH_TIMEOUT * (1.0 + random.random())
        params = self._params()
        params.update(
            watch="1",
            allowWatchBookmarks="true",
            resourceVersion=self.resource_version,
            timeoutSeconds=str(int(timeout)),
        )
        lines = self.client.stream_lines(self.resource.path, params, timeout=timeout + 30.0)
        self.watch_events = 0
        async with aclosing(lines) as stream:  # type: ignore[type-var]  # async generator
            async for line in stream:
                if len(line) < OFF_LOOP_BYTES:
                    event = self._read_line(line)
                else:
                    event = await anyio.to_thread.run_sync(self._read_line, line)
                if event is not None:
                    self.watch_events += 1
                    self._apply_event(event)

    async def run(self) -> None:
        """List and watch until cancelled; never raises for API or network faults."""
        backoff, last_backoff = self.initial_backoff, anyio.current_time()
        must_list = True
        while True:
            started, version = anyio.current_time(), self.resource_version
            self.watch_events = -1  # a list, until the watch starts
            try:
                if must_list:
                    await self.list()
                    must_list = False
                    started, version = anyio.current_time(), self.resource_version
                await self.watch()
                lasted = anyio.current_time() - started
                if lasted >= 1.0 or self.resource_version != version:
                    continue
                # reflector.go: a very short watch that delivered nothing is an error.
                log.warning("%s: very short watch (%.2fs)", self.resource.kind, lasted)
            except _Gone as exc:
                log.info("%s: watch expired (%s); relisting", self.resource.kind, exc)
                must_list = True
                continue
            except ApiError as exc:
                if exc.status == 410:
                    must_list = True
                    continue
                log.warning("%s: list/watch failed: %s", self.resource.kind, exc)
            except httpx.TransportError as exc:
                if self._was_open(exc, started):
                    # streamwatcher.go: a watch stream that breaks is a closed watch:
                    # watch again from the last resourceVersion at once.
                    log.info("%s: watch closed: %r", self.resource.kind, exc)
                    continue
                log.warning("%s: list/watch failed: %r", self.resource.kind, exc)
            except Exception as exc:  # a body that is not what the API serves
                log.warning("%s: list/watch failed: %r", self.resource.kind, exc)
            now = anyio.current_time()
            if now - last_backoff > BACKOFF_RESET:
                backoff = self.initial_backoff
            await anyio.sleep(backoff * (1.0 + random.random()))
            backoff, last_backoff = min(backoff * 2.0, self.max_backoff), anyio.current_time()

    def _was_open(self, exc: httpx.TransportError, started: float) -> bool:
        """Whether ``exc`` broke a watch the server had opened (not a connection that
        never opened, nor a list): it delivered events or stayed open for a second."""
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) or self.watch_events < 0:
            return False
        return self.watch_events > 0 or anyio.current_time() - started >= 1.0
