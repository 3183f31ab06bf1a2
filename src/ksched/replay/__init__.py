"""Replaying a trace on the simulated clock under a configuration, and its report.

``replay(trace, config)`` gives the JSON report (docs/trace-format.md, "The report");
``compare_reports`` the difference of two; the metrics are those of ``_metrics``, the
one module that computes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import SchedulerConfig
from ..scheduler import Registry
from ..trace import Trace, TraceError, open_trace
from ._engine import PodFate as PodFate
from ._engine import ReplayRun as ReplayRun
from ._metrics import UsageTracker as UsageTracker
from ._metrics import agreement as agreement
from ._metrics import compare_reports as compare_reports
from ._metrics import percentiles as percentiles
from ._report import build_report

__all__ = [
    "PodFate",
    "ReplayRun",
    "UsageTracker",
    "agreement",
    "compare_reports",
    "percentiles",
    "replay",
    "replay_file",
]


def replay(
    trace: Trace,
    config: SchedulerConfig | None = None,
    *,
    follow_recorded: bool = False,
    seed: int = 0,
    registry: Registry | None = None,
    explain: bool = True,
    trace_name: str = "<trace>",
    config_name: str = "default",
) -> dict[str, Any]:
    """Run ``trace`` on trio's simulated clock; returns the report.

    Args:
        trace: any source's Trace; its iterators are read once.
        config: the configuration (default: the default profile).
        follow_recorded: place every pod where it was recorded, judging each decision
            of a profile's scheduler against ksched's own choice set.
        seed: seeds the tie-breaks between equally scored nodes.
        registry: plugins by name beyond (or replacing) the in-tree ones.
        explain: summarize each pod's first attempt in the report (replay mode).
        trace_name: how the report names the trace.
        config_name: how the report names the configuration.
    """
    import anyio
    import trio.testing

    from ..simulate._task_order import task_order_seeded

    run = ReplayRun(
        config or SchedulerConfig(),
        follow_recorded=follow_recorded,
        seed=seed,
        registry=registry,
        explain=explain,
    )
    try:
        with task_order_seeded(seed):
            anyio.run(
                run.run,
                trace,
                backend="trio",
                backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
            )
    except BaseExceptionGroup as group:
        # A bad record met while replaying is the caller's TraceError, not a task group's
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, TraceError):
            raise leaf from None
        raise
    return build_report(run, trace.header, trace=trace_name, config=config_name)


def replay_file(
    path: str | Path, config: SchedulerConfig | None = None, **options: Any
) -> dict[str, Any]:
    """``replay`` of a trace file, streamed as it is replayed."""
    options.setdefault("trace_name", str(path))
    with open_trace(path) as trace:
        return replay(trace, config, **options)
