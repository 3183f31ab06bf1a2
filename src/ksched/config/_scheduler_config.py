"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): profiles and defaults.

# pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins, mergePluginSet),
# defaults.go, framework/runtime/framework.go expandMultiPointPlugins, and
# pkg/scheduler/apis/config/validation/validation.go (messages; strict field decoding).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import yaml

from .._errors import ConfigError
from .._yaml import YamlInputError, read_yaml
from ._connection import (
    ClientConnection,
    LeaderElection,
    parse_client_connection,
    parse_leader_election,
)
from ._extenders import ExtenderConfig, parse_extenders
from ._nearest import did_you_mean

__all__ = [
    "DEFAULT_PLUGINS",
    "DEFAULT_PLUGIN_ARGS",
    "EXTENSION_POINTS",
    "PLUGIN_TYPES",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfig",
    "config_yaml",
    "dump_config",
    "load_config",
    "parse_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"

EXTENSION_POINTS: Mapping[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}
"""Extension point (YAML name) -> the plugin method that implements it."""

PLUGIN_TYPES: Mapping[str, str] = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}
"""Extension point -> upstream's interface name, as its errors name it."""


@attrs.frozen
class PluginRef:
    name: str
    weight: int = 0


@attrs.frozen
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


DEFAULT_PLUGINS = PluginSet(
    enabled=(
        PluginRef("SchedulingGates"),
        PluginRef("PrioritySort"),
        PluginRef("NodeUnschedulable"),
        PluginRef("NodeName"),
        PluginRef("TaintToleration", 3),
        PluginRef("NodeAffinity", 2),
        PluginRef("NodePorts"),
        PluginRef("NodeResourcesFit", 1),
        PluginRef("VolumeRestrictions"),
        PluginRef("NodeVolumeLimits"),
        PluginRef("VolumeBinding"),
        PluginRef("VolumeZone"),
        PluginRef("PodTopologySpread", 2),
        PluginRef("InterPodAffinity", 2),
        PluginRef("DynamicResources"),
        PluginRef("DefaultPreemption"),
        PluginRef("NodeResourcesBalancedAllocation", 1),
        PluginRef("ImageLocality", 1),
        PluginRef("DefaultBinder"),
    )
)
"""The default multiPoint set, order and weights."""


@attrs.frozen
class Profile:
    """One scheduling profile: its name, plugin sets per point, and plugin args."""

    scheduler_name: str = "default-scheduler"
    plugins: Mapping[str, PluginSet] = attrs.field(factory=dict)
    """``multiPoint`` and the extension points, after merging with the defaults."""
    plugin_config: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    percentage_of_nodes_to_score: int | None = None
    field_paths: Mapping[str, str] = attrs.field(factory=dict, eq=False, repr=False)
    """Where a read configuration first names each plugin: ``"X"`` (enabled) and
    ``"pluginConfig/X"``, to a field path such as ``profiles[0].plugins.filter.enabled[1]
    .name``; empty for a Profile built in code."""


@attrs.frozen
class SchedulerConfig:
    """The scheduler's configuration, with upstream defaults."""

    profiles: tuple[Profile, ...] = (Profile(plugins={"multiPoint": DEFAULT_PLUGINS}),)
    percentage_of_nodes_to_score: int = 0
    """0: adaptive (upstream: 50 - nodes/125, at least 5%)."""
    parallelism: int = 16
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    client_connection: ClientConnection = attrs.field(factory=ClientConnection)
    leader_election: LeaderElection = attrs.field(factory=LeaderElection)
    extenders: tuple[ExtenderConfig, ...] = ()
    """The HTTP extenders, called after the Filter and Score plugins and for Bind."""

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


