"""``ksched extender serve``: a profile's plugins, served to other schedulers as an extender.

# pkg/scheduler/extender.go (what the calling scheduler sends and expects),
# staging/src/k8s.io/kube-scheduler/extender/v1/types.go
POST ``{prefix}/filter`` runs the profile's PreFilter and Filter on the nodes sent;
``{prefix}/prioritize`` adds PreScore and Score, each node's weighted total mapped to the
extender range 0..10; ``{prefix}/preempt`` accepts the victims as proposed;
``{prefix}/bind`` runs the profile's Bind plugins on the pod the request names (its
namespace, name and UID): DefaultBinder binds through the server's ``binder`` (the API
server, with ``--kubeconfig``) and without one answers an ``Error``. Nodes come in
full (``Nodes``) or by name (``NodeNames``, for a ``nodeCacheCapable`` caller) from the
nodes earlier requests carried. The server knows the nodes, not the pods running on
them: it judges each node as its plugins see it empty. Bad requests get 400 with
``Error``; a plugin fault is the ``Error`` of that request only.

Beside the verbs the server answers ``GET /healthz``, ``/livez``, ``/readyz`` and
``/metrics`` (its own request metrics, and client-go's ``rest_client_*`` of its binds).
``/readyz`` fails while a request has been running longer than ``stall_seconds``: a
plugin that hangs makes the server not ready instead of silently holding callers.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Protocol

import anyio
import attrs

from .._errors import KschedError
from ..api import Node, Pod, read_object
from ..cluster import InMemoryCluster
from ..config import SchedulerConfig
from ..framework import MAX_NODE_SCORE, Code, CycleState
from ..observability import HealthServer, Request, Response
from ..scheduler import Registry, Scheduler
from ._server_metrics import ExtenderServerMetrics
from ._wire import MAX_EXTENDER_PRIORITY, WireError, field, mapping

__all__ = ["Binder", "ExtenderServer", "ServedCluster"]

VERBS = ("filter", "prioritize", "preempt", "bind")
NO_BINDER = "no cluster to bind pod {key} in: serve the extender with --kubeconfig"
HEALTH_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/metrics"})
STALL_SECONDS = 60.0

log = logging.getLogger("ksched.extender")


def _json(status: int, body: Any) -> Response:
    return Response(status, json.dumps(body).encode(), "application/json")


class Binder(Protocol):
    """Where binds go: ``ksched.kube.KubeCluster`` posts pods/{name}/binding."""

    async def bind(self, pod: Pod, node_name: str) -> None: ...


@attrs.define(eq=False)
class ServedCluster(InMemoryCluster):
    """The nodes requests carried; binds go to ``binder`` (none: an error naming the pod)."""

    binder: Binder | None = None

    async def bind(self, pod: Pod, node_name: str) -> None:
        if self.binder is None:
            raise KschedError(NO_BINDER.format(key=pod.key))
        await self.binder.bind(pod, node_name)


@attrs.define(eq=False)
class ExtenderServer:
    """Serves one profile of ``config`` (its first, or ``profile``) under ``url_prefix``."""

    config: SchedulerConfig
    url_prefix: str = ""
    profile: str | None = None
    registry: Registry | None = None
    cluster: InMemoryCluster = attrs.field(factory=ServedCluster)
    """Nodes from the requests; the Bind plugins bind through it."""
    metrics: ExtenderServerMetrics = attrs.field(factory=ExtenderServerMetrics)
    """The served requests; ``metrics.registry`` is what ``/metrics`` shows."""
    stall_seconds: float = STALL_SECONDS
    """How long one request may run before ``/readyz`` fails."""
    _scheduler: Scheduler | None = None
    _health: HealthServer = attrs.field(init=False)
    _running: dict[int, tuple[str, float]] = attrs.field(init=False, factory=dict)
    _next_request: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        names = [p.scheduler_name for p in self.config.profiles]
        if self.profile is not None and self.profile not in names:
            raise KschedError(f"--profile {self.profile}: no such profile (have {names})")
        self.profile = self.profile or names[0]
        self._scheduler = Scheduler(self.config, self.cluster, registry=self.registry)
        self.url_prefix = "/" + self.url_prefix.strip("/") if self.url_prefix.strip("/") else ""
        self._health = HealthServer(
            live={"ping": lambda: None},
            ready={"requests": self._progress_check},
            registry=self.metrics.registry,
        )

    def _progress_check(self) -> str | None:
        """Failed while a request has run longer than ``stall_seconds``."""
        if not self._running:
            return None
        verb, started = min(self._running.values(), key=lambda entry: entry[1])
        running = anyio.current_time() - started
        if running <= self.stall_seconds:
            return None
        return f"a {verb} request has been running for {running:.0f}s"

    def verb_path(self, verb: str) -> str:
        """The path a verb is served at (``{prefix}/{verb}``)."""
        return f"{self.url_prefix}/{verb}"

    @property
    def scheduler(self) -> Scheduler:
        assert self._scheduler is not None
        return self._scheduler

    async def handle(self, request: Request) -> Response:
        """The HTTP handler: the verbs under the prefix, the health endpoints and
        ``/metrics``."""
        path = request.path.rstrip("/") or "/"
        if path in HEALTH_PATHS and request.method in ("GET", "HEAD"):
            return self._health.answer(path, request.headers.get("accept", ""))
        verb = request.path[len(self.url_prefix) :].strip("/")
        if not request.path.startswith(self.url_prefix) or verb not in VERBS:
            self.metrics.served("other", 404, None)
            return Response.text("not found\n", 404)
        if request.method != "POST":
            self.metrics.served(verb, 405, None)
            return Response.text("method not allowed\n", 405)
        key, self._next_request = self._next_request, self._next_request + 1
        started = anyio.current_time()
        self._running[key] = (verb, started)
        status = 500
        try:
            response = await self._answer(verb, request)
            status = response.status
            return response
        finally:
            del self._running[key]
            self.metrics.served(verb, status, anyio.current_time() - started)

    async def _answer(self, verb: str, request: Request) -> Response:
        try:
            args = mapping(json.loads(request.body), "request")
        except (ValueError, WireError) as exc:
            return _json(400, {"Error": f"malformed request: {exc}"})
        try:
            if verb == "preempt":
                return _json(200, self._preempt(args))
            if verb == "bind":
                pod, node_name = self._binding(args)
                return _json(200, await self._bind(pod, node_name))
            pod = self._pod(args)
            names = self._nodes(args)
        except (WireError, KschedError, ValueError, KeyError, TypeError) as exc:
            return _json(400, {"Error": str(exc)})
        if verb == "filter":
            return _json(200, await self._filter(pod, names, args))
        return _json(200, await self._prioritize(pod, names))

    # ---- request parts --------------------------------------------------------------------

    def _pod(self, args: Mapping[str, Any]) -> Pod:
        raw = field(args, "Pod")
        if raw is None:
            raise WireError("Pod: required")
        raw = dict(mapping(raw, "Pod"))
        raw.setdefault("apiVersion", "v1")
        raw.setdefault("kind", "Pod")
        pod = read_object(raw)
        if not isinstance(pod, Pod):
            raise WireError("Pod: not a pod")
        spec = attrs.evolve(pod.spec, scheduler_name=self.profile or pod.spec.scheduler_name)
        return attrs.evolve(pod, spec=spec)

    def _binding(self, args: Mapping[str, Any]) -> tuple[Pod, str]:
        """ExtenderBindingArgs: the pod (namespace, name, UID) and the node."""
        values = {}
        for key in ("PodName", "PodNamespace", "PodUID", "Node"):
            value = field(args, key)
            if not isinstance(value, str) or (not value and key != "PodUID"):
                raise WireError(f"{key}: required, a string")
            values[key] = value
        raw = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": values["PodName"],
                "namespace": values["PodNamespace"],
                "uid": values["PodUID"],
            },
            "spec": {"schedulerName": self.profile},
        }
        pod = read_object(raw)
        assert isinstance(pod, Pod)
        return pod, values["Node"]

    def _nodes(self, args: Mapping[str, Any]) -> list[str]:
        """The request's node names; full nodes are kept for later NodeNames requests."""
        listed = field(args, "Nodes")
        if listed is not None:
            names = []
            for i, raw in enumerate(field(mapping(listed, "Nodes"), "items") or ()):
                raw = dict(mapping(raw, f"Nodes.items[{i}]"))
                raw.setdefault("apiVersion", "v1")
                raw.setdefault("kind", "Node")
                node = read_object(raw)
                if not isinstance(node, Node):
                    raise WireError(f"Nodes.items[{i}]: not a node")
                self.cluster.apply(node)
                names.append(node.name)
            return names
        names = [str(n) for n in field(args, "NodeNames") or ()]
        unknown = [n for n in names if self.cluster.get_node(n) is None]
        if unknown:
            raise WireError(f"NodeNames: unknown node(s) {', '.join(unknown)}")
        return names

    # ---- verbs ----------------------------------------------------------------------------

    async def _filter(self, pod: Pod, names: list[str], args: Mapping[str, Any]) -> dict[str, Any]:
        result = await self.scheduler.evaluate(pod, names)
        if result.error is not None:
            return {"Error": result.error.message}
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        feasible = set(result.feasible)
        for name in names:
            if name in feasible:
                continue
            status = result.statuses.get(name)
            bucket = unresolvable if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE else failed
            bucket[name] = status.message
        kept = [n for n in names if n in feasible]
        out: dict[str, Any] = {
            "FailedNodes": failed,
            "FailedAndUnresolvableNodes": unresolvable,
            "Error": "",
        }
        if field(args, "NodeNames") is not None and field(args, "Nodes") is None:
            out["NodeNames"], out["Nodes"] = kept, None
        else:
            items = [
                item
                for item in field(mapping(field(args, "Nodes"), "Nodes"), "items") or ()
                if item.get("metadata", {}).get("name") in feasible
            ]
            out["Nodes"], out["NodeNames"] = {"items": items}, None
        return out

    async def _prioritize(self, pod: Pod, names: list[str]) -> list[dict[str, Any]]:
        result = await self.scheduler.evaluate(pod, names, score=True)
        top = result.max_total or MAX_NODE_SCORE
        return [
            {"Host": name, "Score": result.totals.get(name, 0) * MAX_EXTENDER_PRIORITY // top}
            for name in names
        ]

    async def _bind(self, pod: Pod, node_name: str) -> dict[str, Any]:
        """ExtenderBindingResult: the Bind plugins' verdict, ``Error`` empty on success."""
        framework = self.scheduler.frameworks[self.profile or ""]
        status = await framework.run_bind(CycleState(), pod, node_name)
        if status.code is Code.SKIP:
            return {"Error": f"pod {pod.key}: no bind plugin bound the pod"}
        if not status.is_success:
            log.info(
                "bind failed",
                extra={"kv": {"pod": pod.key, "node": node_name, "err": status.message}},
            )
            return {"Error": status.message}
        log.info(
            "Successfully bound pod to node", extra={"kv": {"pod": pod.key, "node": node_name}}
        )
        return {"Error": ""}

    @staticmethod
    def _preempt(args: Mapping[str, Any]) -> dict[str, Any]:
        """Every proposed node and its victims stand (as meta victims: UIDs)."""
        meta = field(args, "NodeNameToMetaVictims")
        if meta is not None:
            return {"NodeNameToMetaVictims": meta}
        out: dict[str, Any] = {}
        for node, victims in (field(args, "NodeNameToVictims") or {}).items():
            pods = [
                {"UID": field(mapping(p, "Pod"), "metadata", {}).get("uid", "")}
                for p in field(mapping(victims, "Victims"), "Pods") or ()
            ]
            out[node] = {"Pods": pods, "NumPDBViolations": field(victims, "NumPDBViolations", 0)}
        return {"NodeNameToMetaVictims": out}
