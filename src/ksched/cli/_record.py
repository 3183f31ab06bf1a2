"""``ksched record``: write a real cluster's initial state and changes as a trace."""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

import anyio

from .._errors import KschedError

if TYPE_CHECKING:  # the command's modules are imported when it runs, not by `ksched --help`
    from ..kube import KubeConfig
    from ..trace import TraceWriter

__all__ = ["add_record_parser"]

log = logging.getLogger("ksched.kube")


def add_record_parser(sub: Any) -> None:
    """Register ``ksched record`` on an argparse sub-parsers object."""
    p = sub.add_parser(
        "record",
        help="record a cluster (kube-apiserver) as a trace to replay",
        description="List and watch a kube-apiserver (read-only) and write its initial state "
        "and every change with its time as a trace (JSON lines; gzip when FILE ends in .gz). "
        "Stops on SIGINT/SIGTERM or after --duration.",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the trace to write")
    p.add_argument("--kubeconfig", metavar="FILE", help="default: the in-cluster account")
    p.add_argument("--master", metavar="URL", help="API server address (overrides kubeconfig)")
    p.add_argument("--duration", metavar="DURATION", help="stop after this long (e.g. 24h, 90s)")
    p.add_argument(
        "--anonymize",
        action="store_true",
        help="replace names and label values consistently (docs/trace-format.md)",
    )
    p.add_argument(
        "--qps", type=float, default=50.0, help="requests per second to the API server (50)"
    )
    p.add_argument("-v", "--verbose", action="count", default=0, help="log more (-v, -vv)")
    p.set_defaults(run=_command)


def _command(args: argparse.Namespace) -> int:
    from ..api import parse_duration
    from ..config import SchedulerConfig
    from ..kube import resolve_kubeconfig
    from ..observability._logging import configure_logging
    from ..trace import TraceHeader, TraceWriter

    duration = None
    if args.duration is not None:
        try:
            duration = parse_duration(args.duration)
        except ValueError as exc:
            raise KschedError(f"--duration: {exc}") from None
    kube = resolve_kubeconfig(args.kubeconfig, SchedulerConfig(), args.master)
    configure_logging(args.verbose, "text", sys.stderr)
    start = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    header = TraceHeader(
        source="record",
        start=start,
        cluster=None if args.anonymize else kube.server,
        anonymized=args.anonymize,
    )
    try:
        writer = TraceWriter(args.output, header)
    except OSError as exc:
        raise KschedError(f"--output {args.output}: {exc.strerror or exc}") from None
    backend = os.environ.get("KSCHED_ASYNC_BACKEND", "asyncio")
    with writer:
        end, counts = anyio.run(_record, kube, writer, args, duration, backend=backend)
    summary = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()))
    print(f"ksched record: {args.output}: {end:.1f}s recorded ({summary})", file=sys.stderr)
    return 0


async def _record(
    kube: KubeConfig, writer: TraceWriter, args: argparse.Namespace, duration: float | None
) -> tuple[float, dict[str, int]]:
    from ..kube import KubeClient, TokenBucket
    from ..kube._record import Recorder
    from ..trace import Anonymizer, BufferedTraceWriter

    stop = anyio.Event()
    buffered = BufferedTraceWriter(writer)
    anonymizer = Anonymizer() if args.anonymize else None
    async with kube.http_client() as http, kube.http_client() as watch_http:
        client = KubeClient(http, TokenBucket(args.qps, int(args.qps * 2)), watch_http=watch_http)
        recorder = Recorder(client, buffered.write_line, anonymizer=anonymizer)
        async with anyio.create_task_group() as tg:
            tg.start_soon(buffered.serve)
            tg.start_soon(_watch_signals, stop)
            end = await recorder.record(stop, duration=duration)
            tg.cancel_scope.cancel()
    return end, dict(recorder.counts)


async def _watch_signals(stop: anyio.Event) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("received %s: writing the end of the trace", signal.Signals(signum).name)
            stop.set()
