"""Scenario files: a cluster, a configuration and steps (scenario-format.md)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableSequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import ConfigError, KschedError, ManifestError
from .._yaml import YamlInputError, read_yaml
from ..api import (
    KubeObject,
    Pod,
    PodTemplate,
    PriorityClass,
    missing_priority_class,
    parse_duration,
    read_manifest,
    store_kind,
)
from ..cluster import object_key
from ..config import SchedulerConfig, parse_config

__all__ = [
    "DEFAULT_SETTLE_MAX",
    "Scenario",
    "ScenarioError",
    "Step",
    "admit_priorities",
    "load_scenario",
    "parse_scenario",
]

DEFAULT_SETTLE_MAX = 3600.0


class ScenarioError(KschedError, ValueError):
    """A scenario file that cannot be run (the message names the file and field)."""


@attrs.frozen
class Step:
    kind: str  # settle | advance | create | update | delete | scale | none
    objects: tuple[KubeObject, ...] = ()
    deletes: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    expect: Mapping[str, Any] | None = None
    scale: tuple[str, str, int] | None = None
    """``(kind, namespace/name, replicas)`` of a ``scale`` step."""


@attrs.frozen
class Scenario:
    name: str
    source: str
    config: SchedulerConfig
    objects: tuple[KubeObject, ...]
    steps: tuple[Step, ...]
    expect: Mapping[str, Any]
    path: str = "<scenario>"


@attrs.define
class _Reading:
    """How a Scenario's objects are read: strictness, and where warnings go."""

    strict: bool = True
    warnings: MutableSequence[str] | None = None

    def fields(self, data: Mapping[str, Any], known: frozenset[str], where: str) -> None:
        """An unknown field is an error (a warning when not strict): a typo in ``expect``
        would otherwise make a check pass without checking anything."""
        for key in data:
            if key in known:
                continue
            message = f'{where}: unknown field "{key}"'
            if self.strict:
                raise ScenarioError(message)
            if self.warnings is not None:
                self.warnings.append(message)


_SCENARIO_FIELDS = frozenset(
    {"apiVersion", "kind", "metadata", "config", "objects", "steps", "expect"}
)
_METADATA_FIELDS = frozenset({"name", "source", "labels", "annotations"})
_EXPECT_FIELDS = frozenset({"placements", "pods", "evicted", "nominated", "explain", "error"})
_STEP_EXPECT_FIELDS = frozenset({"placements", "pods", "evicted", "nominated"})


def _objects(raw: Any, where: str, how: _Reading) -> tuple[KubeObject, ...]:
    if not isinstance(raw, list):
        raise ScenarioError(f"{where}: expected a list of objects")
    out = []
    for i, item in enumerate(raw):
        found: list[str] = []
        try:
            out.append(read_manifest(item, strict=how.strict, warnings=found, names=False))
        except ManifestError as exc:
            lines = str(exc).splitlines()
            raise ScenarioError("\n".join(f"{where}[{i}]: {line}" for line in lines)) from None
        if how.warnings is not None:
            how.warnings.extend(f"{where}[{i}]: {w}" for w in found)
    return tuple(out)


_CLUSTER_SCOPED = frozenset(
    {
        "Node",
        "PriorityClass",
        "Namespace",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "DeviceClass",
        "ResourceSlice",
    }
)
_STEP_ACTIONS = ("settle", "advance", "create", "update", "delete", "scale")
SCALABLE = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job")


