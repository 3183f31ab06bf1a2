"""KubeSchedulerConfiguration: defaults (v1 default_plugins.go), merging, validation."""

from __future__ import annotations

from typing import Any

import pytest

from ksched._errors import ConfigError
from ksched.config import (
    DEFAULT_PLUGINS,
    PluginRef,
    PluginSet,
    Profile,
    SchedulerConfig,
    expand_points,
    load_config,
    parse_config,
)
from ksched.framework import PluginFactory
from ksched.framework.runtime import WaitingPods
from ksched.scheduler import build_framework
from ksched.testing import FakeAsyncBind, FakeHandle, FakeQueueSort


def test_default_plugins_match_upstream_v1() -> None:
    # getDefaultPlugins (multiPoint), with DynamicResources before DefaultPreemption as
    # applyFeatureGates puts it (default_plugins.go).
    assert [(r.name, r.weight) for r in DEFAULT_PLUGINS.enabled] == [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 0),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]
    assert DEFAULT_PLUGINS.disabled == ()


def test_scheduler_config_defaults() -> None:
    config = SchedulerConfig()
    assert config.percentage_of_nodes_to_score == 0
    assert config.parallelism == 16
    assert config.pod_initial_backoff_seconds == 1.0
    assert config.pod_max_backoff_seconds == 10.0
    [profile] = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.plugins["multiPoint"] == DEFAULT_PLUGINS
    assert parse_config(None) == config
    assert parse_config({}).profiles[0].plugins["multiPoint"] == DEFAULT_PLUGINS


def _multi(profile: Profile) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in profile.plugins["multiPoint"].enabled]


def test_multipoint_reconfigures_default_in_place_and_appends_custom() -> None:
    config = parse_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [
                                {"name": "Custom", "weight": 4},
                                {"name": "TaintToleration", "weight": 7},
                            ],
                            "disabled": [{"name": "ImageLocality"}],
                        }
                    }
                }
            ]
        }
    )
    names = _multi(config.profiles[0])
    assert names[4] == ("TaintToleration", 7)
    assert ("ImageLocality", 1) not in names
    assert names[-1] == ("Custom", 4)
    assert names[-2] == ("DefaultBinder", 0)


def test_multipoint_disable_star_keeps_only_custom() -> None:
    config = parse_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                            "disabled": [{"name": "*"}],
                        }
                    }
                }
            ]
        }
    )
    assert _multi(config.profiles[0]) == [("PrioritySort", 0), ("DefaultBinder", 0)]


IMPLEMENTS = {
    "Sort": {"queueSort"},
    "A": {"filter", "score"},
    "B": {"filter", "score", "preFilter"},
    "Bind": {"bind"},
}


def test_expand_points_orders_and_weights() -> None:
    profile = Profile(
        plugins={
            "multiPoint": PluginSet(
                enabled=(PluginRef("Sort"), PluginRef("A", 3), PluginRef("B"), PluginRef("Bind"))
            ),
            "score": PluginSet(enabled=(PluginRef("B", 5),)),
            "filter": PluginSet(disabled=("A",)),
        }
    )
    points, weights = expand_points(profile, IMPLEMENTS)
    assert points["queueSort"] == ["Sort"]
    assert points["filter"] == ["B"]
    # a specific point's override comes first, then the multiPoint ones
    assert points["score"] == ["B", "A"]
    assert points["preFilter"] == ["B"]
    assert points["bind"] == ["Bind"]
    assert weights == {"A": 3, "B": 5}


