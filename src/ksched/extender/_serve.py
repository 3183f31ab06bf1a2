"""The ``ksched extender serve`` command."""

from __future__ import annotations

import argparse
import logging
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio

from .._errors import ConfigError
from ..config import SchedulerConfig, parse_config
from ..observability import RestClientMetrics, configure_logging, parse_address, serve_http
from ._server import ExtenderServer, ServedCluster

__all__ = ["add_extender_parser"]

log = logging.getLogger("ksched.extender")


def add_extender_parser(sub: Any, plugin_option: Any) -> None:
    """Register ``ksched extender serve`` on the command's subparsers."""
    ext = sub.add_parser("extender", help="serve plugins as a scheduler extender")
    ext_sub = ext.add_subparsers(dest="extender_command", required=True)
    serve = ext_sub.add_parser(
        "serve",
        help="serve a profile's Filter, Score and Bind plugins over the extender protocol "
        "(with /healthz, /livez, /readyz and /metrics on the same address)",
    )
    serve.add_argument("--listen", default="127.0.0.1:8888", metavar="HOST:PORT")
    serve.add_argument("--url-prefix", default="", metavar="/PREFIX")
    serve.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration")
    serve.add_argument("--profile", metavar="NAME", help="the profile to serve (default: first)")
    serve.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="the cluster DefaultBinder binds in when the bind verb is called",
    )
    serve.add_argument("-v", "--verbose", action="count", default=0)
    plugin_option(serve)
    serve.set_defaults(run=_serve)


def _plugins_only_config(names: list[str]) -> SchedulerConfig:
    """A profile of just these plugins (with the QueueSort and Bind a profile needs)."""
    enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, *({"name": n} for n in names)]
    multi = {"enabled": enabled, "disabled": [{"name": "*"}]}
    return parse_config({"profiles": [{"plugins": {"multiPoint": multi}}]})


def _serve(args: argparse.Namespace) -> int:
    from ..cli._inputs import load_config_file
    from ..cli._main import _plugin_registry
    from ..kube import KubeClient, KubeCluster, load_kubeconfig

    registry = _plugin_registry(args.plugin)
    if args.config:
        config = load_config_file(args.config)
    elif args.plugin:
        named = set(registry) - set(_plugin_registry(()))  # the plugins the specs named
        config = _plugins_only_config(sorted(named))
    else:
        raise ConfigError("extender serve: give --config FILE or --plugin MODULE:FACTORY")
    host, port = parse_address(args.listen, default_port=8888)
    server = ExtenderServer(config, args.url_prefix, args.profile, registry)
    configure_logging(args.verbose, "text", sys.stderr)

    kube = load_kubeconfig(args.kubeconfig) if args.kubeconfig else None

    async def main() -> None:
        async with AsyncExitStack() as stack:
            if kube is not None and isinstance(server.cluster, ServedCluster):
                http = await stack.enter_async_context(kube.http_client())
                client = KubeClient(http, metrics=RestClientMetrics(server.metrics.registry))
                server.cluster.binder = KubeCluster(client, client)  # its bind, no watches
            async with anyio.create_task_group() as tg:
                bound = await tg.start(serve_http, server.handle, host, port)
                log.info(
                    "serving the extender",
                    extra={
                        "kv": {"address": f"{host}:{bound}", "prefix": server.url_prefix or "/"}
                    },
                )

    anyio.run(main)
    return 0
