"""Building a profile's Framework from its configuration and a plugin registry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._errors import ConfigError
from ..config import (
    EXTENSION_POINTS,
    PLUGIN_TYPES,
    Profile,
    SchedulerConfig,
    expand_points,
    plugin_names,
    unregistered_plugin,
)
from ..framework import Handle, Plugin, PluginFactory
from ..framework.runtime import Framework, WaitingPods
from ..plugins import IN_TREE, in_tree_factory

__all__ = ["Registry", "build_framework", "implemented_points"]

Registry = Mapping[str, PluginFactory]
"""Out-of-tree plugins by name (they win over in-tree ones of the same name)."""


def implemented_points(plugin: Plugin) -> set[str]:
    """The extension points a plugin implements, by its methods (checked once)."""
    return {
        point
        for point, method in EXTENSION_POINTS.items()
        if callable(getattr(plugin, method, None))
    }


def resolve_factory(name: str, registry: Registry | None) -> PluginFactory:
    if registry is not None and name in registry:
        return registry[name]
    factory = in_tree_factory(name)
    if factory is None:
        raise ConfigError(f"plugin {name!r} is not registered")
    return factory


def _known(registry: Registry | None) -> set[str]:
    """Every plugin name a registry (with the in-tree plugins) can build."""
    return {*IN_TREE, *(registry or ())}


def _args_path(profile: Profile, name: str) -> str:
    """``pluginConfig[i] `` for a plugin configured there (its args' place), else ""."""
    names = list(profile.plugin_config)
    return f"pluginConfig[{names.index(name)}] " if name in names else ""


def build_framework(
    config: SchedulerConfig,
    profile: Profile,
    *,
    registry: Registry | None,
    handle_for: Callable[[Framework | None], Handle],  # called with None, then the result
    waiting_pods: WaitingPods,
) -> Framework:
    """Instantiate the profile's plugins (once each) and order them per extension point.

    Raises:
        ConfigError: unknown plugin, invalid args, no QueueSort or no Bind plugin.
    """
    where = f"profile {profile.scheduler_name!r}"
    handle = handle_for(None)
    plugins: dict[str, Plugin] = {}
    names = plugin_names(profile)
    if "Coscheduling" in names and "GangScheduling" in names:
        raise ConfigError(
            f"{where}: plugins: Coscheduling and GangScheduling are both enabled; a profile "
            "uses one gang plugin (scheduler-plugins PodGroups or scheduling.k8s.io ones)"
        )
    for name in names:
        try:
            factory = resolve_factory(name, registry)
        except ConfigError:
            raise unregistered_plugin(profile, name, _known(registry)) from None
        args: Mapping[str, Any] | None = profile.plugin_config.get(name)
        try:
            plugin = factory(args, handle)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {_args_path(profile, name)}{exc}") from None
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: plugin {name!r}: invalid args: {exc}") from exc
        plugins[name] = plugin
    unknown = set(profile.plugin_config) - set(plugins)
    for name in sorted(unknown):
        if in_tree_factory(name) is None and (registry is None or name not in registry):
            known = _known(registry)
            raise unregistered_plugin(profile, name, known, in_plugin_config=True)
    implements = {name: implemented_points(p) for name, p in plugins.items()}
    points, weights = expand_points(profile, implements)
    for point, names in points.items():
        for name in names:
            if point not in implements.get(name, set()):
                raise ConfigError(
                    f"{where}: plugins.{point}: plugin {name!r} does not extend "
                    f"{PLUGIN_TYPES[point]} plugin"
                )
    # framework.go NewFramework, in its words
    if not points.get("queueSort"):
        raise ConfigError(f"{where}: plugins.queueSort: no queue sort plugin is enabled")
    if len(points["queueSort"]) > 1:
        raise ConfigError(
            f"{where}: plugins.queueSort: only one queue sort plugin can be enabled, "
            f"got {points['queueSort']}"
        )
    if not points.get("bind"):
        raise ConfigError(f"{where}: plugins.bind: at least one bind plugin is needed")
    framework = Framework(
        profile_name=profile.scheduler_name,
        plugins=plugins,
        points=points,
        weights=weights,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
        parallelism=config.parallelism,
        waiting_pods=waiting_pods,
    )
    handle_for(framework)
    return framework
