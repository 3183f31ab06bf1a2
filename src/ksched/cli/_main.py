"""The ``ksched`` command line: one subcommand per task, listed by ``ksched --help``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, cast

from .._errors import ConfigError, KschedError
from .._gc import few_collections, kept_for_the_run
from ..framework import PluginFactory
from ._extender import add_extender_parser
from ._gpu import add_gpu_parser
from ._options import plugin_option, plugin_registry, strict_option
from ._record import add_record_parser
from ._replay import add_replay_parser, add_trace_parser
from ._run import add_run_parser
from ._sweep import add_sweep_parser

__all__ = ["main"]

DESCRIPTION = """\
Kubernetes scheduling as a simulator and a scheduler: simulate scenarios and
manifests, check them against their expectations, run against a cluster, replay
traces. "ksched COMMAND --help" tells more about each command.

exit status:
  0  done (check: every scenario passed)
  1  check: a scenario failed its expectations
  2  bad input; the message names the file, the object and the field, and
     nothing runs
"""

# ---- plugins --------------------------------------------------------------------------


def _plugin_class(factory: PluginFactory) -> object:
    """What to inspect for a factory's extension points: its class, else a built plugin."""
    owner = getattr(factory, "__self__", None)
    if isinstance(owner, type):
        return owner
    if isinstance(factory, type):
        return factory
    return factory(None, cast(Any, None))


def _plugin_rows(specs: Sequence[str]) -> list[dict[str, Any]]:
    from ..framework.runtime import describe_fast_paths
    from ..plugins import IN_TREE
    from ..scheduler import implemented_points

    registry = plugin_registry(specs)
    installed = plugin_registry(()) if specs else registry
    rows = []
    for name, factory in sorted(registry.items(), key=lambda kv: kv[0].lower()):
        if name in IN_TREE and getattr(factory, "__module__", "").startswith("ksched.plugins"):
            source = "in-tree"
        elif name not in installed:
            source = "--plugin"
        else:
            source = "entry point"
        row: dict[str, Any] = {"name": name, "source": source}
        try:
            described = cast(Any, _plugin_class(factory))
            points = sorted(implemented_points(described), key=_point_order)
            fast_paths, turns_off = describe_fast_paths(described)
        except Exception as exc:  # a foreign factory that cannot be built without args
            points = [f"? (cannot build without args: {type(exc).__name__})"]
            fast_paths, turns_off = {}, []
        row.update(extensionPoints=points, fastPaths=fast_paths, turnsOff=turns_off)
        rows.append(row)
    return rows


def _point_order(point: str) -> int:
    from ..config import EXTENSION_POINTS

    return list(EXTENSION_POINTS).index(point) if point in EXTENSION_POINTS else 99


# ---- simulate ---------------------------------------------------------------------------


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    return Console(file=stream, highlight=False)


def _pod_key(name: str) -> str:
    return name if "/" in name else f"default/{name}"


def _pending_pods(scenario: Any) -> set[str]:
    from ..api import Pod

    objects = list(scenario.objects)
    for step in scenario.steps:
        objects.extend(step.objects)
    return {o.key for o in objects if isinstance(o, Pod) and not o.spec.node_name}


def _all_pods(scenario: Any) -> set[str] | None:
    """The pods the scenario names; None when controllers make pods of their own."""
    from ..api import Pod, PodTemplate

    objects = list(scenario.objects)
    for step in scenario.steps:
        objects.extend(step.objects)
    if any(isinstance(getattr(o, "template", None), PodTemplate) for o in objects):
        return None
    return {o.key for o in objects if isinstance(o, Pod)}


FEATURE_GATES = ("OpportunisticBatching",)


def _feature_gates(values: Sequence[str] | None) -> dict[str, bool]:
    """``--feature-gates A=true,B=false`` (repeatable), as kube-scheduler takes them."""
    gates: dict[str, bool] = {}
    for value in values or ():
        for item in filter(None, (part.strip() for part in value.split(","))):
            name, sep, raw = item.partition("=")
            if name not in FEATURE_GATES:
                known = ", ".join(FEATURE_GATES)
                raise KschedError(
                    f"--feature-gates: unknown feature gate {name!r} (known: {known})"
                )
            if not sep or raw.lower() not in ("true", "false"):
                raise KschedError(
                    f"--feature-gates: {item!r}: expected {name}=true or {name}=false"
                )
            gates[name] = raw.lower() == "true"
    return gates


