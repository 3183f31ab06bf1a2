"""Options several ``ksched`` commands share, and the plugin registry they build."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..framework import PluginFactory

__all__ = ["Registry", "plugin_option", "plugin_registry", "strict_option"]

Registry = dict[str, PluginFactory]


def plugin_registry(specs: Sequence[str]) -> Registry:
    """In-tree plugins, entry points (group ``ksched.plugins``) and ``--plugin`` specs."""
    from ..scheduler import plugin_registry as build

    return build(specs)


def strict_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-strict",
        dest="strict",
        action="store_false",
        help="unknown fields in objects are warnings (on stderr), not errors",
    )


def plugin_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help="register an out-of-tree plugin (repeatable)",
    )
