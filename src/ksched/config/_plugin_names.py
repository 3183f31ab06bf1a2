"""Plugin names a configuration uses that no registry knows: the field that names them,
and the registered name nearest to each."""

from __future__ import annotations

from collections.abc import Collection

from .._errors import ConfigError
from ._nearest import did_you_mean
from ._scheduler_config import Profile, SchedulerConfig, plugin_names

__all__ = ["check_plugin_names", "unregistered_plugin"]


def unregistered_plugin(
    profile: Profile, name: str, known: Collection[str], *, in_plugin_config: bool = False
) -> ConfigError:
    """The error for a plugin ``profile`` names and ``known`` lacks, at its field path."""
    if in_plugin_config:
        what = f'pluginConfig for unknown plugin "{name}"'
        path = profile.field_paths.get(f"pluginConfig/{name}")
    else:
        what = f'plugin "{name}" is not registered'
        path = profile.field_paths.get(name)
    where = (
        f"KubeSchedulerConfiguration: {path}"
        if path is not None
        else f"profile {profile.scheduler_name!r}"
    )
    return ConfigError(f"{where}: {what}{did_you_mean(name, known)}")


def check_plugin_names(config: SchedulerConfig, known: Collection[str]) -> None:
    """Every plugin the profiles enable or configure is in ``known``.

    Raises:
        ConfigError: the first unknown name, at its field path, with the nearest known name.
    """
    for profile in config.profiles:
        for name in plugin_names(profile):
            if name not in known:
                raise unregistered_plugin(profile, name, known)
        for name in profile.plugin_config:
            if name not in known:
                raise unregistered_plugin(profile, name, known, in_plugin_config=True)
