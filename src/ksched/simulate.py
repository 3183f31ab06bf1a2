"""Scenarios: a cluster, a configuration and steps, run on a simulated clock.

The contract is scenario-format.md: ``run_scenario`` gives the JSON report, and
``check_scenario`` compares it with the scenario's ``expect`` block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs
import yaml

from ._diagnosis import AttemptReport, SchedulingEvent
from ._errors import ConfigError, KschedError, ManifestError
from ._profiles import Registry
from .api import KubeObject, Node, Pod, pod_requests, read_object
from .cluster import InMemoryCluster, object_key
from .config import SchedulerConfig, parse_config
from .framework import Code, Resource, Status
from .scheduler import Scheduler

__all__ = [
    "Scenario",
    "ScenarioError",
    "check_scenario",
    "load_scenario",
    "parse_duration",
    "run_scenario",
]

DEFAULT_SETTLE_MAX = 3600.0

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader when PyYAML has it (ten times faster on 10k-pod files)."""


class ScenarioError(KschedError, ValueError):
    """A scenario file that cannot be run (the message names the file and field)."""


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float:
    """Seconds in a Go-style duration (``1h30m``, ``1.5s``, ``250ms``) or a number."""
    if isinstance(value, bool):
        raise ValueError(f"invalid duration {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"invalid duration {value!r}")
    pos, total = 0, 0.0
    for match in _DURATION.finditer(value):
        if match.start() != pos:
            raise ValueError(f"invalid duration {value!r}")
        total += float(match[1]) * _UNITS[match[2]]
        pos = match.end()
    if pos != len(value):
        raise ValueError(f"invalid duration {value!r}")
    return total


@attrs.frozen
class Step:
    kind: str  # settle | advance | create | update | delete | none
    objects: tuple[KubeObject, ...] = ()
    deletes: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    expect: Mapping[str, Any] | None = None


@attrs.frozen
class Scenario:
    name: str
    source: str
    config: SchedulerConfig
    objects: tuple[KubeObject, ...]
    steps: tuple[Step, ...]
    expect: Mapping[str, Any]
    path: str = "<scenario>"


def _objects(raw: Any, where: str) -> tuple[KubeObject, ...]:
    if not isinstance(raw, list):
        raise ScenarioError(f"{where}: expected a list of objects")
    out = []
    for i, item in enumerate(raw):
        try:
            out.append(read_object(item))
        except ManifestError as exc:
            raise ScenarioError(f"{where}[{i}]: {exc}") from None
    return tuple(out)


_STEP_ACTIONS = ("settle", "advance", "create", "update", "delete")


def _step(raw: Any, where: str) -> Step:
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"{where}: expected a mapping")
    actions = [k for k in _STEP_ACTIONS if k in raw]
    unknown = set(raw) - set(_STEP_ACTIONS) - {"expect"}
    if unknown:
        raise ScenarioError(f"{where}: unknown step key(s) {sorted(unknown)}")
    if len(actions) > 1:
        raise ScenarioError(f"{where}: one action per step, got {actions}")
    expect = raw.get("expect")
    if expect is not None and not isinstance(expect, Mapping):
        raise ScenarioError(f"{where}.expect: expected a mapping")
    if not actions:
        return Step("none", expect=expect)
    action = actions[0]
    value = raw[action]
    try:
        if action == "settle":
            settle = value or {}
            if not isinstance(settle, Mapping):
                raise ScenarioError(f"{where}.settle: expected a mapping")
            seconds = parse_duration(settle.get("maxTime", DEFAULT_SETTLE_MAX))
            return Step("settle", seconds=seconds, expect=expect)
        if action == "advance":
            return Step("advance", seconds=parse_duration(value), expect=expect)
    except ValueError as exc:
        raise ScenarioError(f"{where}.{action}: {exc}") from None
    if action in ("create", "update"):
        return Step(action, objects=_objects(value, f"{where}.{action}"), expect=expect)
    if not isinstance(value, list):
        raise ScenarioError(f"{where}.delete: expected a list")
    deletes = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not item.get("kind") or not item.get("name"):
            raise ScenarioError(f"{where}.delete[{i}]: needs kind and name")
        kind, name = str(item["kind"]), str(item["name"])
        cluster_scoped = kind in (
            "Node",
            "PriorityClass",
            "Namespace",
            "DeviceClass",
            "ResourceSlice",
        )
        key = name if cluster_scoped else f"{item.get('namespace') or 'default'}/{name}"
        deletes.append((kind, key))
    return Step("delete", deletes=tuple(deletes), expect=expect)