def _merge(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream mergePluginSet: defaults, re-configured in place, then custom additions."""
    disabled = set(custom.disabled)
    custom_index = {ref.name: i for i, ref in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for ref in default.enabled:
            if ref.name in disabled:
                continue
            if ref.name in custom_index:
                index = custom_index[ref.name]
                ref = custom.enabled[index]
                replaced.add(index)
            enabled.append(ref)
    enabled.extend(ref for i, ref in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), custom.disabled)


# ---- reading YAML ------------------------------------------------------------------


def _fail(path: str, message: str) -> ConfigError:
    return ConfigError(f"KubeSchedulerConfiguration: {path}: {message}")


def _invalid(path: str, value: Any, detail: str) -> ConfigError:
    shown = f'"{value}"' if isinstance(value, str) else value
    return _fail(path, f"Invalid value: {shown}: {detail}")


_FIELDS: Mapping[str, frozenset[str]] = {
    "config": frozenset(
        {
            "apiVersion",
            "kind",
            "parallelism",
            "leaderElection",
            "clientConnection",
            "healthzBindAddress",
            "metricsBindAddress",
            "enableProfiling",
            "enableContentionProfiling",
            "percentageOfNodesToScore",
            "podInitialBackoffSeconds",
            "podMaxBackoffSeconds",
            "profiles",
            "extenders",
            "delayCacheUntilActive",
        }
    ),
    "profile": frozenset({"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}),
    "pluginSet": frozenset({"enabled", "disabled"}),
    "plugin": frozenset({"name", "weight"}),
    "pluginConfig": frozenset({"name", "args"}),
}
"""The v1 field names (staging/src/k8s.io/kube-scheduler/config/v1/types.go)."""

REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
"""validation.go invalidPluginsByVersion for v1."""


def _strict(data: Mapping[str, Any], shape: str, path: str) -> None:
    """Strict decoding: a field the type does not have is an error, as kube-scheduler's."""
    for key in data:
        if key not in _FIELDS[shape]:
            where = f"{path}.{key}" if path else str(key)
            hint = did_you_mean(str(key), _FIELDS[shape])
            raise ConfigError(f'KubeSchedulerConfiguration: unknown field "{where}"{hint}')


def _removed(name: str, path: str) -> None:
    if name in REMOVED_PLUGINS:
        raise _invalid(
            path,
            name,
            f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version '
            f'"{API_VERSION}")',
        )


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(path, f"expected a mapping, got {value!r}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {value!r}")
    return value


def _int(value: Any, path: str, *, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"expected an integer, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise _fail(path, f"must be {bounds}, got {value}")
    return value


def _note_paths(paths: dict[str, str], plugin_set: Any, path: str) -> None:
    """Record where each enabled plugin of a read plugin set is named (first mention)."""
    enabled = plugin_set.get("enabled") if isinstance(plugin_set, Mapping) else None
    for i, item in enumerate(enabled if isinstance(enabled, list) else ()):
        name = item.get("name") if isinstance(item, Mapping) else None
        if isinstance(name, str):
            paths.setdefault(name, f"{path}.enabled[{i}].name")


def _plugin_set(raw: Any, path: str) -> PluginSet:
    data = _mapping(raw, path)
    _strict(data, "pluginSet", path)
    enabled = []
    for i, item in enumerate(_list(data.get("enabled"), f"{path}.enabled")):
        item_path = f"{path}.enabled[{i}]"
        item = _mapping(item, item_path)
        _strict(item, "plugin", item_path)
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(f"{item_path}.name", "required")
        _removed(name, item_path)
        weight = item.get("weight")
        enabled.append(
            PluginRef(name, 0 if weight is None else _int(weight, f"{item_path}.weight", lo=0))
        )
    disabled = []
    for i, item in enumerate(_list(data.get("disabled"), f"{path}.disabled")):
        item = _mapping(item, f"{path}.disabled[{i}]")
        _strict(item, "plugin", f"{path}.disabled[{i}]")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(f"{path}.disabled[{i}].name", "required")
        disabled.append(name)
    return PluginSet(tuple(enabled), tuple(disabled))


def _profile(raw: Any, path: str) -> Profile:
    data = _mapping(raw, path)
    _strict(data, "profile", path)
    name = data.get("schedulerName", "default-scheduler")
    if not isinstance(name, str) or not name:
        raise _fail(f"{path}.schedulerName", "Required value")
    plugins_raw = _mapping(data.get("plugins"), f"{path}.plugins")
    plugins: dict[str, PluginSet] = {}
    for key in plugins_raw:
        if key != "multiPoint" and key not in EXTENSION_POINTS:
            hint = did_you_mean(str(key), ["multiPoint", *EXTENSION_POINTS])
            raise ConfigError(
                f'KubeSchedulerConfiguration: unknown field "{path}.plugins.{key}"{hint}'
            )
    plugins["multiPoint"] = _merge(
        DEFAULT_PLUGINS, _plugin_set(plugins_raw.get("multiPoint"), f"{path}.plugins.multiPoint")
    )
    paths: dict[str, str] = {}
    _note_paths(paths, plugins_raw.get("multiPoint"), f"{path}.plugins.multiPoint")
    for point in EXTENSION_POINTS:
        if point in plugins_raw:
            plugins[point] = _plugin_set(plugins_raw[point], f"{path}.plugins.{point}")
            _note_paths(paths, plugins_raw[point], f"{path}.plugins.{point}")
    plugin_config: dict[str, Mapping[str, Any]] = {}
    for i, item in enumerate(_list(data.get("pluginConfig"), f"{path}.pluginConfig")):
        item_path = f"{path}.pluginConfig[{i}]"
        item = _mapping(item, item_path)
        _strict(item, "pluginConfig", item_path)
        pname = item.get("name")
        if not isinstance(pname, str) or not pname:
            raise _fail(f"{item_path}.name", "required")
        if pname in plugin_config:
            raise _fail(item_path, f'Duplicate value: "{pname}"')
        _removed(pname, item_path)
        plugin_config[pname] = _mapping(item.get("args"), f"{item_path}.args")
        paths[f"pluginConfig/{pname}"] = f"{item_path}.name"
    pct = data.get("percentageOfNodesToScore")
    return Profile(
        scheduler_name=name,
        plugins=plugins,
        plugin_config=plugin_config,
        field_paths=paths,
        percentage_of_nodes_to_score=None
        if pct is None
        else _percentage(pct, f"{path}.percentageOfNodesToScore"),
    )


def _percentage(value: Any, path: str) -> int:
    number = _int(value, path)
    if not 0 <= number <= 100:
        raise _invalid(path, number, "not in valid range [0-100]")
    return number


def _same_queue_sort(profiles: tuple[Profile, ...]) -> None:
    """validateCommonQueueSort: every profile's queueSort set is the first one's."""
    first = profiles[0].plugins.get("queueSort", PluginSet())
    for i, profile in enumerate(profiles[1:], start=1):
        current = profile.plugins.get("queueSort", PluginSet())
        if current != first:
            names = [ref.name for ref in current.enabled]
            raise _invalid(
                f"profiles[{i}].plugins.queueSort", names, "must be the same for all profiles"
            )
    if len(first.enabled) > 1:
        raise _invalid(
            "profiles[0].plugins.queueSort.Enabled",
            len(first.enabled),
            "only one queue sort plugin can be enabled",
        )


def parse_config(data: Mapping[str, Any] | None) -> SchedulerConfig:
    """A SchedulerConfig from a KubeSchedulerConfiguration dict (None: the defaults).

    Raises:
        ConfigError: a malformed field, named by its path.
    """
    if data is None:
        return SchedulerConfig()
    data = _mapping(data, "config")
    _strict(data, "config", "")
    api_version = data.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        raise _fail("apiVersion", f"unsupported {api_version!r} (expected {API_VERSION})")
    kind = data.get("kind", "KubeSchedulerConfiguration")
    if kind != "KubeSchedulerConfiguration":
        raise _fail("kind", f"expected KubeSchedulerConfiguration, got {kind!r}")
    raw_profiles = _list(data.get("profiles"), "profiles") or [{}]
    profiles = tuple(_profile(p, f"profiles[{i}]") for i, p in enumerate(raw_profiles))
    names = [p.scheduler_name for p in profiles]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise _fail(f"profiles[{i}].schedulerName", f'Duplicate value: "{name}"')
    _same_queue_sort(profiles)
    pct = data.get("percentageOfNodesToScore", 0)
    parallelism = _int(data.get("parallelism", 16), "parallelism")
    if parallelism <= 0:
        raise _invalid("parallelism", parallelism, "should be an integer value greater than zero")
    initial = _int(data.get("podInitialBackoffSeconds", 1), "podInitialBackoffSeconds")
    if initial <= 0:
        raise _invalid("podInitialBackoffSeconds", initial, "must be greater than 0")
    maximum = _int(data.get("podMaxBackoffSeconds", 10), "podMaxBackoffSeconds")
    if maximum < initial:
        raise _invalid(
            "podMaxBackoffSeconds",
            maximum,
            "must be greater than or equal to PodInitialBackoffSeconds",
        )
    return SchedulerConfig(
        profiles=profiles,
        percentage_of_nodes_to_score=_percentage(pct, "percentageOfNodesToScore"),
        parallelism=parallelism,
        pod_initial_backoff_seconds=float(initial),
        pod_max_backoff_seconds=float(maximum),
        client_connection=parse_client_connection(data.get("clientConnection")),
        leader_election=parse_leader_election(data.get("leaderElection")),
        extenders=parse_extenders(data.get("extenders")),
    )


def load_config(text: str, *, source: str = "<config>") -> SchedulerConfig:
    """A SchedulerConfig from KubeSchedulerConfiguration YAML."""
    try:
        docs = read_yaml(text, source)
    except YamlInputError as exc:
        raise ConfigError(str(exc)) from None
    if len(docs) > 1:
        raise ConfigError(f"{source}: expected one KubeSchedulerConfiguration, got {len(docs)}")
    return parse_config(docs[0] if docs else None)


def expand_points(
    profile: Profile, implements: Mapping[str, set[str]]
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Each extension point's ordered plugin names, and the score weights.

    ``implements`` maps a plugin name to the extension points it implements.
    # runtime/framework.go expandMultiPointPlugins
    """
    multi = profile.plugins.get("multiPoint", PluginSet())
    points: dict[str, list[str]] = {}
    weights: dict[str, int] = {}
    for ref in multi.enabled:
        if "score" in implements.get(ref.name, set()):
            weights[ref.name] = ref.weight or 1
    for point in EXTENSION_POINTS:
        specific = profile.plugins.get(point, PluginSet())
        enabled = [ref.name for ref in specific.enabled]
        for i, name in enumerate(enabled):
            if name in enabled[:i]:  # framework.go updatePluginList
                raise ConfigError(
                    f"profile {profile.scheduler_name!r}: plugins.{point}.enabled[{i}]: plugin "
                    f'"{name}" already registered as "{PLUGIN_TYPES[point]}"'
                )
        if point == "score":
            for ref in specific.enabled:
                weights[ref.name] = ref.weight or weights.get(ref.name) or 1
        disabled = set(specific.disabled)
        if "*" in disabled:
            points[point] = enabled
            continue
        overrides: list[str] = []
        from_multi: list[str] = []
        for ref in multi.enabled:
            if point not in implements.get(ref.name, set()) or ref.name in disabled:
                continue
            if ref.name in enabled:
                overrides.append(ref.name)
                continue
            if ref.name in from_multi:
                raise ConfigError(
                    f"profile {profile.scheduler_name!r}: plugins.multiPoint: plugin "
                    f'"{ref.name}" already registered as "{PLUGIN_TYPES[point]}"'
                )
            from_multi.append(ref.name)
        ordered = [n for n in enabled if n in overrides]
        ordered += from_multi
        ordered += [n for n in enabled if n not in overrides]
        points[point] = ordered
    return points, weights


def plugin_names(profile: Profile) -> list[str]:
    """Every plugin a profile enables anywhere, in first-mention order."""
    seen: dict[str, None] = {}
    for plugin_set in profile.plugins.values():
        for ref in plugin_set.enabled:
            seen.setdefault(ref.name, None)
    return list(seen)


# ---- writing YAML ------------------------------------------------------------------

DEFAULT_PLUGIN_ARGS: Mapping[str, Mapping[str, Any]] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "InterPodAffinity": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    },
    "NodeResourcesFit": {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    },
    "PodTopologySpread": {"defaultingType": "System"},
    "VolumeBinding": {"bindTimeoutSeconds": 600},
}
"""The v1 defaults of the default plugins' args, as ``kube-scheduler --write-config-to``
prints them (# pkg/scheduler/apis/config/v1/defaults.go)."""


def _dump_plugin_set(plugin_set: PluginSet) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if plugin_set.enabled:
        out["enabled"] = [
            {"name": ref.name, "weight": ref.weight} if ref.weight else {"name": ref.name}
            for ref in plugin_set.enabled
        ]
    if plugin_set.disabled:
        out["disabled"] = [{"name": name} for name in plugin_set.disabled]
    return out


def dump_config(config: SchedulerConfig, *, plugin_args: bool = False) -> dict[str, Any]:
    """The KubeSchedulerConfiguration dict of ``config``; ``parse_config`` reads it back.

    Profiles are written after merging with the defaults (the full ``multiPoint`` list).
    With ``plugin_args``, each enabled default plugin without a pluginConfig entry gets
    its default args written out, as ``kube-scheduler --write-config-to`` does.
    """
    profiles = []
    for profile in config.profiles:
        plugins = {
            point: dumped
            for point, plugin_set in profile.plugins.items()
            if (dumped := _dump_plugin_set(plugin_set))
        }
        entry: dict[str, Any] = {"schedulerName": profile.scheduler_name, "plugins": plugins}
        if profile.percentage_of_nodes_to_score is not None:
            entry["percentageOfNodesToScore"] = profile.percentage_of_nodes_to_score
        args = {name: dict(value) for name, value in profile.plugin_config.items()}
        if plugin_args:
            for name in plugin_names(profile):
                if name not in args and name in DEFAULT_PLUGIN_ARGS:
                    args[name] = dict(DEFAULT_PLUGIN_ARGS[name])
        if args:
            entry["pluginConfig"] = [{"name": name, "args": value} for name, value in args.items()]
        profiles.append(entry)
    cc, le = config.client_connection, config.leader_election
    return {
        "apiVersion": API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {
            "acceptContentTypes": "",
            "burst": cc.burst,
            "contentType": cc.content_type,
            "kubeconfig": cc.kubeconfig,
            "qps": cc.qps,
        },
        "leaderElection": {
            "leaderElect": le.leader_elect,
            "leaseDuration": _go_duration(le.lease_duration),
            "renewDeadline": _go_duration(le.renew_deadline),
            "resourceLock": le.resource_lock,
            "resourceName": le.resource_name,
            "resourceNamespace": le.resource_namespace,
            "retryPeriod": _go_duration(le.retry_period),
        },
        "parallelism": config.parallelism,
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": int(config.pod_initial_backoff_seconds),
        "podMaxBackoffSeconds": int(config.pod_max_backoff_seconds),
        "profiles": profiles,
    }


def _go_duration(seconds: float) -> str:
    """``15s``, ``1m30s``, ``500ms``: how Go's time.Duration prints in a config."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{int(minutes)}m" if minutes else ""
    return text + (f"{rest:g}s" if rest or not text else "0s")


def config_yaml(config: SchedulerConfig, *, plugin_args: bool = False) -> str:
    """``dump_config`` as YAML (fields in the order written, block style)."""
    return yaml.safe_dump(
        dump_config(config, plugin_args=plugin_args), sort_keys=False, default_flow_style=False
    )
