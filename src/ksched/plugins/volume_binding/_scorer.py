"""VolumeBindingArgs and the storage-capacity scorer.

# pkg/scheduler/apis/config/v1/defaults.go SetDefaults_VolumeBindingArgs,
# validation/validation_pluginargs.go ValidateVolumeBindingArgs,
# pkg/scheduler/framework/plugins/volumebinding/scorer.go, helper/shape_score.go
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ksched import ConfigError
from ksched.framework import MAX_NODE_SCORE, parse_plugin_args, trunc_div

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "DEFAULT_SHAPE",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
    "build_scorer",
]

DEFAULT_BIND_TIMEOUT_SECONDS = 600
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

ClassResources = Mapping[str, tuple[int, int]]
"""Storage class -> (requested, capacity) of the PVs a node's static bindings would use."""


@attrs.frozen
class UtilizationShapePoint:
    """A point of the score shape: ``utilization`` 0..100 (%) scores ``score`` 0..10."""

    utilization: int
    score: int


DEFAULT_SHAPE = (UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE), UtilizationShapePoint(100, 0))
"""The shape defaulted when StorageCapacityScoring is on: prefer the most free capacity."""


@attrs.frozen
class VolumeBindingArgs:
    """VolumeBindingArgs (v1). A non-empty ``shape`` turns on the Score.

    Upstream scores only with the StorageCapacityScoring feature gate (alpha, off), which
    also defaults the shape; here giving a shape is what turns scoring on.
    """

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[UtilizationShapePoint, ...] = ()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> VolumeBindingArgs:
        """The args from their pluginConfig mapping (None: the defaults)."""
        return parse_plugin_args(cls, raw, plugin="VolumeBinding")

    def validate(self, plugin: str) -> None:
        errs = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                "args.bindTimeoutSeconds: Invalid value: "
                f"{self.bind_timeout_seconds}: invalid BindTimeoutSeconds, should not be a "
                "negative value"
            )
        for i, point in enumerate(self.shape):
            if not 0 <= point.utilization <= MAX_UTILIZATION:
                errs.append(
                    f"args.shape[{i}].utilization: Invalid value: {point.utilization}: "
                    "not in valid range [0, 100]"
                )
            elif i > 0 and point.utilization <= self.shape[i - 1].utilization:
                errs.append(
                    f"args.shape[{i}].utilization: Invalid value: {point.utilization}: "
                    "utilization values must be sorted in increasing order"
                )
            if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
                errs.append(
                    f"args.shape[{i}].score: Invalid value: {point.score}: "
                    "not in valid range [0, 10]"
                )
        if errs:
            raise ConfigError(f"{plugin}: " + "; ".join(errs))


def _broken_linear(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = points[i - 1]
                return s0 + trunc_div((s - s0) * (p - u0), u - u0)
        return points[-1][1]

    return f


def build_scorer(shape: Sequence[UtilizationShapePoint]) -> Callable[[ClassResources], int]:
    """buildScorerFunction: each class scored on the shape at its utilization, then the
    mean over classes rounded half away from zero."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = _broken_linear([(p.utilization, p.score * scale) for p in shape])

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(classes: ClassResources) -> int:
        if not classes:
            return 0
        total = sum(class_score(req, cap) for req, cap in classes.values())
        return (2 * total + len(classes)) // (2 * len(classes))

    return score
