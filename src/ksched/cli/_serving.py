"""The secure-serving flags of ``ksched run`` and ``ksched extender serve``, named as
kube-scheduler's (k8s.io/apiserver pkg/server/options serving.go, authorization.go)."""

from __future__ import annotations

import argparse
import re
from typing import Any

import attrs

from .._errors import ConfigError
from ..observability import Limits, ServingOptions
from ..observability._auth import DEFAULT_ALWAYS_ALLOW_PATHS

__all__ = ["add_serving_flags", "parse_size", "serving_options"]

_SIZE = re.compile(r"(\d+)(Ki|Mi|Gi)?")
_UNITS = {None: 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}


def add_serving_flags(parser: Any) -> None:
    """Add --http, --tls-cert-file, --tls-private-key-file, --client-ca-file and
    --authorization-always-allow-paths to ``parser``."""
    group = parser.add_argument_group("secure serving (default: HTTPS, clients checked)")
    group.add_argument(
        "--http",
        action="store_true",
        help="serve plain HTTP instead of HTTPS (the same authentication and authorization)",
    )
    group.add_argument(
        "--tls-cert-file",
        metavar="FILE",
        help="the serving certificate (PEM, chain after it); default: a self-signed one "
        "made at start and kept in memory",
    )
    group.add_argument("--tls-private-key-file", metavar="FILE", help="its private key (PEM)")
    group.add_argument(
        "--client-ca-file",
        metavar="FILE",
        help="authenticate clients presenting a certificate signed by this CA (user = CN, "
        "groups = O)",
    )
    group.add_argument(
        "--authorization-always-allow-paths",
        metavar="PATHS",
        default=",".join(DEFAULT_ALWAYS_ALLOW_PATHS),
        help="comma-separated paths served without authorization; a trailing * matches a "
        "prefix (default: %(default)s)",
    )


def serving_options(args: argparse.Namespace, limits: Limits | None = None) -> ServingOptions:
    """The ServingOptions the flags give (ConfigError naming a flag when they clash)."""
    paths = tuple(p.strip() for p in args.authorization_always_allow_paths.split(",") if p.strip())
    options = ServingOptions(
        http=args.http,
        cert_file=args.tls_cert_file,
        key_file=args.tls_private_key_file,
        client_ca_file=args.client_ca_file,
        always_allow_paths=tuple("/" + p.lstrip("/") for p in paths),
    )
    if limits is not None:
        options = attrs.evolve(options, limits=limits)
    options.check()
    return options


def parse_size(value: str, *, flag: str) -> int:
    """``1048576``, ``64Ki``, ``32Mi``, ``1Gi``; ConfigError naming ``flag`` otherwise."""
    match = _SIZE.fullmatch(value.strip())
    if match is None or int(match[1]) <= 0:
        raise ConfigError(f"{flag}: expected a size such as 32Mi, got {value!r}")
    return int(match[1]) * _UNITS[match[2]]
