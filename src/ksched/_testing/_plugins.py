"""A fake plugin per extension point: each answers as it is told and records its calls.

# pkg/scheduler/testing/framework/fake_plugins.go (FakeFilterPlugin's node -> code map
# and its reason, FakePreFilterPlugin's result and status, FakePermitPlugin's wait...)
Each fake is a plain ``def`` plugin; where ``def`` and ``async def`` run differently (Filter
and Score fan out, Permit, PreBind and Bind decide whether the binding cycle can run
inline) there is an ``Async`` variant that may also wait before it answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Self

import anyio
import attrs

from ..api import Pod
from ..framework import (
    SKIP,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeToStatus,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
    QueuedPodInfo,
    ScoreExtensions,
    Status,
)

__all__ = [
    "ERR_REASON_FAKE",
    "Call",
    "FakeAsyncBind",
    "FakeAsyncFilter",
    "FakeAsyncPermit",
    "FakeAsyncPreBind",
    "FakeAsyncScore",
    "FakeBind",
    "FakeFilter",
    "FakePermit",
    "FakePostBind",
    "FakePostFilter",
    "FakePreBind",
    "FakePreEnqueue",
    "FakePreFilter",
    "FakePreScore",
    "FakeQueueSort",
    "FakeReserve",
    "FakeScore",
]

ERR_REASON_FAKE = "injecting failure for pod {pod}"
"""The reason of a node a :class:`FakeFilter` fails with a bare Code (upstream's)."""

NodeVerdicts = Mapping[str, "Status | Code"] | Callable[[Pod, NodeInfo], "Status | None"]
"""Node name -> its Status (or Code), or a function of the pod and the node."""

PodVerdict = Callable[[Pod], "Status | None"]
NodeScores = Mapping[str, int] | Callable[[Pod, NodeInfo], int]


def _loop_time() -> float | None:
    try:
        return anyio.current_time()
    except RuntimeError:  # called outside an event loop
        return None


@attrs.frozen
class Call:
    """One call a fake plugin received. ``at`` (the event loop's time, None outside a
    loop) is left out of comparisons."""

    plugin: str
    point: str
    """The method called: ``"filter"``, ``"unreserve"``, ``"pre_bind_pre_flight"``..."""
    pod: Pod
    node: str = ""
    """The node's name, for the points that have one."""
    at: float | None = attrs.field(factory=_loop_time, eq=False)


@attrs.define(eq=False)
class _Fake:
    """What every fake has: its name, its calls and, once built by a scheduler, its handle."""

    name: str = "Fake"
    log: list[Call] | None = attrs.field(default=None, kw_only=True)
    """A list shared by several fakes, to see the order of their calls."""
    raises: Exception | None = attrs.field(default=None, kw_only=True)
    """Raised by each call, after recording it (a plugin with a bug)."""
    calls: list[Call] = attrs.field(factory=list, init=False)
    _handle: Handle | None = attrs.field(default=None, init=False, repr=False)

    def new(self, args: object, handle: Handle) -> Self:
        """The plugin factory (``registry={"FakeFilter": fake.new}``): keeps the handle
        and returns this fake."""
        self._handle = handle
        return self

    @property
    def handle(self) -> Handle:
        """The handle :meth:`new` was given (to reach waiting pods, the cluster...)."""
        if self._handle is None:
            raise RuntimeError(f"{self.name}: not built by a scheduler (new() not called)")
        return self._handle

    def calls_at(self, point: str) -> list[Call]:
        """The calls of one method, in order."""
        return [c for c in self.calls if c.point == point]

    def count(self, point: str, pod: str | None = None) -> int:
        """How often ``point`` was called (for the pod of this name or ``namespace/name``)."""
        return sum(
            1
            for c in self.calls
            if c.point == point and (pod is None or pod in (c.pod.name, c.pod.key))
        )

    def _record(self, point: str, pod: Pod, node: str = "") -> None:
        call = Call(self.name, point, pod, node)
        self.calls.append(call)
        if self.log is not None:
            self.log.append(call)
        if self.raises is not None:
            raise self.raises


async def _wait(delay: float, gate: anyio.Event | None) -> None:
    """What the async variants wait for before they answer: ``delay`` seconds on the
    loop's clock (0: one checkpoint), then ``gate`` when given (a test sets it to let
    the calls go on)."""
    await anyio.sleep(delay)
    if gate is not None:
        await gate.wait()


# ---- the queue ----------------------------------------------------------------------


@attrs.define(eq=False)
class FakePreEnqueue(_Fake):
    """A PreEnqueue plugin: answers ``status``, or ``status_for(pod)`` when given."""

    name: str = "FakePreEnqueue"
    status: Status | None = attrs.field(default=None, kw_only=True)
    status_for: PodVerdict | None = attrs.field(default=None, kw_only=True)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self._record("pre_enqueue", pod)
        return self.status_for(pod) if self.status_for is not None else self.status


@attrs.define(eq=False)
class FakeQueueSort(_Fake):
    """A QueueSort plugin: first in, first out (by the time a pod entered the queue).
    Its comparisons are not recorded."""

    name: str = "FakeQueueSort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


# ---- filtering ----------------------------------------------------------------------


@attrs.define(eq=False)
class FakePreFilter(_Fake):
    """A PreFilter plugin: answers ``status`` when given, else ``result`` (None: all
    nodes); ``extensions`` are its AddPod/RemovePod."""

    name: str = "FakePreFilter"
    result: PreFilterResult | None = attrs.field(default=None, kw_only=True)
    status: Status | None = attrs.field(default=None, kw_only=True)
    extensions: PreFilterExtensions | None = attrs.field(default=None, kw_only=True)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        self._record("pre_filter", pod)
        return self.status if self.status is not None else self.result

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self.extensions


@attrs.define(eq=False)
class _Verdicts(_Fake):
    status_for: NodeVerdicts = attrs.field(factory=dict, kw_only=True)
    """Node name -> its Status, or just its Code (with :data:`ERR_REASON_FAKE`); or a
    function ``(pod, node_info) -> Status | None``. Nodes it does not name pass."""

    def _verdict(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        self._record("filter", pod, node_info.name)
        if callable(self.status_for):
            return self.status_for(pod, node_info)
        verdict = self.status_for.get(node_info.name)
        if isinstance(verdict, Code):
            return Status(verdict, (ERR_REASON_FAKE.format(pod=pod.name),))
        return verdict


@attrs.define(eq=False)
class FakeFilter(_Verdicts):
    """A Filter plugin failing the nodes ``status_for`` names (upstream FakeFilterPlugin)."""

    name: str = "FakeFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._verdict(pod, node_info)


@attrs.define(eq=False)
class FakeAsyncFilter(_Verdicts):
    """:class:`FakeFilter` as an ``async def``: fanned out, and it may wait first."""

    name: str = "FakeAsyncFilter"
    delay: float = attrs.field(default=0.0, kw_only=True)
    """Seconds it waits before answering, on the loop's clock (0: one checkpoint)."""
    gate: anyio.Event | None = attrs.field(default=None, kw_only=True)
    """An event it then waits for (a test sets it to let the calls go on)."""

    async def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        verdict = self._verdict(pod, node_info)
        await _wait(self.delay, self.gate)
        return verdict


@attrs.define(eq=False)
class FakePostFilter(_Fake):
    """A PostFilter plugin: nominates ``nominate`` (when given) with ``status``."""

    name: str = "FakePostFilter"
    nominate: str | None = attrs.field(default=None, kw_only=True)
    status: Status | None = attrs.field(default=None, kw_only=True)

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        self._record("post_filter", pod)
        result = PostFilterResult(nominated_node_name=self.nominate) if self.nominate else None
        return result, self.status


# ---- scoring ------------------------------------------------------------------------


@attrs.define(eq=False)
class FakePreScore(_Fake):
    """A PreScore plugin answering ``status`` (``SKIP`` turns its Score off)."""

    name: str = "FakePreScore"
    status: Status | None = attrs.field(default=None, kw_only=True)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        self._record("pre_score", pod)
        return self.status


@attrs.define(eq=False)
class _Scores(_Fake):
    scores: NodeScores = attrs.field(factory=dict, kw_only=True)
    """Node name -> score, or a function ``(pod, node_info) -> score``."""
    default: int = attrs.field(default=0, kw_only=True)
    """The score of the nodes ``scores`` does not name."""
    normalize: Callable[[dict[str, int]], None] | None = attrs.field(default=None, kw_only=True)
    """Its NormalizeScore: rescales the node -> score dict in place."""

    def _score(self, pod: Pod, node_info: NodeInfo) -> int:
        self._record("score", pod, node_info.name)
        if callable(self.scores):
            return self.scores(pod, node_info)
        return self.scores.get(node_info.name, self.default)

    def score_extensions(self) -> ScoreExtensions | None:
        return self if self.normalize is not None else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        if self.normalize is not None:
            self.normalize(scores)


@attrs.define(eq=False)
class FakeScore(_Scores):
    """A Score plugin giving each node its score from ``scores``."""

    name: str = "FakeScore"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self._score(pod, node_info)


@attrs.define(eq=False)
class FakeAsyncScore(_Scores):
    """:class:`FakeScore` as an ``async def``: fanned out, and it may wait first."""

    name: str = "FakeAsyncScore"
    delay: float = attrs.field(default=0.0, kw_only=True)
    """Seconds it waits before answering, on the loop's clock (0: one checkpoint)."""
    gate: anyio.Event | None = attrs.field(default=None, kw_only=True)
    """An event it then waits for (a test sets it to let the calls go on)."""

    async def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        score = self._score(pod, node_info)
        await _wait(self.delay, self.gate)
        return score


# ---- reserving and permitting -------------------------------------------------------


@attrs.define(eq=False)
class FakeReserve(_Fake):
    """A Reserve plugin answering ``status``; its Unreserve is recorded too."""

    name: str = "FakeReserve"
    status: Status | None = attrs.field(default=None, kw_only=True)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._record("reserve", pod, node_name)
        return self.status

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._record("unreserve", pod, node_name)


@attrs.define(eq=False)
class _Permits(_Fake):
    status: Status | None = attrs.field(default=None, kw_only=True)
    wait: float | None = attrs.field(default=None, kw_only=True)
    """Hold every pod this many seconds (``Status.wait``) instead of answering ``status``."""
    status_for: PodVerdict | None = attrs.field(default=None, kw_only=True)
    """A function of the pod that decides instead of both."""

    def _verdict(self, pod: Pod, node_name: str) -> Status | None:
        self._record("permit", pod, node_name)
        if self.status_for is not None:
            return self.status_for(pod)
        if self.wait is not None:
            return Status.wait(self.wait)
        return self.status


@attrs.define(eq=False)
class FakePermit(_Permits):
    """A Permit plugin (upstream FakePermitPlugin): ``status``, or a wait of ``wait`` s."""

    name: str = "FakePermit"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._verdict(pod, node_name)


@attrs.define(eq=False)
class FakeAsyncPermit(_Permits):
    """:class:`FakePermit` as an ``async def``, which may wait before it answers."""

    name: str = "FakeAsyncPermit"
    delay: float = attrs.field(default=0.0, kw_only=True)
    """Seconds it waits before answering, on the loop's clock (0: one checkpoint)."""
    gate: anyio.Event | None = attrs.field(default=None, kw_only=True)
    """An event it then waits for (a test sets it to let the calls go on)."""

    async def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        verdict = self._verdict(pod, node_name)
        await _wait(self.delay, self.gate)
        return verdict


# ---- binding ------------------------------------------------------------------------


@attrs.define(eq=False)
class _PreBinds(_Fake):
    status: Status | None = attrs.field(default=None, kw_only=True)
    pre_flight: Status | None = attrs.field(default=None, kw_only=True)
    """PreBindPreFlight's answer: ``SKIP`` says there is nothing to do (PreBind is then
    not called)."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._record("pre_bind_pre_flight", pod, node_name)
        return self.pre_flight


@attrs.define(eq=False)
class FakePreBind(_PreBinds):
    """A PreBind plugin (upstream FakePreBindPlugin) answering ``status``."""

    name: str = "FakePreBind"

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._record("pre_bind", pod, node_name)
        return self.status


@attrs.define(eq=False)
class FakeAsyncPreBind(_PreBinds):
    """:class:`FakePreBind` as an ``async def`` (the binding cycle then runs in a task)."""

    name: str = "FakeAsyncPreBind"
    delay: float = attrs.field(default=0.0, kw_only=True)
    """Seconds it waits before answering, on the loop's clock (0: one checkpoint)."""
    gate: anyio.Event | None = attrs.field(default=None, kw_only=True)
    """An event it then waits for (a test sets it to let the calls go on)."""

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._record("pre_bind", pod, node_name)
        await _wait(self.delay, self.gate)
        return self.status


@attrs.define(eq=False)
class FakeBind(_Fake):
    """A Bind plugin answering ``status``: by default ``SKIP``, leaving the pod to the
    next Bind plugin (DefaultBinder writes the binding). It writes nothing itself."""

    name: str = "FakeBind"
    status: Status | None = attrs.field(default=SKIP, kw_only=True)

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._record("bind", pod, node_name)
        return self.status


@attrs.define(eq=False)
class FakeAsyncBind(_Fake):
    """:class:`FakeBind` as an ``async def``, which may wait before it answers."""

    name: str = "FakeAsyncBind"
    delay: float = attrs.field(default=0.0, kw_only=True)
    """Seconds it waits before answering, on the loop's clock (0: one checkpoint)."""
    gate: anyio.Event | None = attrs.field(default=None, kw_only=True)
    """An event it then waits for (a test sets it to let the calls go on)."""
    status: Status | None = attrs.field(default=SKIP, kw_only=True)

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._record("bind", pod, node_name)
        await _wait(self.delay, self.gate)
        return self.status


@attrs.define(eq=False)
class FakePostBind(_Fake):
    """A PostBind plugin: records the pods bound."""

    name: str = "FakePostBind"

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._record("post_bind", pod, node_name)
