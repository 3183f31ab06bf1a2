"""``ksched record``: a real cluster written as a trace (docs/trace-format.md).

The same reflectors as ``ksched run`` (one list-and-watch per kind the plugins read,
client-go's relist on 410 and backoff on errors) feed a recorder that keeps the last
written form of every object. Initial lists become ``init`` records; afterwards a change
is written only when the stripped form changed (a status heartbeat is no change), a
pod's ``nodeName`` appearing is a ``bind`` record, and a relist after an expired watch
or a restarted API server writes exactly the difference (client-go's DeltaFIFO.Replace:
the reflector reports changed and vanished objects only). ``Scheduled`` Events
(core/v1 view of events.k8s.io, ``reason=Scheduled``) name the controller that bound
each pod. Writes never touch the cluster: the RBAC role is read-only
(examples/kube/record-rbac.yaml).
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import attrs
import httpx

from ..api import ObjectMeta
from ..cluster import object_key
from ..trace import Anonymizer, Op, record_line, strip_object
from ._client import ApiError, KubeClient
from ._reflector import RESOURCES, Reflector, Resource

__all__ = ["RECORDED_RESOURCES", "SCHEDULED_EVENTS", "Recorder"]

log = logging.getLogger("ksched.kube")

SCHEDULED_EVENTS = Resource(
    kind="Event", group="", version="v1", plural="events", field_selector="reason=Scheduled"
)
RECORDED_RESOURCES = RESOURCES
"""Every kind ``ksched run`` reads; a group the server does not serve is skipped."""

_INIT_ORDER = (
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "DeviceClass",
    "ResourceSlice",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Node",
)
"""Kinds written first in the initial state (what pods refer to); the rest follow."""


def _api_kind(resource: Resource) -> str:
    """The ``kind`` the API server writes (the Workload API's PodGroup is stored apart)."""
    return "PodGroup" if resource.kind == "SchedulingPodGroup" else resource.kind


@attrs.frozen
class _EventRef:
    """What the reflector needs of a Scheduled Event: its key."""

    metadata: ObjectMeta


@attrs.define(eq=False)
class _EventReflector(Reflector):
    """A reflector of Events: no object model, the raw Event goes to the recorder."""

    def _convert(self, raw: Mapping[str, Any]) -> Any | None:
        meta = raw.get("metadata") or {}
        name, namespace = meta.get("name"), meta.get("namespace")
        if not isinstance(name, str) or not isinstance(namespace, str):
            return None
        return _EventRef(ObjectMeta(name=name, namespace=namespace))


@attrs.define(eq=False)
class Recorder:
    """Lists and watches the cluster and hands trace records to ``sink`` as lines.

    ``sink`` is called on the event loop and must not block (the CLI buffers the lines
    and writes them from a worker thread).
    """

    client: KubeClient
    sink: Callable[[str], None]
    anonymizer: Anonymizer | None = None
    resources: tuple[Resource, ...] = RECORDED_RESOURCES
    reflectors: dict[str, Reflector] = attrs.field(factory=dict)
    missing_groups: set[str] = attrs.field(factory=set)
    counts: Counter[str] = attrs.field(factory=Counter)
    """Records written, by op."""
    synced: anyio.Event = attrs.field(factory=anyio.Event)
    _api_versions: dict[str, tuple[str, str]] = attrs.field(factory=dict)
    _last: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)
    _scheduled: set[tuple[str, str]] = attrs.field(factory=set)
    _t0: float = 0.0
    _live: bool = False

    def now(self) -> float:
        return anyio.current_time() - self._t0

    # ---- the run ------------------------------------------------------------------------

    async def record(self, stop: anyio.Event, *, duration: float | None = None) -> float:
        """Record until ``stop`` is set or ``duration`` seconds passed; returns the
        trace's length in seconds. ``synced`` is set once the initial state is written."""
        self._t0 = anyio.current_time()
        async with anyio.create_task_group() as tg:
            with anyio.move_on_after(duration if duration is not None else float("inf")):
                if await self._start(tg, stop):
                    self._write_initial()
                    self._live = True
                    self.synced.set()
                    log.info("recording: initial state written (%d objects)", len(self._last))
                    await stop.wait()
            end = self.now()
            self._emit(record_line(end, Op.END), Op.END)
            tg.cancel_scope.cancel()
        return end

    async def _start(self, tg: anyio.abc.TaskGroup, stop: anyio.Event) -> bool:
        """Discover, start the reflectors, wait for their first lists; False if ``stop``
        came first."""
        async with anyio.create_task_group() as race:

            async def stopper() -> None:
                await stop.wait()
                race.cancel_scope.cancel()

            race.start_soon(stopper)
            await self._discover()
            for reflector in self.reflectors.values():
                tg.start_soon(reflector.run)
            events = _EventReflector(self.client, SCHEDULED_EVENTS, self._event, self._no_op)
            tg.start_soon(events.run)
            for reflector in self.reflectors.values():
                await reflector.synced.wait()
            race.cancel_scope.cancel()
        return all(r.synced.is_set() for r in self.reflectors.values()) and not stop.is_set()

    async def _discover(self) -> None:
        """The served group versions (waiting out an unreachable server); a kind is read
        in the first of its versions the server serves."""
        body = await self._until_answered("/apis")
        served = {"v1"}
        for group in body.get("groups") or []:
            for version in group.get("versions") or []:
                served.add(str(version.get("groupVersion")))
        for resource in self.resources:
            if resource.kind in self.reflectors:
                continue
            if resource.group_version not in served:
                self.missing_groups.add(resource.group_version)
                continue
            self.reflectors[resource.kind] = Reflector(
                self.client, resource, self._apply, self._remove
            )
            self._api_versions[resource.kind] = (_api_kind(resource), resource.group_version)
        missing = sorted(g for g in self.missing_groups if not self._served_elsewhere(g))
        if missing:
            log.info("not served by the API server (recorded as none): %s", ", ".join(missing))

    def _served_elsewhere(self, group_version: str) -> bool:
        return all(
            r.kind in self.reflectors for r in self.resources if r.group_version == group_version
        )

    async def _until_answered(self, path: str) -> Any:
        delay = 0.8
        while True:
            try:
                return await self.client.request("GET", path)
            except ApiError as exc:
                if exc.status < 500 and exc.status != 429:
                    raise
                log.warning("API server not ready (%s); retrying", exc)
            except httpx.TransportError as exc:
                log.warning("API server unreachable (%r); retrying", exc)
            await anyio.sleep(delay * (1.0 + random.random()))
            delay = min(delay * 2.0, 30.0)

    # ---- records ------------------------------------------------------------------------

    def _emit(self, line: str, op: Op) -> None:
        self.counts[str(op)] += 1
        self.sink(line)

    def _write_initial(self) -> None:
        rank = {kind: i for i, kind in enumerate(_INIT_ORDER)}
        keys = sorted(self._last, key=lambda k: (rank.get(k[0], len(rank)), k[0] == "Pod", k))
        for key in keys:
            self._emit_object(0.0, Op.INIT, self._last[key])

    def _emit_object(self, t: float, op: Op, stripped: Mapping[str, Any]) -> None:
        shown = self.anonymizer.object(stripped) if self.anonymizer else stripped
        self._emit(record_line(t, op, object=shown), op)

    def _key(self, key: str) -> str:
        return self.anonymizer.key(key) if self.anonymizer else key

    def _name(self, name: str) -> str:
        return self.anonymizer.token(name) if self.anonymizer else name

    def _apply(self, kind: str, obj: Any, raw: Mapping[str, Any]) -> None:
        api_kind, api_version = self._api_versions[kind]
        stripped = strip_object(raw, api_kind, api_version)
        if stripped is None:
            return
        key = object_key(obj)
        prev = self._last.get((kind, key))
        if prev == stripped:
            return
        self._last[(kind, key)] = stripped
        if not self._live:
            return  # the initial state is written once every kind is listed
        t = self.now()
        if prev is not None and _uid(prev) != _uid(stripped):  # replaced while unwatched
            self._emit(record_line(t, Op.DELETE, kind=kind, key=self._key(key)), Op.DELETE)
            prev = None
        if kind == "Pod" and prev is not None and self._bind(t, key, prev, stripped):
            return
        self._emit_object(t, Op.CREATE if prev is None else Op.UPDATE, stripped)

    def _bind(self, t: float, key: str, prev: Mapping[str, Any], new: dict[str, Any]) -> bool:
        """A pod's ``nodeName`` appearing is a bind record (and an update only if more
        changed). Returns whether the change is written."""
        node = new["spec"].get("nodeName")
        if not node or prev["spec"].get("nodeName"):
            return False
        scheduler = str(new["spec"].get("schedulerName") or "default-scheduler")
        line = record_line(
            t, Op.BIND, key=self._key(key), node=self._name(node), scheduler=scheduler
        )
        self._emit(line, Op.BIND)
        bound_prev = {**prev, "spec": {**prev["spec"], "nodeName": node}}
        if bound_prev != new:
            self._emit_object(t, Op.UPDATE, new)
        return True

    def _remove(self, kind: str, key: str) -> None:
        if self._last.pop((kind, key), None) is None or not self._live:
            return
        self._emit(record_line(self.now(), Op.DELETE, kind=kind, key=self._key(key)), Op.DELETE)

    def _event(self, kind: str, obj: Any, raw: Mapping[str, Any]) -> None:
        """A Scheduled Event: which controller reported the binding (once per pod)."""
        if not self._live:
            return  # bindings made before the recording
        involved = raw.get("involvedObject") or raw.get("regarding") or {}
        if involved.get("kind") != "Pod":
            return
        key = f"{involved.get('namespace', '')}/{involved.get('name', '')}"
        uid = str(involved.get("uid") or "")
        if (key, uid) in self._scheduled:
            return
        controller = (
            raw.get("reportingComponent")
            or raw.get("reportingController")
            or (raw.get("source") or {}).get("component")
        )
        message = str(raw.get("message") or raw.get("note") or "")
        node = message.rsplit(" to ", 1)[-1].strip() if " to " in message else ""
        if not controller or not node:
            return
        self._scheduled.add((key, uid))
        line = record_line(
            self.now(),
            Op.SCHEDULED,
            key=self._key(key),
            node=self._name(node),
            controller=str(controller),
        )
        self._emit(line, Op.SCHEDULED)

    def _no_op(self, kind: str, key: str) -> None:
        """An Event deleted (expired): nothing to record."""


def _uid(stripped: Mapping[str, Any]) -> Any:
    return (stripped.get("metadata") or {}).get("uid")
