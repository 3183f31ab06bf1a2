"""Typical pods: the workload's popular pod shapes and their frequencies, what FGD measures
fragmentation against.

# pkg/utils/frag.go (GetTypicalPods, SortTargetPodInDecreasingCount)
# pkg/type/resource.go (TargetPodList.Less, PodResource.Less)

Shapes are counted (a whole-GPU pod weighs ``1 + count * gpu_res_weight`` when that weight
is positive), sorted by count, most frequent first (equal counts: the larger shape first,
compared by CPU, then GPU milli, GPU count, model), and taken ``pod_increase_step`` at a
time until their cumulative count reaches ``pod_popularity_threshold`` percent of the
pods; the kept frequencies are renormalised to sum to 1. The float operations follow the
Go code's order, so the frequencies are the artifact's to the last bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from .._errors import ConfigError
from ._openb import PodShape

__all__ = ["TypicalPod", "TypicalPodsConfig", "typical_pods", "typical_pods_args"]

_DEFAULT_THRESHOLD = 60
"""``DefaultTypicalPodPopularityThreshold``: used when the threshold is not positive."""
_DEFAULT_STEP = 10
"""``DefaultTypicalPodIncreaseStep``: used when the step is not positive."""


@attrs.frozen(kw_only=True)
class TypicalPodsConfig:
    """The artifact's ``typicalPodsConfig`` (its experiments use these defaults)."""

    is_involved_cpu_pods: bool = True
    """Count CPU-only pods among the shapes."""
    pod_popularity_threshold: int = 95
    """Percent of the pods the kept shapes must cover (not positive: 60)."""
    pod_increase_step: int = 1
    """Shapes taken per round (not positive: 10)."""
    gpu_res_weight: float = 0.0
    """Extra weight per GPU of a whole-GPU pod (0: every pod counts 1)."""

    def __attrs_post_init__(self) -> None:
        if self.pod_popularity_threshold > 100:
            raise ConfigError(
                "typicalPods.podPopularityThreshold: must be at most 100, got "
                f"{self.pod_popularity_threshold}"
            )
        if self.gpu_res_weight < 0:
            raise ConfigError(
                f"typicalPods.gpuResWeight: must not be negative, got {self.gpu_res_weight}"
            )


@attrs.frozen
class TypicalPod:
    """A popular shape and its frequency among the kept shapes (they sum to 1)."""

    shape: PodShape
    percentage: float
    count: float
    """How many pods had the shape (weighted as the config says)."""


def _sort_key(item: tuple[PodShape, float]) -> tuple[Any, ...]:
    shape, count = item
    # sort.Reverse of (count, shape) ascending: every field descending.
    return (-count, -shape.cpu_milli, -shape.gpu_milli, -shape.gpu_count, _Desc(shape.gpu_model))


@attrs.frozen
class _Desc:
    """A string that sorts in reverse (for the model, the last key of the shape order)."""

    text: str

    def __lt__(self, other: _Desc) -> bool:
        return self.text > other.text


def typical_pods(
    shapes: Iterable[PodShape], config: TypicalPodsConfig | None = None
) -> tuple[list[TypicalPod], float]:
    """The typical pods of a workload and the share of its pods they cover (0..1).

    Args:
        shapes: the workload's pods as shapes (the artifact passes the original pods, sorted
            by name; the order does not change the result).
        config: the knobs (the artifact's defaults when None).
    """
    config = config or TypicalPodsConfig()
    counts: dict[PodShape, float] = {}
    total = 0.0
    for shape in shapes:
        if not config.is_involved_cpu_pods and shape.gpu_count == 0:
            continue
        weight = 1.0
        if config.gpu_res_weight > 0 and shape.gpu_milli == 1000:
            weight = 1 + float(shape.gpu_count) * config.gpu_res_weight
        counts[shape] = counts.get(shape, 0.0) + weight
        total += weight
    ranked = sorted(counts.items(), key=_sort_key)
    if not ranked:
        return [], 0.0
    threshold = config.pod_popularity_threshold
    step = config.pod_increase_step if config.pod_increase_step > 0 else _DEFAULT_STEP
    expected = float(threshold if threshold > 0 else _DEFAULT_THRESHOLD) * total / 100.0
    frequencies = [count for _, count in ranked]
    taken = wanted = 0
    cumulative = 0.0
    while cumulative < expected and taken < len(ranked):
        wanted += step
        while taken < wanted and taken < len(ranked):
            cumulative += frequencies[taken]
            frequencies[taken] = frequencies[taken] / total
            taken += 1
    if taken < len(ranked):
        kept_share = cumulative / total
        frequencies = [frequencies[j] / kept_share for j in range(taken)]
    out = [
        TypicalPod(shape=shape, percentage=frequencies[j], count=count)
        for j, (shape, count) in enumerate(ranked[:taken])
    ]
    return out, cumulative / total


def typical_pods_args(typical: Sequence[TypicalPod]) -> list[dict[str, Any]]:
    """The typical pods as FGDScore's ``typicalPods`` args (camelCase, as a
    KubeSchedulerConfiguration holds them)."""
    return [
        {
            "milliCpu": t.shape.cpu_milli,
            "milliGpu": t.shape.gpu_milli,
            "gpuNumber": t.shape.gpu_count,
            "gpuType": t.shape.gpu_model,
            "percentage": t.percentage,
        }
        for t in typical
    ]