def parse_scenario(data: Any, *, path: str = "<scenario>") -> Scenario:
    """A Scenario from its dict form. Raises ScenarioError / ConfigError naming the field."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{path}: expected a Scenario mapping")
    if data.get("kind", "Scenario") != "Scenario":
        raise ScenarioError(f"{path}: kind: expected Scenario, got {data.get('kind')!r}")
    meta = data.get("metadata") or {}
    name = str(meta.get("name") or Path(path).stem)
    try:
        config = parse_config(data.get("config"))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    objects = _objects(data.get("objects") or [], f"{path}: objects")
    raw_steps = data.get("steps")
    if raw_steps is None:
        steps: tuple[Step, ...] = (Step("settle", seconds=DEFAULT_SETTLE_MAX),)
    elif not isinstance(raw_steps, list):
        raise ScenarioError(f"{path}: steps: expected a list")
    else:
        steps = tuple(_step(s, f"{path}: steps[{i}]") for i, s in enumerate(raw_steps))
    expect = data.get("expect") or {}
    if not isinstance(expect, Mapping):
        raise ScenarioError(f"{path}: expect: expected a mapping")
    return Scenario(name, str(meta.get("source") or ""), config, objects, steps, expect, path)


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file."""
    text = Path(path).read_text()
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: invalid YAML: {exc}") from exc
    return parse_scenario(data, path=str(path))


# ---- running ------------------------------------------------------------------------


class _Usage:
    """Requested vs allocatable cpu / memory / pods per node, kept from cluster changes.

    With ``history``, every change is also recorded as a sample
    ``[time, node, cpu cores, memory bytes, pods]`` (the node's totals after it).
    """

    def __init__(self, now: Callable[[], float], *, history: bool) -> None:
        self.now = now
        self.allocatable: dict[str, Resource] = {}
        self.requested: dict[str, list[int]] = {}
        self.samples: list[list[Any]] | None = [] if history else None

    def on_change(self, kind: str, old: Any, new: Any) -> None:
        if kind == "Node":
            if new is None:
                self.allocatable.pop(old.metadata.name, None)
                return
            node: Node = new
            self.allocatable[node.metadata.name] = Resource.from_list(node.status.allocatable)
            self.requested.setdefault(node.metadata.name, [0, 0, 0])
        elif kind == "Pod":
            if old is not None and old.spec.node_name:
                if new is not None and new.spec is old.spec:
                    return  # a status change of a running pod
                self._account(old, -1)
            if new is not None and new.spec.node_name:
                self._account(new, 1)

    def _account(self, pod: Pod, sign: int) -> None:
        node = pod.spec.node_name
        assert node is not None
        requests = pod_requests(pod)
        totals = self.requested.setdefault(node, [0, 0, 0])
        totals[0] += sign * requests.get("cpu", 0)
        totals[1] += sign * requests.get("memory", 0)
        totals[2] += sign
        if self.samples is not None:
            self.samples.append(
                [round(self.now(), 6), node, totals[0] / 1000, totals[1], totals[2]]
            )

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, alloc in self.allocatable.items():
            cpu, memory, pods = self.requested.get(name, (0, 0, 0))
            out[name] = {
                "requested": {"cpu": cpu / 1000, "memory": memory, "pods": pods},
                "allocatable": {
                    "cpu": alloc.milli_cpu / 1000,
                    "memory": alloc.memory,
                    "pods": alloc.allowed_pod_number,
                },
            }
        return out


