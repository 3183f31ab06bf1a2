"""One protocol per extension point: what a plugin author implements.

# staging/src/k8s.io/kube-scheduler/framework/interface.go
A plugin is any object with a ``name`` and methods named after the extension points it
extends; it need not inherit from these protocols (they are for type checkers and for
reading). Each method may be a plain ``def`` or an ``async def``: the framework finds out
which once, when the profile is built, and awaits only the ``async`` ones. A plain
``def`` costs nothing to call; an ``async def`` Filter or Score is fanned out across nodes
and bounded by the scheduler's plugin timeout. Returning ``None`` means success.

What each status code makes the scheduler do is said per extension point below; in short:
``UNSCHEDULABLE`` rejects the node (or the pod) and lets preemption try,
``UNSCHEDULABLE_AND_UNRESOLVABLE`` rejects it and tells preemption not to bother, ``ERROR``
ends the attempt and sends the pod to backoff without waiting for an event, ``SKIP``
switches the plugin's coupled step off for this pod, ``PENDING`` ends the attempt without
the backoff penalty, and ``WAIT`` (Permit only) holds the pod before binding.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..api import Pod
from ._cycle_state import CycleState
from ._events import ClusterEventWithHint
from ._interfaces import NodeToStatus, PostFilterResult, PreFilterResult, QueuedPodInfo
from ._status import Status
from ._types import NodeInfo, PodInfo

__all__ = [
    "BindPlugin",
    "ClosablePlugin",
    "EnqueueExtensions",
    "FilterPlugin",
    "PermitPlugin",
    "Plugin",
    "PodGroup",
    "PodGroupPlugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
]

MaybeStatus = Status | None | Awaitable[Status | None]
"""What most extension points return: a Status or None, directly or awaited."""


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a ``name``, unique in the registry (``"NodeResourcesFit"``)."""

    name: str


@runtime_checkable
class ClosablePlugin(Plugin, Protocol):
    """A plugin holding resources (timers, subscriptions, connections) to release.

    The scheduler calls ``close()`` once when it shuts down, in reverse start order (the
    last profile's last plugin first), within the shutdown grace period. An exception is
    logged, never raised.
    """

    def close(self) -> Awaitable[None] | None: ...


class PreEnqueuePlugin(Plugin, Protocol):
    """Runs before a pod is added to activeQ or backoffQ, from the event handlers.

    Must be cheap (no calls to outside services): it runs for every pod that arrives or
    changes. Success (None) lets the pod into the queue. Any other status keeps the pod
    gated in the unschedulable pool, never lost, until an update of the pod or a cluster
    event the plugin registered lets it through (SchedulingGates, Coscheduling's
    minMember count).
    """

    def pre_enqueue(self, pod: Pod) -> MaybeStatus: ...


