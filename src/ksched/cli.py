"""The ``ksched`` command: ``simulate`` a scenario, ``check`` scenarios against expectations.

Exit status: 0 ok, 1 ``check`` failures, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._errors import KschedError

__all__ = ["main"]


def _scenario_files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.yaml") if p.is_file())
            yield from sorted(p for p in path.rglob("*.yml") if p.is_file())
        else:
            yield path


def _print_table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    title = f"scenario {report['scenario']}: t={report['time']:g}s"
    if not report["settled"]:
        title += " (did not settle)"
    table = Table(title=title)
    for column in ("pod", "node", "phase", "attempts", "reason"):
        table.add_column(column)
    for key, pod in sorted(report["pods"].items()):
        table.add_row(
            key,
            pod.get("node") or "-",
            pod["phase"],
            str(pod["attempts"]),
            pod.get("message") or "",
        )
    console.print(table)
    if report["evicted"]:
        console.print(f"evicted: {', '.join(report['evicted'])}")


def _simulate(args: argparse.Namespace) -> int:
    from .simulate import load_scenario, run_scenario

    scenario = load_scenario(args.file)
    report = run_scenario(scenario, seed=args.seed)
    if not args.events:
        report.pop("events", None)
    output = args.output or ("table" if sys.stdout.isatty() else "json")
    if output == "json":
        json.dump(report, sys.stdout, indent=2, sort_keys=False)
        sys.stdout.write("\n")
    else:
        _print_table(report)
    return 0


def _check(args: argparse.Namespace) -> int:
    from .simulate import check_scenario

    passed = failed = 0
    files = list(_scenario_files(args.paths))
    for path in files:
        if not path.exists():
            print(f"FAIL {path}: no such file")
            failed += 1
            continue
        result = check_scenario(path)
        if result.passed:
            passed += 1
            print(f"PASS {result.name}")
        else:
            failed += 1
            print(f"FAIL {result.name}: {result.detail}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ksched`` command."""
    parser = argparse.ArgumentParser(prog="ksched", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="run a scenario and report where every pod went")
    sim.add_argument("file")
    sim.add_argument("--output", choices=("json", "table"))
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--events", action="store_true", help="include the event timeline")
    sim.set_defaults(run=_simulate)
    chk = sub.add_parser("check", help="run scenarios and compare with their expect blocks")
    chk.add_argument("paths", nargs="+")
    chk.set_defaults(run=_check)
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except (KschedError, ValueError, OSError) as exc:
        print(f"ksched: error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    raise SystemExit(main())
