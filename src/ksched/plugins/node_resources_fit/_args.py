"""NodeResourcesFitArgs: scoring strategy, resources, shape; parsing and validation.

# pkg/scheduler/apis/config/v1/defaults.go, validation/validation_pluginargs.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ..._errors import ConfigError
from ._constants import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    NAME,
    REQUESTED_TO_CAPACITY_RATIO,
    STRATEGIES,
)
from ._names import (
    qualified_name_errors,
)

# ---- args ---------------------------------------------------------------------------------


@attrs.frozen
class ResourceSpec:
    """A resource the scorer looks at, with its weight."""

    name: str
    weight: int = 1


@attrs.frozen
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio shape: utilization 0..100 -> score 0..10."""

    utilization: int
    score: int


DEFAULT_RESOURCES: Final = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@attrs.frozen
class ScoringStrategy:
    """``scoringStrategy``; ``shape`` is ``requestedToCapacityRatio.shape`` (None: not given)."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] | None = None


@attrs.frozen
class NodeResourcesFitArgs:
    """NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1), defaults applied."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
        """Read the pluginConfig ``args`` (camelCase), applying the v1 defaults."""
        if raw is None:
            return cls()
        _check_mapping(
            raw, "args", {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}
        )
        strategy_raw = raw.get("scoringStrategy")
        if strategy_raw is None:
            strategy = ScoringStrategy()
        else:
            _check_mapping(
                strategy_raw,
                "args.scoringStrategy",
                {"type", "resources", "requestedToCapacityRatio"},
            )
            strategy_type = strategy_raw.get("type", "")
            if not isinstance(strategy_type, str):
                raise _error("args.scoringStrategy.type", "must be a string")
            resources = parse_resource_specs(
                strategy_raw.get("resources"), "args.scoringStrategy.resources"
            )
            shape: tuple[UtilizationShapePoint, ...] | None = None
            ratio = strategy_raw.get("requestedToCapacityRatio")
            if ratio is not None:
                _check_mapping(ratio, "args.scoringStrategy.requestedToCapacityRatio", {"shape"})
                shape = _parse_shape(
                    ratio.get("shape"), "args.scoringStrategy.requestedToCapacityRatio.shape"
                )
            strategy = ScoringStrategy(
                type=strategy_type, resources=resources or DEFAULT_RESOURCES, shape=shape
            )
        return cls(
            ignored_resources=_str_list(raw.get("ignoredResources"), "args.ignoredResources"),
            ignored_resource_groups=_str_list(
                raw.get("ignoredResourceGroups"), "args.ignoredResourceGroups"
            ),
            scoring_strategy=strategy,
        )


def _error(path: str, detail: str, plugin: str = NAME) -> ConfigError:
    return ConfigError(f"{plugin}: {path}: {detail}")


def _check_mapping(value: Any, path: str, known: set[str], plugin: str = NAME) -> None:
    if not isinstance(value, Mapping):
        raise _error(path, f"must be a mapping, not {type(value).__name__}", plugin)
    # apiVersion/kind may accompany typed args in a KubeSchedulerConfiguration.
    unknown = sorted(set(value) - known - {"apiVersion", "kind"})
    if unknown:
        raise _error(f"{path}.{unknown[0]}", "unknown field", plugin)


def _str_list(value: Any, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _error(path, "must be a list of strings")
    return tuple(value)


def _int(value: Any, path: str, plugin: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(path, f"must be an integer, not {value!r}", plugin)
    return value


def parse_resource_specs(value: Any, path: str, plugin: str = NAME) -> tuple[ResourceSpec, ...]:
    """A ``resources`` list; a missing or zero weight defaults to 1 (v1 defaulting)."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise _error(path, "must be a list", plugin)
    specs = []
    for i, item in enumerate(value):
        _check_mapping(item, f"{path}[{i}]", {"name", "weight"}, plugin)
        name = item.get("name")
        if not isinstance(name, str):
            raise _error(f"{path}[{i}].name", "must be a string", plugin)
        weight = _int(item.get("weight", 0), f"{path}[{i}].weight", plugin)
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs)


def _parse_shape(value: Any, path: str) -> tuple[UtilizationShapePoint, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise _error(path, "must be a list")
    points = []
    for i, item in enumerate(value):
        _check_mapping(item, f"{path}[{i}]", {"utilization", "score"})
        points.append(
            UtilizationShapePoint(
                _int(item.get("utilization", 0), f"{path}[{i}].utilization", NAME),
                _int(item.get("score", 0), f"{path}[{i}].score", NAME),
            )
        )
    return tuple(points)


def _validate_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[str]:
    if not shape:
        return [f"{path}: Required value: at least one point must be specified"]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                f"{path}[{i}].utilization: Invalid value: {shape[i].utilization}: "
                "values must be sorted in increasing order"
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            errs.append(
                f"{path}[{i}].utilization: Invalid value: {point.utilization}: "
                f"not in valid range [0, {MAX_UTILIZATION}]"
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                f"{path}[{i}].score: Invalid value: {point.score}: "
                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
    return errs


def validate_fit_args(args: NodeResourcesFitArgs) -> None:
    """Upstream ValidateNodeResourcesFitArgs; raises ConfigError listing every problem."""
    errs: list[str] = []
    for i, res in enumerate(args.ignored_resources):
        path = f"args.ignoredResources[{i}]"
        errs += [f"{path}: Invalid value: {res!r}: {e}" for e in qualified_name_errors(res)]
    for i, group in enumerate(args.ignored_resource_groups):
        path = f"args.ignoredResourceGroups[{i}]"
        if "/" in group:
            errs.append(f"{path}: Invalid value: {group!r}: resource group name can't contain '/'")
        errs += [f"{path}: Invalid value: {group!r}: {e}" for e in qualified_name_errors(group)]
    strategy = args.scoring_strategy
    if strategy.type not in STRATEGIES:
        supported = ", ".join(f'"{s}"' for s in STRATEGIES)
        errs.append(
            f'args.scoringStrategy.type: Unsupported value: "{strategy.type}": '
            f"supported values: {supported}"
        )
    for i, spec in enumerate(strategy.resources):
        if not 0 < spec.weight <= 100:
            errs.append(
                f"args.scoringStrategy.resources[{i}].weight: Invalid value: {spec.weight}: "
                f"resource weight of {spec.name} not in valid range (0, 100]"
            )
    if strategy.shape is not None:
        errs += _validate_shape(strategy.shape, "args.scoringStrategy.shape")
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        errs.append(
            "args.scoringStrategy.requestedToCapacityRatio: Required value: "
            f"the {REQUESTED_TO_CAPACITY_RATIO} strategy needs a shape"
        )
    if errs:
        raise ConfigError(f"{NAME}: " + "; ".join(errs))