class _Run:
    """One scenario run: the cluster, the scheduler, and what is reported."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        on_event: Callable[[SchedulingEvent], None] | None,
        *,
        registry: Registry | None = None,
        explain: bool | Collection[str] = True,
        history: bool = False,
        opportunistic_batching: bool = True,
    ) -> None:
        self.scenario = scenario
        self.cluster = InMemoryCluster()
        self.t0 = 0.0
        self.created: dict[str, str] = {}
        self.profile_of: dict[str, str] = {}
        self.pending_at_creation: dict[str, None] = {}
        self.serial = 0
        self.settled = True
        self.timeline: list[dict[str, Any]] = []
        self.events: list[SchedulingEvent] = []
        self.bound_series: list[list[Any]] = []
        self._on_event = on_event
        self.usage = _Usage(self.now, history=history)
        self.cluster.subscribe(self.usage.on_change)
        self.cluster.subscribe(self._watch_nominations)
        self.scheduler = Scheduler(
            scenario.config,
            self.cluster,
            registry=registry,
            seed=seed,
            explain=explain,
            observer=self._observe,
            opportunistic_batching=opportunistic_batching,
        )

    def _observe(self, event: SchedulingEvent) -> None:
        self.events.append(event)
        if event.kind == "Bound":
            self.bound_series.append([round(event.time - self.t0, 6), len(self.bound_series) + 1])
        if self._on_event is not None:
            self._on_event(event)

    def _note(self, kind: str, pod: Pod, **details: Any) -> None:
        self._observe(SchedulingEvent(kind, pod.key, anyio.current_time(), details))

    def _watch_nominations(self, kind: str, old: Any, new: Any) -> None:
        if kind != "Pod" or old is None or new is None or new.spec.node_name:
            return
        nominated = new.status.nominated_node_name
        if nominated and nominated != old.status.nominated_node_name:
            self._note("Nominated", new, node=nominated)

    def now(self) -> float:
        return anyio.current_time() - self.t0

    def _stamp(self, obj: KubeObject) -> KubeObject:
        meta = getattr(obj, "metadata", None)
        if meta is None:
            return obj
        changes: dict[str, Any] = {}
        if meta.creation_timestamp is None:
            changes["creation_timestamp"] = self.now()
        if isinstance(obj, Pod) and not meta.uid:
            self.serial += 1
            changes["uid"] = f"{obj.key}#{self.serial}"
        if not changes:
            return obj
        return attrs.evolve(obj, metadata=attrs.evolve(meta, **changes))

    def create(self, objects: Sequence[KubeObject]) -> None:
        for obj in objects:
            obj = self._stamp(obj)
            if isinstance(obj, Pod):
                self.created[obj.key] = obj.uid
                self.profile_of[obj.key] = obj.spec.scheduler_name
                if not obj.spec.node_name:
                    self.pending_at_creation[obj.key] = None
                if obj.spec.node_name and obj.status.start_time is None:
                    obj = attrs.evolve(obj, status=attrs.evolve(obj.status, start_time=self.now()))
            self.cluster.apply(obj)

    def update(self, objects: Sequence[KubeObject]) -> None:
        for obj in objects:
            kind = type(obj).__name__
            existing = self.cluster.get(kind, object_key(obj))
            if existing is None:
                raise ScenarioError(f"update: {kind} {object_key(obj)} does not exist")
            meta = getattr(obj, "metadata", None)
            if meta is not None:
                old_meta = existing.metadata
                obj = attrs.evolve(
                    obj,
                    metadata=attrs.evolve(
                        meta,
                        uid=meta.uid or old_meta.uid,
                        creation_timestamp=meta.creation_timestamp
                        if meta.creation_timestamp is not None
                        else old_meta.creation_timestamp,
                    ),
                )
            self.cluster.apply(obj)

    def delete(self, deletes: Sequence[tuple[str, str]]) -> None:
        for kind, key in deletes:
            existing = self.cluster.get(kind, key)
            if existing is None:
                raise ScenarioError(f"delete: {kind} {key} does not exist")
            if isinstance(existing, Pod):
                self._note("Deleted", existing, node=existing.spec.node_name)
            self.cluster.remove(kind, key)

    async def settle(self, max_time: float) -> None:
        deadline = anyio.current_time() + max_time
        while True:
            await anyio.wait_all_tasks_blocked()
            if self.scheduler.idle:
                return
            now = anyio.current_time()
            if now >= deadline:
                self.settled = False
                return
            await anyio.sleep(min(self._next_wake(now) - now, deadline - now))

    def _next_wake(self, now: float) -> float:
        candidates = [w.deadline for w in self.scheduler.waiting_pods]
        wake = self.scheduler.queue.next_wakeup()
        if wake is not None:
            candidates.append(wake)
        future = [c for c in candidates if c > now]
        return min(future) if future else now + 0.5

    # ---- reports ----------------------------------------------------------------------

    def pod_reports(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        sched = self.scheduler
        for key in self.created:
            pod = self.cluster.get_pod(key)
            if pod is None:
                continue
            record = sched.records.get(pod.uid)
            where = sched.queue.where(pod.uid)
            if pod.spec.node_name:
                phase = "Bound"
            elif sched.waiting_pods.get(pod.uid) is not None:
                phase = "Waiting"
            elif where == "gated":
                phase = "Gated"
            elif (
                record is not None
                and record.message is not None
                and where
                in (
                    "unschedulable",
                    "backoff",
                )
            ):
                phase = "Unschedulable"
            else:
                phase = "Pending"
            entry: dict[str, Any] = {
                "node": pod.spec.node_name,
                "phase": phase,
                "attempts": record.attempts if record else 0,
            }
            if key in self.pending_at_creation:
                entry["nominatedNode"] = record.nominated_node if record else None
                entry["message"] = (
                    None if pod.spec.node_name else (record.message if record else None)
                )
            out[key] = entry
        return out

    def explain(self, only: Collection[str] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if not self.scheduler.explain:
            return out
        for key in self.pending_at_creation if only is None else only:
            uid = self.created.get(key)
            record = self.scheduler.records.get(uid) if uid is not None else None
            if record is None or record.first_attempt is None:
                continue
            fw = self.scheduler.frameworks.get(self.profile_of.get(key, ""))
            out[key] = _explain(record.first_attempt, fw.weights if fw is not None else {})
        return out

    def event_dicts(self) -> list[dict[str, Any]]:
        """The events, ``time`` in simulated seconds since the start."""
        return [
            {
                "kind": e.kind,
                "pod": e.pod,
                "time": round(e.time - self.t0, 6),
                "details": dict(e.details),
            }
            for e in self.events
        ]

    def history(self) -> dict[str, Any]:
        """What ``--plot`` draws: node allocatable, usage samples, bound pods over time."""
        nodes = self.usage.report()
        return {
            "allocatable": {name: entry["allocatable"] for name, entry in nodes.items()},
            "usage": self.usage.samples or [],
            "bound": self.bound_series,
        }

    def groups(self) -> dict[str, Any]:
        """Gang status from every plugin that reports group statuses (Coscheduling)."""
        out: dict[str, Any] = {}
        for fw in self.scheduler.frameworks.values():
            for plugin in fw.plugins.values():
                report = getattr(plugin, "group_statuses", None)
                if callable(report):
                    out.update(report())
        return out

    def snapshot(self, step: int | None = None) -> dict[str, Any]:
        state: dict[str, Any] = {}
        if step is not None:
            state["step"] = step
        state["time"] = round(self.now(), 6)
        state["pods"] = self.pod_reports()
        state["evicted"] = sorted(self.cluster.evicted)
        return state


def _status_json(status: Status) -> dict[str, Any]:
    out: dict[str, Any] = {"code": status.code.label}
    if status.code is not Code.SUCCESS:
        if status.plugin:
            out["plugin"] = status.plugin
        out["reasons"] = list(status.reasons)
    return out


def _explain(report: AttemptReport, weights: Mapping[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if report.pre_filter is not None:
        out["preFilter"] = _status_json(report.pre_filter)
    out["filter"] = {node: _status_json(st) for node, st in report.filter.items()}
    evaluated = set(report.filter)
    out["notEvaluated"] = [n for n in report.all_nodes if n not in evaluated]
    scores: dict[str, dict[str, Any]] = {}
    for node, total in report.totals.items():
        entry: dict[str, Any] = {}
        for plugin, per_node in report.scores.items():
            entry[plugin] = per_node[node]
        for plugin in sorted(report.skipped_score_plugins):
            entry[plugin] = "skipped"
        entry["total"] = total
        scores[node] = entry
    out["scores"] = scores
    if report.scores:
        out["weights"] = {plugin: weights.get(plugin, 1) for plugin in report.scores}
    out["selected"] = report.selected
    if report.hinted:
        out["hinted"] = True
    return out


def run_scenario(
    scenario: Scenario,
    *,
    seed: int = 0,
    on_event: Callable[[SchedulingEvent], None] | None = None,
    step_checker: Callable[[int, Mapping[str, Any], dict[str, Any]], None] | None = None,
    registry: Registry | None = None,
    explain: bool | Collection[str] = True,
    events: bool = True,
    history: bool = False,
    opportunistic_batching: bool = True,
) -> dict[str, Any]:
    """Run a scenario on trio's simulated clock; returns the JSON report.

    Args:
        scenario: what to run.
        seed: seeds the tie-breaks between equally scored nodes.
        on_event: called with every scheduling event as it happens.
        step_checker: called with each step's ``expect`` and the state it is checked on.
        registry: plugins by name beyond (or replacing) the in-tree ones.
        explain: ``explain`` for every pod created pending (True), for the named pods
            only (a collection of ``namespace/name``), or not at all (False: attempts are
            not recorded, which saves time and memory on large scenarios).
        events: include ``events`` (the timeline of scheduling events).
        history: include ``history`` (usage samples and bound pods over time, for plots).
        opportunistic_batching: the OpportunisticBatching feature gate (on by default).
    """
    import trio.testing

    result: dict[str, Any] = {}
    only = None if isinstance(explain, bool) else frozenset(explain)

    async def main() -> None:
        run = _Run(
            scenario,
            seed,
            on_event,
            registry=registry,
            explain=explain,
            history=history,
            opportunistic_batching=opportunistic_batching,
        )
        run.t0 = anyio.current_time()
        async with anyio.create_task_group() as tg:
            await tg.start(run.scheduler.serve)
            run.create(scenario.objects)
            for index, step in enumerate(scenario.steps):
                if step.expect is not None and step_checker is not None:
                    await anyio.wait_all_tasks_blocked()
                    step_checker(index, step.expect, run_state(run))
                if step.kind == "settle":
                    await run.settle(step.seconds)
                elif step.kind == "advance":
                    await anyio.sleep(step.seconds)
                elif step.kind == "create":
                    run.create(step.objects)
                elif step.kind == "update":
                    run.update(step.objects)
                elif step.kind == "delete":
                    run.delete(step.deletes)
                await anyio.wait_all_tasks_blocked()
                run.timeline.append(run.snapshot(index))
            result.update(run_state(run))
            result["nodes"] = run.usage.report()
            if len(scenario.steps) > 1:
                result["timeline"] = run.timeline
            if events:
                result["events"] = run.event_dicts()
            if history:
                result["history"] = run.history()
            tg.cancel_scope.cancel()

    def run_state(run: _Run) -> dict[str, Any]:
        pods = run.pod_reports()
        return {
            "scenario": scenario.name,
            "settled": run.settled,
            "time": round(run.now(), 6),
            "pods": pods,
            "evicted": sorted(run.cluster.evicted),
            "nominated": {
                key: entry["nominatedNode"]
                for key, entry in pods.items()
                if "nominatedNode" in entry
            },
            "explain": run.explain(only),
            "groups": run.groups(),
        }

    anyio.run(
        main,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
    return result


# ---- checking ---------------------------------------------------------------------------


class Mismatch(Exception):
    """The first difference between a report and an expectation."""


def _compare_pods(expect: Mapping[str, Any], state: Mapping[str, Any], where: str) -> None:
    pods = state["pods"]
    for key, want in (expect.get("placements") or {}).items():
        got = pods.get(key, {}).get("node") if key in pods else None
        if isinstance(want, list):
            if got not in want:
                raise Mismatch(f"{where}placements.{key}: expected one of {want}, got {got!r}")
        elif got != want:
            raise Mismatch(f"{where}placements.{key}: expected {want!r}, got {got!r}")
    for key, want in (expect.get("pods") or {}).items():
        if want is None:
            if key in pods:
                raise Mismatch(f"{where}pods.{key}: expected no such pod, got {pods[key]}")
            continue
        if key not in pods:
            raise Mismatch(f"{where}pods.{key}: expected {want}, but the pod does not exist")
        for field, value in want.items():
            got = pods[key].get(field)
            if got != value:
                raise Mismatch(f"{where}pods.{key}.{field}: expected {value!r}, got {got!r}")
    if "evicted" in expect:
        want_set = sorted(expect["evicted"] or [])
        if want_set != sorted(state["evicted"]):
            raise Mismatch(f"{where}evicted: expected {want_set}, got {sorted(state['evicted'])}")
    for key, want in (expect.get("nominated") or {}).items():
        got = state["nominated"].get(key)
        if got != want:
            raise Mismatch(f"{where}nominated.{key}: expected {want!r}, got {got!r}")


def _compare_status(want: Mapping[str, Any], got: Mapping[str, Any] | None, where: str) -> None:
    if got is None:
        raise Mismatch(f"{where}: expected {dict(want)}, but it was not evaluated")
    for field, value in want.items():
        if got.get(field) != value:
            raise Mismatch(f"{where}.{field}: expected {value!r}, got {got.get(field)!r}")


def _compare_explain(expect: Mapping[str, Any], explain: Mapping[str, Any]) -> None:
    for key, want in expect.items():
        got = explain.get(key)
        if got is None:
            raise Mismatch(f"explain.{key}: the pod has no recorded attempt")
        if "preFilter" in want:
            _compare_status(want["preFilter"], got.get("preFilter"), f"explain.{key}.preFilter")
        for node, st in (want.get("filter") or {}).items():
            _compare_status(st, got["filter"].get(node), f"explain.{key}.filter.{node}")
        if "notEvaluated" in want and sorted(want["notEvaluated"] or []) != sorted(
            got["notEvaluated"]
        ):
            raise Mismatch(
                f"explain.{key}.notEvaluated: expected {want['notEvaluated']}, "
                f"got {got['notEvaluated']}"
            )
        for node, plugin_scores in (want.get("scores") or {}).items():
            node_scores = got["scores"].get(node)
            if node_scores is None:
                raise Mismatch(f"explain.{key}.scores.{node}: the node was not scored")
            for plugin, value in plugin_scores.items():
                if node_scores.get(plugin) != value:
                    raise Mismatch(
                        f"explain.{key}.scores.{node}.{plugin}: expected {value!r}, "
                        f"got {node_scores.get(plugin)!r}"
                    )
        if "selected" in want and want["selected"] != got.get("selected"):
            raise Mismatch(
                f"explain.{key}.selected: expected {want['selected']!r}, "
                f"got {got.get('selected')!r}"
            )


@attrs.frozen
class CheckResult:
    name: str
    path: str
    passed: bool
    detail: str = ""


def check_scenario(path: str | Path, *, registry: Registry | None = None) -> CheckResult:
    """Run a scenario file and compare it with its ``expect`` block."""
    path = str(path)
    name = Path(path).stem
    try:
        raw = yaml.load(Path(path).read_text(), Loader=_YAML_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        return CheckResult(name, path, False, f"cannot read: {exc}")
    expect = (raw or {}).get("expect") or {} if isinstance(raw, Mapping) else {}
    if isinstance(raw, Mapping):
        name = str((raw.get("metadata") or {}).get("name") or name)
    want_error = expect.get("error")
    try:
        scenario = parse_scenario(raw, path=path)
        failures: list[str] = []

        def step_checker(index: int, step_expect: Mapping[str, Any], state: dict[str, Any]) -> None:
            if failures:
                return
            try:
                _compare_pods(step_expect, state, f"steps[{index}].expect.")
            except Mismatch as exc:
                failures.append(str(exc))

        report = run_scenario(scenario, step_checker=step_checker, registry=registry, events=False)
    except (KschedError, ValueError) as exc:
        if want_error is not None and str(want_error) in str(exc):
            return CheckResult(name, path, True)
        return CheckResult(name, path, False, f"rejected: {exc}")
    except Exception as exc:  # a crash fails this scenario, not the whole check
        return CheckResult(name, path, False, f"crashed: {type(exc).__name__}: {exc}")
    if want_error is not None:
        return CheckResult(name, path, False, f"expected the error {want_error!r}; it ran")
    if failures:
        return CheckResult(name, path, False, failures[0])
    try:
        _compare_pods(expect, report, "")
        _compare_explain(expect.get("explain") or {}, report["explain"])
    except Mismatch as exc:
        return CheckResult(name, path, False, str(exc))
    return CheckResult(name, path, True)
