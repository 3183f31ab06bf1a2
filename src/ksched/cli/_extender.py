"""``ksched extender serve``: a profile's plugins served over the extender protocol."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from ._options import plugin_option, plugin_registry
from ._serving import add_serving_flags

if TYPE_CHECKING:  # the server's modules are imported when it starts, not by `ksched --help`
    from ..config import SchedulerConfig

__all__ = ["add_extender_parser"]


def add_extender_parser(sub: Any) -> None:
    """Register ``ksched extender serve`` on the command's subparsers."""
    ext = sub.add_parser("extender", help="serve plugins as a scheduler extender")
    ext_sub = ext.add_subparsers(dest="extender_command", required=True)
    serve = ext_sub.add_parser(
        "serve",
        help="serve a profile's Filter, Score and Bind plugins over the extender protocol "
        "(with /healthz, /livez, /readyz and /metrics on the same address; HTTPS unless --http)",
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
    serve.add_argument("--context", metavar="NAME", help="the --kubeconfig context to use")
    serve.add_argument(
        "--max-request-body",
        default="32Mi",
        metavar="SIZE",
        help="the largest request body accepted, e.g. 32Mi (default; 5000 nodes are ~10Mi)",
    )
    add_serving_flags(serve)
    serve.add_argument("-v", "--verbose", action="count", default=0)
    plugin_option(serve)
    serve.set_defaults(run=_serve)


def _plugins_only_config(names: list[str]) -> SchedulerConfig:
    """A profile of just these plugins (with the QueueSort and Bind a profile needs)."""
    from ..config import parse_config

    enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, *({"name": n} for n in names)]
    multi = {"enabled": enabled, "disabled": [{"name": "*"}]}
    return parse_config({"profiles": [{"plugins": {"multiPoint": multi}}]})


def _serve(args: argparse.Namespace) -> int:
    import anyio
    import attrs

    from ..extender.serving import (
        EXTENDER_LIMITS,
        ExtenderServer,
        extender_serving,
        serve_extender,
    )
    from ..kube import load_kubeconfig
    from ..observability import parse_address
    from ..observability._logging import configure_logging
    from ._inputs import load_config_file
    from ._serving import parse_size, serving_options

    registry = plugin_registry(args.plugin)
    if args.config:
        config = load_config_file(args.config, plugins=registry)
    elif args.plugin:
        named = set(registry) - set(plugin_registry(()))  # the plugins the specs named
        config = _plugins_only_config(sorted(named))
    else:
        raise ConfigError("extender serve: give --config FILE or --plugin MODULE:FACTORY")
    host, port = parse_address(args.listen, default_port=8888)
    body = parse_size(args.max_request_body, flag="--max-request-body")
    options = serving_options(args, attrs.evolve(EXTENDER_LIMITS, max_body_bytes=body))
    server = ExtenderServer(config, args.url_prefix, args.profile, registry)
    configure_logging(args.verbose, "text", sys.stderr)
    kube = load_kubeconfig(args.kubeconfig, context=args.context) if args.kubeconfig else None
    serving = extender_serving(options, host, server, credentials=kube is not None)
    anyio.run(functools.partial(serve_extender, server, host, port, kube=kube, serving=serving))
    return 0