def test_expand_points_disable_star_on_a_point() -> None:
    profile = Profile(
        plugins={
            "multiPoint": PluginSet(enabled=(PluginRef("Sort"), PluginRef("A"), PluginRef("B"))),
            "filter": PluginSet(enabled=(PluginRef("A"),), disabled=("*",)),
        }
    )
    points, weights = expand_points(profile, IMPLEMENTS)
    assert points["filter"] == ["A"]
    assert weights == {"A": 1, "B": 1}  # zero weight defaults to 1


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (
            {"percentageOfNodesToScore": 101},
            r"percentageOfNodesToScore: Invalid value: 101: not in valid range \[0-100\]",
        ),
        ({"percentageOfNodesToScore": -1}, r"percentageOfNodesToScore: Invalid value: -1: not in"),
        ({"percentageOfNodesToScore": "50"}, r"percentageOfNodesToScore: expected an integer"),
        (
            {"profiles": [{"percentageOfNodesToScore": 150}]},
            r"profiles\[0\]\.percentageOfNodesToScore: Invalid value: 150: not in valid range",
        ),
        ({"parallelism": 0}, r"parallelism: Invalid value: 0: should be an integer value greater"),
        (
            {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
            r"podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitial",
        ),
        ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, r"apiVersion: unsupported"),
        ({"kind": "Pod"}, r"kind: expected KubeSchedulerConfiguration"),
        (
            {"profiles": [{}, {"schedulerName": "default-scheduler"}]},
            r'profiles\[1\]\.schedulerName: Duplicate value: "default-scheduler"',
        ),
        ({"profiles": [{"plugins": {"filters": {}}}]}, r"profiles\[0\]\.plugins\.filters"),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"weight": 1}]}}}]},
            r"profiles\[0\]\.plugins\.score\.enabled\[0\]\.name: required",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "A"}, {"name": "A"}]}]},
            r"profiles\[0\]\.pluginConfig\[1\]: Duplicate value: \"A\"",
        ),
    ],
)
def test_invalid_config(data: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_config(data)


def test_load_config_invalid_yaml() -> None:
    with pytest.raises(ConfigError, match=r"^sched\.yaml: invalid YAML"):
        load_config("profiles: [", source="sched.yaml")


def test_load_config_reads_yaml() -> None:
    config = load_config(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 30\n"
        "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 70\n"
    )
    assert config.percentage_of_nodes_to_score == 30
    assert config.profiles[0].scheduler_name == "a"
    assert config.profiles[0].percentage_of_nodes_to_score == 70


REGISTRY: dict[str, PluginFactory] = {
    "Sort": lambda args, handle: FakeQueueSort("Sort"),
    "Bind": lambda args, handle: FakeAsyncBind("Bind", status=None),
}


def _build(profile: Profile) -> object:
    return build_framework(
        SchedulerConfig(profiles=(profile,)),
        profile,
        registry=REGISTRY,
        handle_for=lambda fw: FakeHandle(),
        waiting_pods=WaitingPods(),
    )


def _profile(*names: str, config: dict[str, Any] | None = None) -> Profile:
    return Profile(
        plugins={"multiPoint": PluginSet(enabled=tuple(PluginRef(n) for n in names))},
        plugin_config=config or {},
    )


def test_build_framework_minimal() -> None:
    _build(_profile("Sort", "Bind"))


def test_unknown_plugin_is_a_config_error() -> None:
    message = "^profile 'default-scheduler': plugin \"Nope\" is not registered$"
    with pytest.raises(ConfigError, match=message):
        _build(_profile("Sort", "Bind", "Nope"))


def test_missing_queue_sort() -> None:
    with pytest.raises(ConfigError, match=r"plugins\.queueSort: no queue sort plugin is enabled"):
        _build(_profile("Bind"))


def test_missing_bind() -> None:
    with pytest.raises(ConfigError, match=r"plugins\.bind: at least one bind plugin is needed"):
        _build(_profile("Sort"))


def test_plugin_config_for_unknown_plugin() -> None:
    with pytest.raises(ConfigError, match=r'pluginConfig for unknown plugin "Ghost"$'):
        _build(_profile("Sort", "Bind", config={"Ghost": {}}))


def test_point_not_implemented() -> None:
    profile = Profile(
        plugins={
            "multiPoint": PluginSet(enabled=(PluginRef("Sort"), PluginRef("Bind"))),
            "filter": PluginSet(enabled=(PluginRef("Bind"),)),
        }
    )
    with pytest.raises(
        ConfigError, match=r"plugins\.filter: plugin 'Bind' does not extend FilterPlugin plugin"
    ):
        _build(profile)


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)