def _explain_request(args: argparse.Namespace, scenario: Any) -> bool | list[str]:
    """``--explain POD`` (repeatable) or ``--explain all``; checked before anything runs."""
    names = args.explain or ()
    if args.explain_file and not names:
        raise KschedError("--explain-file: give --explain POD or --explain all with it")
    if "all" in names:
        return True
    pods = [_pod_key(p) for p in names]
    known = _all_pods(scenario) if pods else None
    for key in pods:
        if known is not None and key not in known:
            raise KschedError(f"--explain {key}: the scenario has no such pod")
    return list(dict.fromkeys(pods))


def _simulate(args: argparse.Namespace) -> int:
    with few_collections():
        return _run_simulation(args)


def _run_simulation(args: argparse.Namespace) -> int:
    from ..simulate import run_scenario
    from ..simulate._stream import ExplainSpool, JsonLinesSink, write_json, write_jsonl
    from ._inputs import load_inputs
    from ._plot import require_matplotlib, write_plot
    from ._progress import scheduling_progress, status
    from ._render import render_events, render_report

    inputs = [*(args.file or []), *(args.inputs or [])]
    if not inputs:
        raise KschedError("simulate: no input: give a FILE or -f FILE_OR_DIR")
    gates = _feature_gates(args.feature_gates)
    registry = plugin_registry(args.plugin)
    warnings: list[str] = []
    with status("reading inputs", sys.stderr), kept_for_the_run():
        scenario = load_inputs(
            inputs, config=args.config, strict=args.strict, warnings=warnings, plugins=registry
        )
    for line in warnings:
        print(f"ksched: warning: {line}", file=sys.stderr)
    output = args.output or ("table" if sys.stdout.isatty() else "json")
    explain = _explain_request(args, scenario)
    if args.plot:
        require_matplotlib()
    metrics = None
    if args.metrics:
        from ..observability import SchedulerMetrics

        metrics = SchedulerMetrics()
    with contextlib.ExitStack() as stack:
        # --explain all streams: to the file, as JSON lines on stdout, or through a
        # temporary file into the JSON document; the table keeps the few it shows.
        sink: JsonLinesSink | ExplainSpool | None = None
        if args.explain_file:
            try:
                explain_file = stack.enter_context(open(args.explain_file, "w"))
            except OSError as exc:
                raise KschedError(f"--explain-file {args.explain_file}: {exc.strerror}") from None
            sink = JsonLinesSink(explain_file)
        elif explain is True and output == "jsonl":
            sink = JsonLinesSink(sys.stdout)
        elif explain is True and output == "json":
            sink = stack.enter_context(ExplainSpool())
        # The bar counts the pending pods; it is drawn only on a terminal.
        pending = _pending_pods(scenario) if sys.stderr.isatty() else set()
        with scheduling_progress(pending, sys.stderr) as progress:
            report = run_scenario(
                scenario,
                seed=args.seed,
                registry=registry,
                explain=explain,
                explain_sink=sink,
                events=args.events,
                history=bool(args.plot),
                on_event=progress.on_event if progress is not None else None,
                opportunistic_batching=gates.get("OpportunisticBatching", True),
                metrics=metrics,
            )
        if metrics is not None:
            _write_metrics(metrics, args.metrics)
        if args.plot:
            write_plot(report, args.plot)
            del report["history"]
        if output == "json":
            spooled = sink.entries() if isinstance(sink, ExplainSpool) else None
            write_json(report, sys.stdout, explain=spooled)
            return 0
        if output == "jsonl":
            write_jsonl(report, sys.stdout)
            return 0
        console = _console(sys.stdout)
        if args.events:
            render_events(console, report["events"])
            console.print()
        render_report(console, report, rows=args.rows or None)
        if args.explain_file:
            written = sink.count if sink is not None else 0
            console.print(f"\nexplanations of {written} pod(s) written to {args.explain_file}")
        else:
            _render_explanations(console, report, explain)
        if args.plot:
            console.print(f"\nplot written to {args.plot}")
    return 0