class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ: ``less(a, b)`` is True when ``a`` is to be scheduled before ``b``.

    Exactly one QueueSort plugin per profile, and all profiles of a scheduler share the
    first one's order. An optional ``sort_key(qpi)`` (``less(a, b)`` iff
    ``sort_key(a) < sort_key(b)``) lets the queue order by key instead of by comparisons.
    """

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


class EnqueueExtensions(Plugin, Protocol):
    """The cluster events that may make a pod this plugin rejected schedulable again.

    Asked once, when the profile is built. A pod rejected by PreEnqueue, PreFilter,
    Filter, Reserve or Permit waits in the unschedulable pool until one of its rejecting
    plugins' events happens (and the event's queueing hint, if any, says QUEUE). A
    plugin that does not implement this is woken by every event (correct, but slow); an
    empty list means no event ever wakes the pods it rejects (almost always a mistake:
    they then wait for the pool's timeout).
    """

    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


class PreFilterExtensions(Protocol):
    """Incremental updates of a PreFilter plugin's state in a what-if evaluation.

    The framework calls ``add_pod`` / ``remove_pod`` only after PreFilter, possibly on a
    cloned CycleState, and possibly several times before calling Filter again on a node:
    preemption removes victims, and nominated pods of higher or equal priority are added
    before the Filter runs on their node. A non-success status fails that evaluation.
    Both are plain ``def``.
    """

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


class PreFilterPlugin(Plugin, Protocol):
    """Runs once per attempt, at the start of the scheduling cycle, before Filter.

    Returns None (success), a ``PreFilterResult`` narrowing the nodes to evaluate (nodes
    left out count as UNSCHEDULABLE_AND_UNRESOLVABLE, so preemption skips them), or a
    Status:

    - ``SKIP``: this plugin's Filter and its PreFilterExtensions are skipped for this pod;
    - ``UNSCHEDULABLE`` / ``UNSCHEDULABLE_AND_UNRESOLVABLE``: the pod fits no node; the
      attempt fails with this message and PostFilter (preemption) runs;
    - ``ERROR``: the attempt ends and the pod goes to backoff.

    Every PreFilter plugin must succeed for the cycle to go on. Plugins that also sign
    pods (``sign_pod``, see ``ksched.framework.batch``) keep opportunistic batching on.
    """

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | Awaitable[Status | PreFilterResult | None] | None: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The plugin's AddPod/RemovePod, or None when its state needs no update."""
        ...


class FilterPlugin(Plugin, Protocol):
    """Judges one node for the pod: can the pod run there?

    Called per node, plugins in order; the first one that does not succeed decides the
    node's status, and the others are not asked. ``UNSCHEDULABLE`` rejects the node and
    lets preemption consider it; ``UNSCHEDULABLE_AND_UNRESOLVABLE`` rejects it and
    tells preemption that evicting pods would not help; ``ERROR`` aborts the attempt (the
    pod goes to backoff). Read the node from ``node_info`` only, never from the snapshot:
    preemption and nominated pods hand in copies with pods removed or added.

    Filter stops early once enough feasible nodes were found
    (``percentageOfNodesToScore``), starting where the last cycle stopped. An ``async``
    Filter is fanned out across nodes, at most ``parallelism`` at a time. Batch forms
    (``filter_batch``, see ``ksched.framework.batch``) may judge all nodes at once; this
    method stays the definition and gives the reasons.
    """

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> MaybeStatus: ...


class PostFilterPlugin(Plugin, Protocol):
    """Runs when the pod fits no node (PreFilter or Filter rejected every one).

    ``statuses`` holds each node's verdict (nodes it does not list share its absent
    status). Plugins run in order until one succeeds or errors:

    - success with a ``PostFilterResult(nominated_node_name=...)``: the pod is nominated
      to that node (preemption evicted pods there) and requeued;
    - ``UNSCHEDULABLE``: this plugin could not help; the next one is asked;
    - ``ERROR``: the plugin failed.

    A custom preemption must itself skip nodes marked UNSCHEDULABLE_AND_UNRESOLVABLE.
    """

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> (
        tuple[PostFilterResult | None, Status | None]
        | Awaitable[tuple[PostFilterResult | None, Status | None]]
    ): ...


class PreScorePlugin(Plugin, Protocol):
    """Runs once with the feasible nodes before Score (informational: prepare state).

    ``SKIP``: this plugin's Score is skipped for this pod. Any other non-success status
    ends the attempt with that status.
    """

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> MaybeStatus: ...


class ScoreExtensions(Protocol):
    """NormalizeScore: called once with every feasible node's score from the same
    plugin's Score, to rescale them in place (``scores``: node name -> score). After it,
    every score must lie in [MIN_NODE_SCORE, MAX_NODE_SCORE] or the attempt fails."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None: ...


class ScorePlugin(Plugin, Protocol):
    """Ranks a feasible node for the pod.

    Called per feasible node (unless PreScore said SKIP); returns an integer. After
    NormalizeScore (``score_extensions``), each score is multiplied by the plugin's
    weight and summed over plugins; the highest total wins, ties broken at random. An
    exception or an out-of-range score fails the attempt (ERROR). An ``async`` Score is
    fanned out across nodes. Batch forms (``score_batch``) may score all nodes at once.
    """

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Awaitable[int]: ...

    def score_extensions(self) -> ScoreExtensions | None:
        """The plugin's NormalizeScore, or None when its scores are already in range."""
        ...


class ReservePlugin(Plugin, Protocol):
    """Reserve and Unreserve: keep a plugin's own state in step with the chosen node.

    Reserve runs, plugins in order, right after the pod is assumed on its node in the
    cache, before Permit. A non-success status (only SUCCESS or ERROR are meant) fails
    the attempt: Unreserve then runs on every Reserve plugin, in reverse order.
    Unreserve also runs when anything later fails (Permit rejection or timeout, PreBind,
    Bind, shutdown); it runs shielded from cancellation, must be idempotent, and may be
    called without a Reserve before it.
    """

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> MaybeStatus: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[None] | None: ...


class PermitPlugin(Plugin, Protocol):
    """Approves, rejects or delays the binding of a reserved pod.

    Runs after Reserve, plugins in order. Success lets the pod go on; ``Status.wait(
    timeout)`` makes it a waiting pod (the wait starts once every other plugin has
    answered, at most 15 minutes): ``Handle.get_waiting_pod(uid).allow(name)`` from every
    waiting plugin releases it, a rejection or the timeout ends it with Unreserve and a
    requeue. Any other status rejects the pod at once.
    """

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> MaybeStatus: ...


class PreBindPlugin(Plugin, Protocol):
    """Runs in the binding cycle, after Permit, before Bind (volumes, devices).

    Every PreBind plugin must succeed or the pod is not bound: it is unreserved and
    requeued. An optional plain-``def`` ``pre_bind_pre_flight(state, pod, node_name)``
    returning ``SKIP`` says the plugin has nothing to do for this pod (its PreBind is
    then not called); it must not do the work itself.
    """

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> MaybeStatus: ...


class BindPlugin(Plugin, Protocol):
    """Binds the pod to its node, after every PreBind plugin succeeded.

    Bind plugins run in order; the first that does not return ``SKIP`` decides: success
    binds, anything else fails the binding cycle (Unreserve, requeue).
    """

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> MaybeStatus: ...


class PostBindPlugin(Plugin, Protocol):
    """Runs after the pod was bound (informational: clean up). Exceptions are ignored."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[None] | None: ...


class PodGroup(Protocol):
    """A pod group as the pod-group cycle sees it."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def min_count(self) -> int: ...


class PodGroupPlugin(Plugin, Protocol):
    """Places pod groups in one pod-group cycle (upstream's PlacementFeasible, with the
    questions the cycle asks about the group). All methods are plain ``def``."""

    def pod_group(self, pod: Pod) -> PodGroup | None:
        """The group the cycle should place with ``pod``, or None (scheduled alone)."""
        ...

    def unscheduled_members(self, group: Any) -> list[Pod]: ...

    def scheduled_count(self, group: Any) -> int: ...

    def placement_feasible(self, group: Any, remaining: int, scheduled: int) -> Status:
        """Unschedulable: the group cannot reach its minimum; Wait: it still may;
        Success: it has."""
        ...