def _scale(value: Any, where: str, expect: Mapping[str, Any] | None) -> Step:
    if not isinstance(value, Mapping) or not value.get("kind") or not value.get("name"):
        raise ScenarioError(f"{where}.scale: needs kind, name and replicas")
    unknown = set(value) - {"kind", "name", "namespace", "replicas"}
    if unknown:
        raise ScenarioError(f'{where}.scale: unknown field "{sorted(unknown)[0]}"')
    kind = str(value["kind"])
    if kind not in SCALABLE:
        raise ScenarioError(f"{where}.scale.kind: cannot scale a {kind} (one of {SCALABLE})")
    replicas = value.get("replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ScenarioError(f"{where}.scale.replicas: must be an integer >= 0, got {replicas!r}")
    key = f"{value.get('namespace') or 'default'}/{value['name']}"
    return Step("scale", scale=(kind, key, replicas), expect=expect)


def _step(raw: Any, where: str, how: _Reading) -> Step:
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
    if expect is not None:
        how.fields(expect, _STEP_EXPECT_FIELDS, f"{where}.expect")
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
        return Step(action, objects=_objects(value, f"{where}.{action}", how), expect=expect)
    if action == "scale":
        return _scale(value, where, expect)
    if not isinstance(value, list):
        raise ScenarioError(f"{where}.delete: expected a list")
    deletes = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not item.get("kind") or not item.get("name"):
            raise ScenarioError(f"{where}.delete[{i}]: needs kind and name")
        kind, name = store_kind(item), str(item["name"])  # apiVersion tells the PodGroups apart
        cluster_scoped = kind in _CLUSTER_SCOPED
        key = name if cluster_scoped else f"{item.get('namespace') or 'default'}/{name}"
        deletes.append((kind, key))
    return Step("delete", deletes=tuple(deletes), expect=expect)


def parse_scenario(
    data: Any,
    *,
    path: str = "<scenario>",
    strict: bool = True,
    warnings: MutableSequence[str] | None = None,
) -> Scenario:
    """A Scenario from its dict form. Raises ScenarioError / ConfigError naming the field.

    Objects are checked as the API server checks them (``read_manifest``) and the
    Scenario's own keys by name; with ``strict`` False unknown fields go to ``warnings``
    instead of failing.
    """
    how = _Reading(strict, warnings)
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{path}: expected a Scenario mapping")
    if data.get("kind", "Scenario") != "Scenario":
        raise ScenarioError(f"{path}: kind: expected Scenario, got {data.get('kind')!r}")
    how.fields(data, _SCENARIO_FIELDS, path)
    meta = data.get("metadata") or {}
    if isinstance(meta, Mapping):
        how.fields(meta, _METADATA_FIELDS, f"{path}: metadata")
    name = str(meta.get("name") or Path(path).stem)
    try:
        config = parse_config(data.get("config"))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    objects = _objects(data.get("objects") or [], f"{path}: objects", how)
    raw_steps = data.get("steps")
    if raw_steps is None:
        steps: tuple[Step, ...] = (Step("settle", seconds=DEFAULT_SETTLE_MAX),)
    elif not isinstance(raw_steps, list):
        raise ScenarioError(f"{path}: steps: expected a list")
    else:
        steps = tuple(_step(s, f"{path}: steps[{i}]", how) for i, s in enumerate(raw_steps))
    expect = data.get("expect") or {}
    if not isinstance(expect, Mapping):
        raise ScenarioError(f"{path}: expect: expected a mapping")
    how.fields(expect, _EXPECT_FIELDS, f"{path}: expect")
    return Scenario(name, str(meta.get("source") or ""), config, objects, steps, expect, path)


def load_scenario(
    path: str | Path, *, strict: bool = True, warnings: MutableSequence[str] | None = None
) -> Scenario:
    """Read a scenario file (a repeated YAML key is an error, or a warning unless ``strict``)."""
    text = Path(path).read_text()
    try:
        docs = read_yaml(text, str(path), strict=strict, warnings=warnings)
    except YamlInputError as exc:
        raise ScenarioError(str(exc)) from None
    if len(docs) > 1:
        raise ScenarioError(f"{path}: expected one Scenario document, got {len(docs)}")
    data = docs[0] if docs else None
    return parse_scenario(data, path=str(path), strict=strict, warnings=warnings)


def _pod_templates(obj: KubeObject) -> Iterator[tuple[str, str, str]]:
    """(pod name, field path, priorityClassName) of a pod or a workload's pod template."""
    if isinstance(obj, Pod):
        yield obj.name, "spec.priorityClassName", obj.spec.priority_class_name
        return
    template = getattr(obj, "template", None)
    if isinstance(template, PodTemplate):  # (a Workload's ``template`` is a method)
        # the workload is admitted; each pod its controller creates is refused
        name = f"{obj.metadata.name}-..."  # type: ignore[union-attr]  # workloads have one
        yield name, "spec.template.spec.priorityClassName", template.spec.priority_class_name


def admit_priorities(
    scenario: Scenario, defined_in: Mapping[tuple[str, str], str] | None = None
) -> None:
    """The Priority admission plugin: a pod may only name a PriorityClass that exists.

    The classes are those the scenario creates anywhere (before or after the pod). A
    workload naming a missing class is refused too: the API server would take it and
    refuse every pod its controller creates, so the simulation could only mislead.
    ``defined_in`` says where each object was read, for the message.

    Raises:
        ScenarioError: names the file, the object and ``spec.priorityClassName``.
    """
    objects: list[KubeObject] = list(scenario.objects)
    for step in scenario.steps:
        objects.extend(step.objects)
    classes = [o.name for o in objects if isinstance(o, PriorityClass)]
    for obj in objects:
        for name, path, class_name in _pod_templates(obj):
            refusal = missing_priority_class("pods", name, class_name, classes)
            if refusal is not None:
                key = (type(obj).__name__, object_key(obj))
                where = (defined_in or {}).get(key, scenario.path)
                if not isinstance(obj, Pod):
                    refusal = f"its pods would be refused: {refusal}"
                raise ScenarioError(f"{where}: {key[0]} {key[1]}: {path}: {refusal}")