def _write_metrics(metrics: Any, path: str) -> None:
    """The run's final metrics in Prometheus text format (durations in simulated time)."""
    from prometheus_client import generate_latest

    try:
        Path(path).write_bytes(generate_latest(metrics.registry))
    except OSError as exc:
        raise KschedError(f"--metrics {path}: {exc.strerror}") from None


def _render_explanations(console: Any, report: dict[str, Any], explain: bool | list[str]) -> None:
    """Each pod's explanation, or why there is none to show."""
    from ._render import render_explain

    for key in list(report["explain"]) if explain is True else explain or ():
        if key in report["explain"]:
            render_explain(console, report, key)
            continue
        state = report["pods"].get(key)
        why = (
            "it no longer exists"
            if state is None
            else f"it was never attempted (phase {state['phase']}, node {state.get('node') or '-'})"
        )
        console.print(f"\n[bold]explain {key}[/]: no scheduling attempt to show: {why}")


# ---- check ------------------------------------------------------------------------------


def _scenario_files(paths: Sequence[str]) -> list[Path]:
    """Every scenario file named or below a directory named; a path with none is bad input."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            below = [
                *sorted(p for p in path.rglob("*.yaml") if p.is_file()),
                *sorted(p for p in path.rglob("*.yml") if p.is_file()),
            ]
            if not below:
                raise KschedError(f"check: {path}: no .yaml or .yml files in this directory")
            found.extend(below)
        elif path.exists():
            found.append(path)
        else:
            raise KschedError(f"check: {path}: no such file or directory")
    return found


def _check(args: argparse.Namespace) -> int:
    from ..simulate import check_scenario

    files = _scenario_files(args.paths)
    registry = plugin_registry(args.plugin)
    passed = failed = 0
    for path in files:
        warnings: list[str] = []
        result = check_scenario(path, registry=registry, strict=args.strict, warnings=warnings)
        for line in warnings:
            print(f"ksched: warning: {line}", file=sys.stderr)
        if result.passed:
            passed += 1
            print(f"PASS {result.name}")
        else:
            failed += 1
            print(f"FAIL {result.name}: {result.detail}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


# ---- config, plugins, bench -------------------------------------------------------------


def _config_defaults(args: argparse.Namespace) -> int:
    from ..config import SchedulerConfig, config_yaml

    sys.stdout.write(config_yaml(SchedulerConfig(), plugin_args=True))
    return 0


def _config_validate(args: argparse.Namespace) -> int:
    from ..cluster import InMemoryCluster
    from ..scheduler import Scheduler
    from ._inputs import load_config_file

    config = load_config_file(args.file)
    registry = plugin_registry(args.plugin)
    try:
        Scheduler(config, InMemoryCluster(), registry=registry)
    except ConfigError as exc:
        raise ConfigError(f"{args.file}: {exc}") from None
    names = ", ".join(p.scheduler_name for p in config.profiles)
    print(f"{args.file}: valid ({len(config.profiles)} profile(s): {names})")
    return 0


def _plugins(args: argparse.Namespace) -> int:
    from ._render import render_plugins

    rows = _plugin_rows(args.plugin)
    if (args.output or ("table" if sys.stdout.isatty() else "json")) == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render_plugins(_console(sys.stdout), rows)
    return 0


def _bench_module() -> Any | None:
    try:
        return importlib.import_module("ksched.bench")
    except ModuleNotFoundError as exc:
        if exc.name not in ("ksched.bench", "ksched"):
            raise
        return None


def _bench_unavailable(args: argparse.Namespace) -> int:
    raise KschedError("bench: the ksched.bench package is not installed")


BENCH_DESCRIPTION = """\
Run kube-scheduler's scheduler_perf workloads against ksched: read scheduler_perf
workload files (test cases, workloads with params, object templates), run the
chosen workloads on an embedded cluster and report SchedulingThroughput and
attempt latency the way scheduler_perf does.
"""


def _add_bench(sub: Any, argv: Sequence[str]) -> None:
    help_text = "run scheduler_perf-style workloads and report throughput"
    if not argv or argv[0] != "bench":
        sub.add_parser("bench", help=help_text).set_defaults(run=_bench_unavailable)
        return
    module = _bench_module()
    if module is None:
        bench = sub.add_parser("bench", help=help_text)
        bench.add_argument("rest", nargs=argparse.REMAINDER)
        bench.set_defaults(run=_bench_unavailable)
        return
    bench = sub.add_parser(
        "bench",
        help=help_text,
        description=BENCH_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.configure_parser(bench)
    bench.set_defaults(run=lambda args: int(module.main(args)))


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ksched",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"ksched {_version()}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = sub.add_parser(
        "simulate",
        help="run a scenario or plain manifests and report where every pod went",
        description="Run a scenario (or plain Kubernetes manifests) on a simulated clock.",
    )
    sim.add_argument("file", nargs="*", help="scenario or manifest file or directory")
    sim.add_argument(
        "-f",
        "--filename",
        dest="inputs",
        action="append",
        metavar="FILE_OR_DIR",
        help="scenario, manifests (multi-document YAML, kind: List) or a directory "
        "of them (repeatable)",
    )
    sim.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration to use")
    sim.add_argument(
        "--output",
        "-o",
        choices=("json", "jsonl", "table"),
        help="default: table on a terminal, json otherwise; jsonl: one JSON object per line",
    )
    sim.add_argument("--seed", type=int, default=0, help="seed of the tie-breaks (default 0)")
    sim.add_argument("--events", action="store_true", help="print the timeline of events")
    sim.add_argument(
        "--explain",
        action="append",
        metavar="POD",
        help="show a pod's filter verdicts and score matrix ([namespace/]name; repeatable); "
        "'all': every pod that had an attempt",
    )
    sim.add_argument(
        "--explain-file",
        metavar="FILE",
        help="write the explanations to FILE as JSON lines, as they are made, "
        "instead of into the report",
    )
    sim.add_argument("--plot", metavar="FILE.png", help="draw utilization over time (ksched[plot])")
    sim.add_argument(
        "--metrics",
        metavar="FILE",
        help="write the scheduler's final metrics to FILE in Prometheus text format",
    )
    sim.add_argument(
        "--rows", type=int, default=100, help="rows per table in table output (0: all)"
    )
    sim.add_argument(
        "--feature-gates",
        action="append",
        metavar="NAME=BOOL,...",
        help="turn features on or off: OpportunisticBatching (default true)",
    )
    plugin_option(sim)
    strict_option(sim)
    sim.set_defaults(run=_simulate)

    chk = sub.add_parser("check", help="run scenarios and compare with their expect blocks")
    chk.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    plugin_option(chk)
    strict_option(chk)
    chk.set_defaults(run=_check)

    cfg = sub.add_parser("config", help="print or validate a KubeSchedulerConfiguration")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    defaults = cfg_sub.add_parser("defaults", help="print the default configuration as YAML")
    defaults.set_defaults(run=_config_defaults)
    validate = cfg_sub.add_parser("validate", help="check a KubeSchedulerConfiguration file")
    validate.add_argument("file", metavar="FILE")
    plugin_option(validate)
    validate.set_defaults(run=_config_validate)

    plugins = sub.add_parser("plugins", help="list the registered plugins")
    plugins.add_argument("--output", "-o", choices=("json", "table"))
    plugin_option(plugins)
    plugins.set_defaults(run=_plugins)

    _add_bench(sub, argv)
    add_run_parser(sub)
    add_extender_parser(sub)
    add_record_parser(sub)
    add_replay_parser(sub)
    add_trace_parser(sub)
    add_gpu_parser(sub)
    add_sweep_parser(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (importlib.metadata reads it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ksched")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ksched`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser(argv).parse_args(argv)
    try:
        code: int = args.run(args)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as command-line tools do.
        sys.stderr.close()
        return 0
    except (KschedError, ValueError, OSError) as exc:
        print(f"ksched: error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    raise SystemExit(main())
