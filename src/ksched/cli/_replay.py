"""``ksched replay TRACE`` and ``ksched trace convert``: what-if runs of a recording.

TRACE is a trace file (``ksched record``), or a Scenario file or scheduler_perf workload
file read into the same format on the way (``ksched trace convert`` writes that out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from .._errors import KschedError
from ..config import SchedulerConfig
from ._options import plugin_option, plugin_registry

__all__ = ["add_replay_parser", "add_trace_parser"]


def add_replay_parser(sub: Any) -> None:
    """Register ``ksched replay`` on an argparse sub-parsers object."""
    p = sub.add_parser(
        "replay",
        help="replay a recorded trace under a configuration (what-if)",
        description="Run a trace on the simulated clock under a configuration and report "
        "each pod's node beside its recorded node, agreement, pending pods, time to "
        "schedule, utilization and fragmentation over time, preemptions.",
    )
    p.add_argument(
        "trace",
        metavar="TRACE",
        help="trace file (.jsonl, .jsonl.gz), scenario or scheduler_perf workload file",
    )
    p.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (default profile)")
    p.add_argument(
        "--compare",
        metavar="OTHER.yaml",
        help="replay again under this config and report the difference",
    )
    p.add_argument(
        "--follow-recorded",
        action="store_true",
        help="place each pod where it was "
        "recorded and judge each recorded decision against ksched's choice set",
    )
    p.add_argument(
        "--output",
        "-o",
        choices=("table", "json", "html"),
        help="default: table on a terminal, json otherwise",
    )
    p.add_argument("--report-file", metavar="FILE", help="write the report here, not to stdout")
    p.add_argument("--plot", metavar="FILE.png", help="draw utilization over time (ksched[plot])")
    p.add_argument("--workload", metavar="NAME", help="a scheduler_perf file's test case/workload")
    p.add_argument("--seed", type=int, default=0, help="seed of the tie-breaks (default 0)")
    p.add_argument("--rows", type=int, default=50, help="rows per table (0: all)")
    p.add_argument(
        "--no-explain",
        dest="explain",
        action="store_false",
        help="do not keep each pod's first attempt (faster on large traces)",
    )
    plugin_option(p)
    p.set_defaults(run=_replay_command)


def add_trace_parser(sub: Any) -> None:
    """Register ``ksched trace convert`` on an argparse sub-parsers object."""
    p = sub.add_parser("trace", help="trace files: convert other sources into one")
    trace_sub = p.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")
    convert = trace_sub.add_parser(
        "convert", help="write a scenario or scheduler_perf workload file as a trace"
    )
    convert.add_argument("source", metavar="FILE")
    convert.add_argument("-o", "--output", required=True, metavar="TRACE")
    convert.add_argument("--workload", metavar="NAME", help="test case/workload to convert")
    convert.set_defaults(run=_convert_command)


@contextlib.contextmanager
def _trace_of(path: str, workload: str | None) -> Iterator[Any]:
    """The trace of a trace file, or of a scenario / scheduler_perf file converted."""
    from ..trace import is_trace_file, open_trace
    from ..trace._sources import trace_of_file

    if not Path(path).exists():
        raise KschedError(f"{path}: no such file")
    if is_trace_file(path):
        with open_trace(path) as trace:
            yield trace
        return
    yield trace_of_file(path, workload=workload)


def _config(path: str | None, registry: Collection[str]) -> tuple[SchedulerConfig, str]:
    if path is None:
        return SchedulerConfig(), "default"
    from ._inputs import load_config_file

    return load_config_file(path, plugins=registry), path


def _replay_command(args: argparse.Namespace) -> int:
    from ..replay import compare_reports, replay

    registry = plugin_registry(args.plugin)
    config, config_name = _config(args.config, registry)
    other = _config(args.compare, registry) if args.compare else None
    output = args.output or ("table" if sys.stdout.isatty() and not args.report_file else "json")
    if args.plot:
        from ._plot import require_matplotlib

        require_matplotlib()
    options: dict[str, Any] = {
        "follow_recorded": args.follow_recorded,
        "seed": args.seed,
        "registry": registry,
        "explain": args.explain,
        "trace_name": args.trace,
    }
    with _trace_of(args.trace, args.workload) as trace:
        report = replay(trace, config, config_name=config_name, **options)
    comparison = second = None
    if other is not None:
        with _trace_of(args.trace, args.workload) as trace:
            second = replay(trace, other[0], config_name=other[1], **options)
        comparison = compare_reports(report, second)
    if args.plot:
        from ..replay._plot import write_replay_plot

        write_replay_plot([r for r in (report, second) if r is not None], args.plot)
    _write(args, output, report, second, comparison)
    return 0


def _write(
    args: argparse.Namespace,
    output: str,
    report: dict[str, Any],
    second: dict[str, Any] | None,
    comparison: dict[str, Any] | None,
) -> None:
    with contextlib.ExitStack() as stack:
        out = sys.stdout
        if args.report_file:
            try:
                out = stack.enter_context(open(args.report_file, "w", encoding="utf-8"))
            except OSError as exc:
                raise KschedError(f"--report-file {args.report_file}: {exc.strerror}") from None
        if output == "json":
            document: dict[str, Any] = report
            if comparison is not None:
                document = {"a": report, "b": second, "comparison": comparison}
            json.dump(document, out, indent=1)
            out.write("\n")
        elif output == "html":
            from ..replay._html import render_html

            out.write(render_html(report, comparison))
        else:
            from rich.console import Console

            from ..replay._table import render_comparison, render_replay

            console = Console(file=out, highlight=False)
            render_replay(console, report, rows=args.rows or None)
            if comparison is not None:
                console.print()
                render_comparison(console, comparison, rows=args.rows or 50)
    if args.report_file:
        print(f"report written to {args.report_file}", file=sys.stderr)
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)


def _convert_command(args: argparse.Namespace) -> int:
    from ..trace._sources import convert_file

    count = convert_file(args.source, args.output, workload=args.workload)
    print(f"{args.output}: {count} records", file=sys.stderr)
    return 0
