"""startCollectingMetrics / stopCollectingMetrics: a measured window across several ops.

# test/integration/scheduler_perf/operations.go startCollectingMetricsOp,
# stopCollectingMetricsOp; executor.go runStartCollectingMetricsOp, runStopCollectingMetrics
The window measures the pods of ``namespaces`` whose labels match ``labelSelector``
(throughputCollector's filter): their binds set SchedulingThroughput, their attempts the
latency figures. Windows do not overlap; a createPods op with ``collectMetrics`` is a window
of its own namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._delete import selector
from ._errors import WorkloadError
from ._testcase import strings

__all__ = [
    "START_FIELDS",
    "STOP_FIELDS",
    "StartCollectingMetrics",
    "StopCollectingMetrics",
    "parse_start",
]

START_FIELDS = {"opcode", "name", "namespaces", "labelSelector"}
STOP_FIELDS = {"opcode"}
OVERLAP = (
    "metrics collection is overlapping. Probably second collector was started before "
    "stopping a previous one"
)
MISSING_START = "missing startCollectingMetrics operation before stopping"


@attrs.frozen(kw_only=True)
class StartCollectingMetrics:
    """Open the measured window over ``namespaces`` and ``label_selector``."""

    index: int
    name: str = ""
    namespaces: tuple[str, ...] = ()
    label_selector: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class StopCollectingMetrics:
    """Close the measured window; its figures are the run's result."""

    index: int


def parse_start(op: Mapping[str, Any], index: int, where: str) -> StartCollectingMetrics:
    """The startCollectingMetrics op at ``index``. Raises WorkloadError without namespaces."""
    namespaces = strings(op.get("namespaces"), f"{where}: namespaces")
    if not namespaces:
        raise WorkloadError(f"{where}: namespaces cannot be empty")
    return StartCollectingMetrics(
        index=index,
        name=str(op.get("name") or ""),
        namespaces=namespaces,
        label_selector=selector(op, f"{where}: labelSelector"),
    )
