"""What the engine tells the world: the timeline, Events, timings, metrics, explanations.

# pkg/scheduler/schedule_one.go (the metrics.* calls, the recorder's Eventf calls),
# pkg/scheduler/metrics/metrics.go
The cycles call one :class:`Observer` for the scheduler and one :class:`Attempt` per
scheduling attempt. What is off costs nothing but the call: an attempt that is neither
timed, measured nor explained is the shared :data:`UNOBSERVED`, whose methods do
nothing, so the cycles read as upstream's without a branch per observation.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from ..api import Pod
from ..cluster import EventRecorder
from ..framework import Code, CycleState, NodeInfo, QueuedPodInfo, Status
from ..framework.runtime import FilterOutcome, MetricsRecorder, ScoreOutcome
from ._diagnosis import AttemptReport, SchedulingEvent, plugin_decisions
from ._state import PodRecord

__all__ = ["UNOBSERVED", "Attempt", "ObservedAttempt", "Observer"]

FITS = Status(Code.SUCCESS)
"""A feasible node's entry in an AttemptReport."""

_ATTEMPT_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})


class Attempt:
    """One scheduling attempt as the observer sees it; this base observes nothing."""

    __slots__ = ()

    report: AttemptReport | None = None
    """What the attempt evaluated, when it is explained."""
    started: float = 0.0
    """When the attempt began (when measured)."""

    def point(self, point: str, status: Status | None = None) -> None:
        """An extension point (all its plugins) ended: its time since the last mark."""

    def algorithm_started(self) -> None:
        """Finding a node (schedulePod) starts; PreFilter's time is counted from here."""

    def algorithm_done(self) -> None:
        """Finding a node (schedulePod) ended; PostFilter's time is counted from here."""

    def pre_filtered(self, status: Status) -> None:
        """PreFilter's outcome."""

    def filtered(self, outcome: FilterOutcome) -> None:
        """Filter's verdicts on the nodes it examined."""

    def extenders_filtered(self, statuses: Iterable[tuple[str, Status]]) -> None:
        """The extenders' verdicts on the nodes they turned down."""

    def scored(self, scores: ScoreOutcome, state: CycleState) -> None:
        """Score's outcome: each plugin's scores and the totals."""

    def tried_first(self, node: str, *, hinted: bool) -> None:
        """The node tried alone first fits (nominated, or the batching hint: ``hinted``)."""

    def selected(self, node: str) -> None:
        """The node chosen."""

    def mark(self) -> None:
        """Start timing the next extension point from now."""

    def decided(self, plugins: Iterable[Any], state: CycleState, node: str) -> None:
        """After Reserve: what the plugins chose for the pod on ``node``."""


UNOBSERVED = Attempt()
"""The attempt observer used when nothing is timed, measured or explained."""


class ObservedAttempt(Attempt):
    """An attempt that is timed (timings, metrics), explained (a report), or both."""

    __slots__ = ("_algorithm", "_mark", "_observer", "_profile", "report", "started")

    def __init__(
        self, observer: Observer, profile: str, started: float, report: AttemptReport | None
    ) -> None:
        self._observer = observer
        self._profile = profile
        self.started = started
        self._mark = self._algorithm = started
        self.report = report

    def point(self, point: str, status: Status | None = None) -> None:
        observer = self._observer
        if observer.measure:
            now = observer.now()
            observer.spent(point, now - self._mark, status, self._profile)
            self._mark = now

    def algorithm_done(self) -> None:
        observer = self._observer
        if observer.measure:
            now = observer.now()
            if observer.metrics is not None:
                observer.metrics.algorithm(now - self._algorithm)
            self._mark = now

    def pre_filtered(self, status: Status) -> None:
        self.point("PreFilter", status)
        if self.report is not None:
            self.report.pre_filter = status

    def filtered(self, outcome: FilterOutcome) -> None:
        self.point("Filter")
        report = self.report
        if report is None:
            return
        report.evaluated = [i.name for i in outcome.feasible] + [
            n for n, _ in outcome.statuses.items()
        ]
        for name, status in outcome.statuses.items():
            report.filter[name] = status
        report.filter.update(dict.fromkeys((i.name for i in outcome.feasible), FITS))

    def extenders_filtered(self, statuses: Iterable[tuple[str, Status]]) -> None:
        if self.report is not None:
            for name, status in statuses:
                if status.plugin and status.plugin.startswith(("http://", "https://")):
                    self.report.filter[name] = status

    def scored(self, scores: ScoreOutcome, state: CycleState) -> None:
        self.point("Score")
        report = self.report
        if report is not None:
            report.scores = scores.plugin_scores
            report.totals = scores.totals
            report.skipped_score_plugins = set(state.skip_score_plugins)

    def tried_first(self, node: str, *, hinted: bool) -> None:
        report = self.report
        if report is not None:
            report.filter[node] = FITS
            report.hinted = hinted

    def selected(self, node: str) -> None:
        if self.report is not None:
            self.report.selected = node

    def mark(self) -> None:
        if self._observer.measure:
            self._mark = self._observer.now()

    def algorithm_started(self) -> None:
        if self._observer.measure:
            self._mark = self._algorithm = self._observer.now()

    def decided(self, plugins: Iterable[Any], state: CycleState, node: str) -> None:
        if self.report is not None:
            self.report.decisions.update(plugin_decisions(plugins, state, node))


