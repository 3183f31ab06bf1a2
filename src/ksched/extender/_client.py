"""Calling extenders: one object per extender, with its config and an HTTP client.

# pkg/scheduler/extender.go (HTTPExtender: Filter, Prioritize, Bind, IsInterested,
# ProcessPreemption, convertToVictims, convertPodUIDToPod, convertToMetaVictims, send),
# schedule_one.go (findNodesThatPassExtenders, prioritizeNodes, bind)
Calls are awaited with the extender's ``httpTimeout``; connections are reused. A filter
error fails the attempt unless the extender is ``ignorable``; prioritize errors are
ignored, as upstream ignores them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import anyio
import attrs
import httpx

from ..api import Node, Pod
from ..config import ExtenderConfig
from ..framework import SharedLister
from ..framework.runtime import MetricsRecorder
from ._json import node_json, pod_json
from ._wire import MAX_EXTENDER_PRIORITY, WireError, field, mapping

__all__ = ["ExtenderClient", "ExtenderError", "FilterResult"]


class ExtenderError(Exception):
    """An extender call failed (transport, timeout, HTTP status, malformed reply, or the
    reply's ``Error``); the message names the extender."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@attrs.frozen
class FilterResult:
    """What an extender's filter said: the nodes that stay, and why the others went."""

    node_names: tuple[str, ...]
    failed: Mapping[str, str]
    failed_and_unresolvable: Mapping[str, str]


def _pod_requests_names(pod: Pod) -> set[str]:
    names: set[str] = set()
    for container in (*pod.spec.containers, *pod.spec.init_containers):
        names.update(container.requests)
        names.update(container.limits)
    return names


@attrs.define(eq=False)
class ExtenderClient:
    """One configured extender (upstream's HTTPExtender)."""

    config: ExtenderConfig
    http: httpx.AsyncClient
    metrics: MetricsRecorder | None = None
    """Where each call's duration and result go (the scheduler's metrics), when kept."""

    @classmethod
    def new(cls, config: ExtenderConfig, http: httpx.AsyncClient | None = None) -> ExtenderClient:
        """A client for ``config``; ``http`` shares a connection pool (else its own)."""
        if http is None:
            verify: Any = not bool(config.tls_config.get("insecure"))
            ca = config.tls_config.get("caFile")
            if ca and verify:
                verify = str(ca)
            http = httpx.AsyncClient(verify=verify)
        return cls(config, http)

    @property
    def name(self) -> str:
        return self.config.url_prefix

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def is_ignorable(self) -> bool:
        """An error or timeout skips this extender instead of failing the attempt."""
        return self.config.ignorable

    @property
    def supports_preemption(self) -> bool:
        """Whether preemption asks this extender to trim its candidates (``preemptVerb``)."""
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """Every pod when it manages no resources; else pods asking for one of them."""
        managed = self.config.managed_resources
        if not managed:
            return True
        wanted = _pod_requests_names(pod)
        return any(r.name in wanted for r in managed)

    def _url(self, verb: str) -> str:
        prefix = self.config.url_prefix.rstrip("/")
        if self.config.enable_https and prefix.startswith("http://"):
            prefix = "https://" + prefix[len("http://") :]
        return f"{prefix}/{verb}"

    async def _send(self, verb: str, body: Mapping[str, Any]) -> Any:
        try:
            response = await self.http.post(
                self._url(verb),
                content=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                timeout=self.config.http_timeout,
            )
        except httpx.TimeoutException:
            raise ExtenderError(
                f"extender {self.name}: {verb}: timed out after {self.config.http_timeout:g}s",
                timed_out=True,
            ) from None
        except httpx.HTTPError as exc:
            raise ExtenderError(f"extender {self.name}: {verb}: {exc}") from None
        if response.status_code != 200:
            raise ExtenderError(
                f"extender {self.name}: {verb}: failed {verb} with extender at URL "
                f"{self._url(verb)}, code {response.status_code}"
            )
        try:
            return json.loads(response.content)
        except ValueError as exc:
            raise ExtenderError(f"extender {self.name}: {verb}: malformed reply: {exc}") from None

    @contextlib.contextmanager
    def _observed(self, verb: str) -> Iterator[None]:
        """Record the call's duration and result (``success``, ``error``, ``timeout``);
        a cancelled call is not recorded."""
        metrics = self.metrics
        if metrics is None:
            yield
            return
        start = anyio.current_time()
        try:
            yield
        except ExtenderError as exc:
            result = "timeout" if exc.timed_out else "error"
            metrics.extender_request(self.name, verb, result, anyio.current_time() - start)
            raise
        metrics.extender_request(self.name, verb, "success", anyio.current_time() - start)

    def _args(self, pod: Pod, raw_pod: Mapping[str, Any], nodes: Sequence[Node]) -> dict[str, Any]:
        if self.config.node_cache_capable:
            return {"Pod": raw_pod, "Nodes": None, "NodeNames": [n.name for n in nodes]}
        return {
            "Pod": raw_pod,
            "Nodes": {"items": [node_json(n) for n in nodes]},
            "NodeNames": None,
        }

    async def _filter(
        self, pod: Pod, raw_pod: Mapping[str, Any], nodes: Sequence[Node]
    ) -> FilterResult:
        reply = await self._send(self.config.filter_verb, self._args(pod, raw_pod, nodes))
        try:
            reply = mapping(reply, "ExtenderFilterResult")
            error = field(reply, "Error") or ""
            if error:
                raise ExtenderError(f"extender {self.name}: filter: {error}")
            if self.config.node_cache_capable:
                names = field(reply, "NodeNames")
                kept = tuple(str(n) for n in (names or ()))
            else:
                listed = field(reply, "Nodes")
                items = field(mapping(listed, "Nodes"), "items") if listed is not None else None
                kept = tuple(
                    str(field(mapping(i, "node"), "metadata")["name"]) for i in items or ()
                )
            failed = dict(field(reply, "FailedNodes") or {})
            unresolvable = dict(field(reply, "FailedAndUnresolvableNodes") or {})
        except (WireError, KeyError, TypeError) as exc:
            raise ExtenderError(f"extender {self.name}: filter: malformed reply: {exc}") from None
        return FilterResult(kept, failed, unresolvable)

    async def _prioritize(
        self, pod: Pod, raw_pod: Mapping[str, Any], nodes: Sequence[Node]
    ) -> dict[str, int]:
        reply = await self._send(self.config.prioritize_verb, self._args(pod, raw_pod, nodes))
        try:
            scores: dict[str, int] = {}
            for entry in reply or ():
                host = str(field(mapping(entry, "HostPriority"), "Host"))
                score = int(field(entry, "Score") or 0)
                scores[host] = min(max(score, 0), MAX_EXTENDER_PRIORITY) * self.config.weight
        except (WireError, TypeError, ValueError) as exc:
            raise ExtenderError(
                f"extender {self.name}: prioritize: malformed reply: {exc}"
            ) from None
        return scores

    async def _process_preemption(
        self,
        pod: Pod,
        victims: Mapping[str, tuple[Sequence[Pod], int]],
        nodes: SharedLister,
    ) -> dict[str, tuple[list[Pod], int]]:
        body: dict[str, Any] = {"Pod": pod_json(pod)}
        if self.config.node_cache_capable:
            body["NodeNameToMetaVictims"] = {
                node: {"Pods": [{"UID": p.uid} for p in pods], "NumPDBViolations": n}
                for node, (pods, n) in victims.items()
            }
        else:
            body["NodeNameToVictims"] = {
                node: {"Pods": [pod_json(p) for p in pods], "NumPDBViolations": n}
                for node, (pods, n) in victims.items()
            }
        reply = await self._send(self.config.preempt_verb, body)
        try:
            meta = field(mapping(reply, "ExtenderPreemptionResult"), "NodeNameToMetaVictims")
            kept: dict[str, tuple[list[Pod], int]] = {}
            by_node = mapping(meta, "NodeNameToMetaVictims") if meta is not None else {}
            for node_name, meta_victims in by_node.items():
                info = nodes.get(node_name)
                if info is None:
                    raise ExtenderError(
                        f"extender {self.name}: preempt: "
                        f'nodeinfo not found for node name "{node_name}"'
                    )
                if meta_victims is None:  # no victims: the caller decides what that means
                    kept[node_name] = ([], 0)
                    continue
                meta_victims = mapping(meta_victims, f"NodeNameToMetaVictims[{node_name}]")
                on_node = {p.pod.uid: p.pod for p in info.pods}
                found: list[Pod] = []
                for meta_pod in field(meta_victims, "Pods") or ():
                    uid = str(field(mapping(meta_pod, "MetaPod"), "UID") or "")
                    victim = on_node.get(uid)
                    if victim is None:
                        # convertPodUIDToPod's words (the MetaPod as Go's %v prints it)
                        raise ExtenderError(
                            f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) "
                            f"on node: {node_name}, but the pod is not found on that node"
                        )
                    found.append(victim)
                kept[node_name] = (found, int(field(meta_victims, "NumPDBViolations") or 0))
        except (WireError, TypeError, ValueError) as exc:
            raise ExtenderError(f"extender {self.name}: preempt: malformed reply: {exc}") from None
        return kept

    async def _bind(self, pod: Pod, node_name: str) -> None:
        body = {
            "PodName": pod.name,
            "PodNamespace": pod.namespace,
            "PodUID": pod.uid,
            "Node": node_name,
        }
        reply = await self._send(self.config.bind_verb, body)
        error = field(reply, "Error") if isinstance(reply, Mapping) else None
        if error:
            raise ExtenderError(f"extender {self.name}: bind: {error}")

    async def filter(
        self, pod: Pod, raw_pod: Mapping[str, Any], nodes: Sequence[Node]
    ) -> FilterResult:
        """The extender's filter over ``nodes``; ExtenderError on any failure."""
        with self._observed("filter"):
            return await self._filter(pod, raw_pod, nodes)

    async def prioritize(
        self, pod: Pod, raw_pod: Mapping[str, Any], nodes: Sequence[Node]
    ) -> dict[str, int]:
        """Node -> the extender's score (0..10) times its weight."""
        with self._observed("prioritize"):
            return await self._prioritize(pod, raw_pod, nodes)

    async def process_preemption(
        self,
        pod: Pod,
        victims: Mapping[str, tuple[Sequence[Pod], int]],
        nodes: SharedLister,
    ) -> dict[str, tuple[list[Pod], int]]:
        """The candidates the extender keeps: node -> (victims, PDB violations).

        A ``nodeCacheCapable`` extender is sent victims by UID (``NodeNameToMetaVictims``),
        the others whole pods (``NodeNameToVictims``); the reply is always by UID and is
        read back against the pods of each node in ``nodes``. ExtenderError when the
        call fails or the reply names a node or pod the snapshot does not have.
        """
        with self._observed("preempt"):
            return await self._process_preemption(pod, victims, nodes)

    async def bind(self, pod: Pod, node_name: str) -> None:
        """Delegate the bind to the extender; ExtenderError when it failed."""
        with self._observed("bind"):
            await self._bind(pod, node_name)

    async def aclose(self) -> None:
        await self.http.aclose()
