"""``ksched run``: the command line of the cluster connector (``ksched.kube.run``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ._serving import add_serving_flags

__all__ = ["add_run_parser"]


def add_run_parser(sub: Any) -> None:
    """Register ``ksched run`` on an argparse sub-parsers object."""
    run_p = sub.add_parser(
        "run",
        help="schedule the pods of a Kubernetes cluster (kube-apiserver)",
        description="Watch a kube-apiserver and bind the pods whose spec.schedulerName "
        "names one of the profiles.",
    )
    run_p.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1)")
    run_p.add_argument("--kubeconfig", metavar="FILE", help="default: clientConnection.kubeconfig")
    run_p.add_argument(
        "--context", metavar="NAME", help="the kubeconfig context to use (default: current)"
    )
    run_p.add_argument("--master", metavar="URL", help="API server address (overrides kubeconfig)")
    run_p.add_argument(
        "--health-address",
        default="127.0.0.1:10259",
        metavar="HOST:PORT",
        help="where /healthz /livez /readyz and /metrics are served (default 127.0.0.1:10259, "
        "HTTPS unless --http)",
    )
    add_serving_flags(run_p)
    run_p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log more: -v binds, -vv debug (default: failures, warnings, lifecycle)",
    )
    run_p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="key=value lines (default) or one JSON object per line",
    )
    run_p.set_defaults(run=_command)


def _command(args: argparse.Namespace) -> int:
    # The connector is imported when it runs, not by `ksched --help`.
    import anyio

    from ..config import SchedulerConfig, check_plugin_names, load_config
    from ..kube import RunOptions, resolve_kubeconfig, run
    from ..observability._health import parse_address
    from ..observability._logging import configure_logging
    from ._options import plugin_registry
    from ._serving import serving_options

    config = SchedulerConfig()
    if args.config:
        try:
            text = Path(args.config).read_text()
        except OSError as exc:
            raise ConfigError(f"{args.config}: {exc.strerror or exc}") from exc
        try:
            config = load_config(text, source=args.config)
        except ConfigError as exc:
            if str(exc).startswith(args.config):
                raise
            raise ConfigError(f"{args.config}: {exc}") from exc
        try:  # a misspelt plugin is a configuration error now, not once leading
            check_plugin_names(config, plugin_registry(()))
        except ConfigError as exc:
            raise ConfigError(f"{args.config}: {exc}") from None
    kube = resolve_kubeconfig(args.kubeconfig, config, args.master, args.context)
    host, port = parse_address(args.health_address)
    configure_logging(args.verbose, args.log_format, sys.stderr)
    backend = os.environ.get("KSCHED_ASYNC_BACKEND", "asyncio")
    kube.credentials.check(backend)  # a credential plugin that fails: exit 2, said why
    options = RunOptions(
        health_host=host,
        health_port=port,
        ready_file=os.environ.get("KSCHED_READY_FILE"),
        serving=serving_options(args),
    )
    code: int = anyio.run(run, config, kube, options, backend=backend)
    return code
