"""Scenario files: a cluster, a configuration and steps (scenario-format.md)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from .._errors import ConfigError, KschedError, ManifestError
from ..api import KubeObject, parse_duration, read_object
from ..config import SchedulerConfig, parse_config

__all__ = [
    "DEFAULT_SETTLE_MAX",
    "Scenario",
    "ScenarioError",
    "Step",
    "load_scenario",
    "parse_scenario",
]

DEFAULT_SETTLE_MAX = 3600.0

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader when PyYAML has it (ten times faster on 10k-pod files)."""


class ScenarioError(KschedError, ValueError):
    """A scenario file that cannot be run (the message names the file and field)."""


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
_CLUSTER_SCOPED = frozenset(
    {
        "Node",
        "PriorityClass",
        "Namespace",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
    }
)


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
        cluster_scoped = kind in _CLUSTER_SCOPED
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
