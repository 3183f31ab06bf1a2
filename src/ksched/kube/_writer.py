"""The writer task: pod status (PodScheduled condition, nominatedNodeName) and Events.

The scheduling loop only enqueues; one task writes. Status writes are coalesced per pod
(the latest wins); Events go through a bounded queue that drops when full and are
aggregated into series as the events.k8s.io broadcaster does.

# client-go/tools/events/event_broadcaster.go: maxQueuedEvents 1000 (DropIfChannelFull),
# isomorphic key (type, action, reason, reportingController, reportingInstance,
# regarding, related): the 2nd occurrence is written as a series of count 2, later ones
# only counted until the series is refreshed (30 min) or finished (6 min unobserved).
# tools/events/recorder.go: name "<regarding>.<unix nanos hex>", reportingInstance
# "<controller>-<hostname>". k8s.io/api/events/v1 validation: note at most 1 kB.
# pkg/scheduler/schedule_one.go updatePod: write only when the condition or the
# nomination changes.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import attrs

from ..api import Pod
from ._client import ApiError, KubeClient

__all__ = ["EVENT_NOTE_LIMIT", "MAX_QUEUED_EVENTS", "Writer"]

log = logging.getLogger("ksched.kube")

MAX_QUEUED_EVENTS = 1000
EVENT_NOTE_LIMIT = 1024
FINISH_TIME = 6 * 60.0
REFRESH_TIME = 30 * 60.0


def micro_time(when: _dt.datetime | None = None) -> str:
    """metav1.MicroTime in RFC 3339 with microseconds."""
    when = when or _dt.datetime.now(_dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def truncate_note(note: str) -> str:
    """schedule_one.go truncateMessage: keep 1 kB, ending in `` ...``."""
    if len(note) <= EVENT_NOTE_LIMIT:
        return note
    return note[: EVENT_NOTE_LIMIT - 4] + " ..."


def _ref(pod: Pod) -> dict[str, str]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.metadata.uid,
    }


@attrs.define(eq=False)
class _Series:
    event: dict[str, Any]
    count: int
    first_seen: float
    last_seen: float
    last_written: float
    dirty: bool = False


@attrs.define(eq=False)
class _Status:
    pod: Pod
    nominated_node_name: str | None
    condition: Mapping[str, str] | None


@attrs.define(eq=False)
class Writer:
    """Bounded, coalescing writer of pod status and Events; :meth:`serve` runs it."""

    client: KubeClient
    event_client: KubeClient
    reporting_instance_host: str
    current: Callable[[str], tuple[Pod | None, Mapping[str, Any] | None]]
    """Pod key -> the pod as watched and its PodScheduled condition (raw), or None."""
    max_queued_events: int = MAX_QUEUED_EVENTS
    may_write: Callable[[], bool] = lambda: True
    """Leadership: what is queued while not leading is dropped when its turn comes."""
    _statuses: dict[str, _Status] = attrs.field(factory=dict)
    _events: deque[tuple[str, dict[str, Any]]] = attrs.field(factory=deque)
    _series: dict[tuple[Any, ...], _Series] = attrs.field(factory=dict)
    _wake: anyio.Event = attrs.field(factory=anyio.Event)
    dropped_events: int = 0
    written_events: int = 0
    written_statuses: int = 0

    # ---- enqueue (never blocks) --------------------------------------------------------

    def update_pod_status(
        self, pod: Pod, nominated_node_name: str | None, condition: Mapping[str, str] | None
    ) -> None:
        self._statuses[pod.key] = _Status(pod, nominated_node_name, condition)
        self._wake.set()

    def record_event(
        self,
        regarding: Pod,
        related: Pod | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        *,
        controller: str,
    ) -> None:
        now = anyio.current_time()
        instance = f"{controller}-{self.reporting_instance_host}"
        key = (
            event_type,
            action,
            reason,
            controller,
            instance,
            regarding.namespace,
            regarding.name,
            regarding.metadata.uid,
            related.key if related is not None else "",
            related.metadata.uid if related is not None else "",
        )
        series = self._series.get(key)
        if series is not None:
            series.count += 1
            series.last_seen = now
            if series.count > 2:
                series.dirty = True
                return  # counted; written at refresh or finish
            self._enqueue("series", key)
            return
        event: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{regarding.name}.{time.time_ns():x}",
                "namespace": regarding.namespace,
            },
            "eventTime": micro_time(),
            "reportingController": controller,
            "reportingInstance": instance,
            "action": action,
            "reason": reason,
            "regarding": _ref(regarding),
            "note": truncate_note(note),
            "type": event_type,
        }
        if related is not None:
            event["related"] = _ref(related)
        self._series[key] = _Series(event, 1, now, now, now)
        self._enqueue("create", key)

    def _enqueue(self, op: str, key: tuple[Any, ...]) -> None:
        if len(self._events) >= self.max_queued_events:
            self.dropped_events += 1
            return
        self._events.append((op, {"key": key}))
        self._wake.set()

    # ---- the task ----------------------------------------------------------------------

    @property
    def pending(self) -> int:
        return len(self._statuses) + len(self._events)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Write until cancelled; API faults are logged, never raised."""
        task_status.started()
        next_sweep = anyio.current_time() + FINISH_TIME
        while True:
            if not self._statuses and not self._events:
                self._wake = anyio.Event()
                with anyio.move_on_after(max(0.0, next_sweep - anyio.current_time())):
                    await self._wake.wait()
            if anyio.current_time() >= next_sweep:
                await self._sweep()
                next_sweep = anyio.current_time() + FINISH_TIME
            await self.flush_once()

    async def flush_once(self) -> None:
        """Write what is queued now (statuses first)."""
        while self._statuses:
            key = next(iter(self._statuses))
            item = self._statuses.pop(key)
            if not self.may_write():
                continue
            try:
                await self._write_status(item)
            except Exception as exc:
                log.warning("updating pod %s status: %s", key, exc)
        while self._events:
            op, data = self._events.popleft()
            series = self._series.get(data["key"])
            if series is None or not self.may_write():
                continue
            try:
                await self._write_event(series, first=op == "create")
            except Exception as exc:
                log.warning("writing event %s: %s", series.event["metadata"]["name"], exc)

    async def drain(self, grace: float) -> None:
        """Write what is queued, for at most ``grace`` seconds (shutdown)."""
        with anyio.move_on_after(grace):
            await self.flush_once()

    async def _write_status(self, item: _Status) -> None:
        pod, known = self.current(item.pod.key)
        if pod is None or pod.metadata.uid != item.pod.metadata.uid or pod.spec.node_name:
            return  # gone, replaced or bound meanwhile: nothing to report
        status: dict[str, Any] = {}
        if pod.status.nominated_node_name != item.nominated_node_name:
            status["nominatedNodeName"] = item.nominated_node_name
        cond = item.condition
        if cond is not None:
            same = known is not None and all(
                known.get(f) == cond.get(f) for f in ("status", "reason", "message")
            )
            if not same:
                changed = known is None or known.get("status") != cond.get("status")
                status["conditions"] = [
                    {
                        **cond,
                        "lastProbeTime": None,
                        "lastTransitionTime": micro_time().split(".")[0] + "Z"
                        if changed
                        else known.get("lastTransitionTime")
                        if known
                        else None,
                    }
                ]
        if not status:
            return
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
        body = {"metadata": {"uid": pod.metadata.uid}, "status": status}
        try:
            await self.client.request(
                "PATCH", path, body=body, content_type="application/strategic-merge-patch+json"
            )
        except ApiError as exc:
            if exc.status not in (404, 409):
                raise
        self.written_statuses += 1

    async def _write_event(self, series: _Series, *, first: bool) -> None:
        event = series.event
        ns, name = event["metadata"]["namespace"], event["metadata"]["name"]
        path = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
        if not first and series.count > 1:
            patch = {
                "series": {
                    "count": series.count,
                    "lastObservedTime": micro_time(),
                }
            }
            try:
                await self.event_client.request(
                    "PATCH",
                    f"{path}/{name}",
                    body=patch,
                    content_type="application/merge-patch+json",
                )
                self.written_events += 1
                series.last_written = anyio.current_time()
                series.dirty = False
                return
            except ApiError as exc:
                if exc.status != 404:
                    raise
            event = {**event, "series": patch["series"]}
        try:
            await self.event_client.request("POST", path, body=event)
        except ApiError as exc:
            if exc.status != 409:
                raise
        self.written_events += 1
        series.last_written = anyio.current_time()
        series.dirty = False

    async def _sweep(self) -> None:
        """Finish series unobserved for 6 min (final count), refresh 30-min-old ones."""
        now = anyio.current_time()
        for key, series in list(self._series.items()):
            if now - series.last_seen >= FINISH_TIME:
                if series.dirty:
                    self._events.append(("series", {"key": key}))
                    await self.flush_once()
                self._series.pop(key, None)
            elif series.count > 1 and now - series.last_written >= REFRESH_TIME:
                self._events.append(("series", {"key": key}))
