"""Configuration overrides: a plugin's Score weight, its ``scoringStrategy`` or other args.

An override is applied to a KubeSchedulerConfiguration as its YAML would be edited: the
weight replaces the plugin's in ``plugins.multiPoint.enabled`` where it is listed there
(in its place), else goes to ``plugins.score.enabled``; args go to the plugin's
``pluginConfig`` entry.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .._errors import KschedError
from ..config import SchedulerConfig, parse_config
from ..config._scheduler_config import dump_config
from ._errors import SpecError, reject_unknown_fields

__all__ = ["Override", "apply_overrides", "parse_override"]

_FIELDS = frozenset({"plugin", "profile", "weight", "scoringStrategy", "args"})
_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
"""NodeResourcesFitArgs' default resources (pkg/scheduler/apis/config/v1/defaults.go)."""


@attrs.frozen
class Override:
    """One change of a plugin's settings, in every profile or the one named."""

    plugin: str
    weight: int | None = None
    args: Mapping[str, Any] | None = None
    """Merged into the plugin's args (a mapping value replaces the one it names)."""
    profile: str | None = None


def parse_override(raw: Any, field: str) -> Override:
    """An override from ``{plugin, weight | scoringStrategy | args, profile?}``."""
    if not isinstance(raw, Mapping):
        raise SpecError(f"{field}: expected a mapping with plugin and weight/scoringStrategy/args")
    reject_unknown_fields(raw, _FIELDS, field)
    plugin = raw.get("plugin")
    if not isinstance(plugin, str) or not plugin:
        raise SpecError(f"{field}.plugin: expected a plugin name")
    weight = raw.get("weight")
    if weight is not None and (
        isinstance(weight, bool) or not isinstance(weight, int) or weight < 1
    ):
        raise SpecError(f"{field}.weight: {weight!r}: expected a positive integer")
    args: dict[str, Any] = {}
    if raw.get("args") is not None:
        if not isinstance(raw["args"], Mapping):
            raise SpecError(f"{field}.args: expected a mapping")
        args.update(raw["args"])
    strategy = raw.get("scoringStrategy")
    if strategy is not None:
        args["scoringStrategy"] = _strategy(strategy, f"{field}.scoringStrategy")
    if weight is None and not args:
        raise SpecError(f"{field}: give weight, scoringStrategy or args")
    profile = raw.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise SpecError(f"{field}.profile: expected a profile's schedulerName")
    return Override(plugin=plugin, weight=weight, args=args or None, profile=profile)


def _strategy(raw: Any, field: str) -> dict[str, Any]:
    """A ``scoringStrategy``: a type name (default resources) or the whole mapping."""
    if isinstance(raw, str):
        return {"type": raw, "resources": [dict(r) for r in _DEFAULT_RESOURCES]}
    if isinstance(raw, Mapping):
        return dict(raw)
    raise SpecError(f"{field}: expected a type (MostAllocated, ...) or a mapping")


def apply_overrides(config: SchedulerConfig, overrides: Sequence[Override]) -> SchedulerConfig:
    """``config`` with the overrides applied, parsed again (its checks apply).

    Raises:
        ConfigError: the result is not a valid configuration.
        KschedError: an override names a profile the configuration does not have.
    """
    if not overrides:
        return config
    document = copy.deepcopy(dump_config(config))
    profiles = document.setdefault("profiles", [])
    for override in overrides:
        chosen = [p for p in profiles if override.profile in (None, p.get("schedulerName"))]
        if not chosen:
            raise KschedError(f"override of {override.plugin}: no profile {override.profile!r}")
        for profile in chosen:
            _apply(profile, override)
    return parse_config(document)


def _apply(profile: dict[str, Any], override: Override) -> None:
    if override.weight is not None:
        plugins = profile.setdefault("plugins", {})
        listed = [
            e
            for e in (plugins.get("multiPoint") or {}).get("enabled") or []
            if e.get("name") == override.plugin
        ]
        for entry in listed:  # its multiPoint entry: the weight changes in its place
            entry["weight"] = override.weight
        if listed and not any(
            e.get("name") == override.plugin
            for e in (plugins.get("score") or {}).get("enabled") or []
        ):
            return _apply_args(profile, override)
        score = plugins.setdefault("score", {})
        enabled = [e for e in score.get("enabled") or [] if e.get("name") != override.plugin]
        enabled.append({"name": override.plugin, "weight": override.weight})
        score["enabled"] = enabled
    _apply_args(profile, override)


def _apply_args(profile: dict[str, Any], override: Override) -> None:
    if override.args is not None:
        entries = profile.setdefault("pluginConfig", [])
        entry = next((e for e in entries if e.get("name") == override.plugin), None)
        if entry is None:
            entry = {"name": override.plugin, "args": {}}
            entries.append(entry)
        args = entry.setdefault("args", {})
        args.update(copy.deepcopy(dict(override.args)))
