"""``check_scenario``: run a scenario file and compare it with its ``expect`` block."""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import ConfigError, KschedError
from .._yaml import YamlInputError, read_yaml
from ..config import SchedulerConfig, check_plugin_names
from ..plugins import IN_TREE
from ..scheduler import Registry
from ._runner import run_scenario
from ._scenario import admit_priorities, parse_scenario


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
        if "decisions" in want and want["decisions"] != got.get("decisions"):
            raise Mismatch(
                f"explain.{key}.decisions: expected {want['decisions']!r}, "
                f"got {got.get('decisions')!r}"
            )
        group = got.get("podGroup") or {}
        for field, value in (want.get("podGroup") or {}).items():
            if group.get(field) != value:
                raise Mismatch(
                    f"explain.{key}.podGroup.{field}: expected {value!r}, got {group.get(field)!r}"
                )


def _check_plugins(config: SchedulerConfig, registry: Registry | None, path: str) -> None:
    """A plugin the scenario's configuration names and nothing registers: the file and field."""
    try:
        check_plugin_names(config, {*IN_TREE, *(registry or ())})
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


@attrs.frozen
class CheckResult:
    name: str
    path: str
    passed: bool
    detail: str = ""


def check_scenario(
    path: str | Path,
    *,
    registry: Registry | None = None,
    strict: bool = True,
    warnings: MutableSequence[str] | None = None,
) -> CheckResult:
    """Run a scenario file and compare it with its ``expect`` block.

    With ``strict`` False, unknown fields in its objects and repeated YAML keys are not
    an error (the repeated keys go to ``warnings``).
    """
    path = str(path)
    name = Path(path).stem
    try:
        docs = read_yaml(Path(path).read_text(), path, strict=strict, warnings=warnings)
    except OSError as exc:
        return CheckResult(name, path, False, f"cannot read: {exc.strerror or exc}")
    except YamlInputError as exc:
        return CheckResult(name, path, False, f"cannot read: {exc}")
    if len(docs) > 1:
        detail = f"cannot read: {path}: expected one Scenario document, got {len(docs)}"
        return CheckResult(name, path, False, detail)
    raw = docs[0] if docs else None
    expect = (raw or {}).get("expect") or {} if isinstance(raw, Mapping) else {}
    if isinstance(raw, Mapping):
        name = str((raw.get("metadata") or {}).get("name") or name)
    want_error = expect.get("error")
    explain_expect = expect.get("explain") or {}
    if not isinstance(explain_expect, Mapping):
        return CheckResult(name, path, False, "expect.explain: expected a mapping of pod keys")
    try:
        scenario = parse_scenario(raw, path=path, strict=strict)
        _check_plugins(scenario.config, registry, path)
        admit_priorities(scenario)
        failures: list[str] = []

        def step_checker(index: int, step_expect: Mapping[str, Any], state: dict[str, Any]) -> None:
            if failures:
                return
            try:
                _compare_pods(step_expect, state, f"steps[{index}].expect.")
            except Mismatch as exc:
                failures.append(str(exc))

        report = run_scenario(
            scenario,
            step_checker=step_checker,
            registry=registry,
            explain=list(explain_expect),
            events=False,
        )
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
        _compare_explain(explain_expect, report["explain"])
    except Mismatch as exc:
        return CheckResult(name, path, False, str(exc))
    return CheckResult(name, path, True)