class Observer:
    """The scheduler's observations: the timeline (``on_event``), the Events of the
    cluster's recorder, ``timings`` (seconds per extension point) and the Prometheus
    ``metrics``, and explanations of the pods ``explain`` names (all with True)."""

    def __init__(
        self,
        now: Callable[[], float],
        *,
        on_event: Callable[[SchedulingEvent], None] | None = None,
        events: EventRecorder | None = None,
        timings: bool = False,
        metrics: MetricsRecorder | None = None,
        explain: bool | Collection[str] = False,
    ) -> None:
        self.now = now
        self.on_event = on_event
        self.events = events
        """The cluster's Event recorder (None: the cluster keeps none; none are made)."""
        self.timings = timings
        self.metrics = metrics
        self.explain = explain
        self._explain_only = None if isinstance(explain, bool) else frozenset(explain)
        self.measure = timings or metrics is not None
        """Time the extension points (for ``timings`` or the metrics)."""
        self.extension_point_seconds: dict[str, float] = {}
        self.attempt_seconds = 0.0
        self._attempt_started: dict[str, float] = {}

    # ---- attempts -------------------------------------------------------------------

    def begin(
        self,
        pod: Pod,
        attempts: int,
        profile: str,
        record: PodRecord,
        started: float | None = None,
    ) -> Attempt:
        """A scheduling attempt of ``pod`` starts (now, or at ``started``: a pod-group
        cycle's members start together): count it, announce it, observe it."""
        record.attempts = attempts
        explained = self.explain and (self._explain_only is None or pod.key in self._explain_only)
        if not self.measure and not explained:
            self.emit("Attempted", pod, attempts=attempts)
            return UNOBSERVED
        if started is None:
            started = self.now()
        self.emit("Attempted", pod, attempts=attempts)
        if self.timings:
            self._attempt_started[pod.uid] = started
        return ObservedAttempt(self, profile, started, AttemptReport() if explained else None)

    def unexplained(self, profile: str) -> Attempt:
        """An attempt observer for a what-if pass (a gang's preemption plan): timed like
        an attempt, never explained, not counted as one."""
        if not self.measure:
            return UNOBSERVED
        return ObservedAttempt(self, profile, self.now(), None)

    def attempt_ended(self, attempt: Attempt) -> None:
        """The scheduling cycle of ``attempt`` ended (its binding may go on)."""
        if self.timings:
            self.attempt_seconds += self.now() - attempt.started

    def outcome(self, result: str, profile: str, attempt: Attempt) -> None:
        """An attempt's result for the metrics: scheduled, unschedulable or error."""
        if self.metrics is not None:
            self.metrics.attempt(result, profile, self.now() - attempt.started)

    def scheduled(self, qpi: QueuedPodInfo, profile: str, attempt: Attempt) -> None:
        """The pod was bound: the attempt's result, attempts and the SLI duration.

        # schedule_one.go bindingCycle (PodScheduled, PodSchedulingAttempts, SLIDuration)
        """
        metrics = self.metrics
        if metrics is not None:
            now = self.now()
            metrics.attempt("scheduled", profile, now - attempt.started)
            first = qpi.initial_attempt_timestamp
            metrics.scheduled(qpi.attempts, now - (first if first is not None else attempt.started))

    def permit_waited(self, status: Status, seconds: float) -> None:
        """A pod's wait at Permit ended with ``status`` after ``seconds``."""
        if self.metrics is not None:
            self.metrics.permit_wait(status.code.label, seconds)

    def group_algorithm_done(self, started: float) -> None:
        """Placing a pod group's members (started at ``started``) ended."""
        now = self.now()
        if self.timings:
            self.attempt_seconds += now - started
        if self.metrics is not None:
            self.metrics.pod_group_algorithm(now - started)

    def group_outcome(self, result: str, profile: str, started: float) -> None:
        """A pod-group cycle ended: scheduled, unschedulable, waiting_on_preemption, error."""
        if self.metrics is not None:
            self.metrics.pod_group_attempt(result, profile, self.now() - started)

    def spent(self, point: str, seconds: float, status: Status | None, profile: str) -> None:
        """Account ``seconds`` to the extension point ``point`` (timings and metrics)."""
        if self.timings:
            by_point = self.extension_point_seconds
            by_point[point] = by_point.get(point, 0.0) + seconds
        if self.metrics is not None:
            code = "Success" if status is None else status.code.label
            self.metrics.extension_point(point, code, profile, seconds)

    # ---- the timeline and Events ----------------------------------------------------

    def emit(self, kind: str, pod: Pod, **details: Any) -> None:
        """A timeline event (Queued, Attempted, Bound...) for ``on_event``."""
        if self.timings and kind in _ATTEMPT_OUTCOMES:
            started = self._attempt_started
            uid = pod.uid
            start = started.get(uid) if kind == "WaitingOnPermit" else started.pop(uid, None)
            if start is not None:
                details["attempt_start"] = start
        if self.on_event is not None:
            self.on_event(SchedulingEvent(kind, pod.key, self.now(), details))

    def record_event(
        self,
        regarding: Pod,
        reason: str,
        note: str,
        *,
        related: Pod | None = None,
        event_type: str = "Normal",
        action: str = "",
    ) -> None:
        """An Event for the cluster (kube-scheduler's recorder) and the timeline."""
        self.emit(reason, regarding, message=note)
        self.cluster_event(regarding, related, event_type, reason, action, note)

    def cluster_event(
        self,
        regarding: Pod,
        related: Pod | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """Hand an Event to the cluster's recorder (a cluster without one gets none)."""
        if self.events is not None:
            self.events.record_event(regarding, related, event_type, reason, action, note)

    def explained_nodes(
        self, record: PodRecord, report: AttemptReport, nodes: Sequence[NodeInfo]
    ) -> None:
        """Keep the pod's first explained attempt, with every node the snapshot held."""
        if record.first_attempt is None:
            record.first_attempt = report
            report.all_nodes = [i.name for i in nodes]
