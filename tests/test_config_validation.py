"""KubeSchedulerConfiguration errors in kube-scheduler's words, with the field path.

# pkg/scheduler/apis/config/validation/validation_test.go
# (TestValidateKubeSchedulerConfigurationV1 case names) and
# pkg/scheduler/framework/runtime/framework.go NewFramework errors.
"""

from __future__ import annotations

from typing import Any

import pytest

from ksched import ConfigError, InMemoryCluster, Scheduler, parse_config

SORT = {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("bad-parallelism-invalid-value", {"parallelism": 0},
     "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ("bad-percentage-of-nodes-to-score", {"percentageOfNodesToScore": 101},
     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("negative-percentage-of-nodes-to-score", {"percentageOfNodesToScore": -1},
     "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ("scheduler-name-not-set", {"profiles": [{}, {"schedulerName": ""}]},
     "profiles[1].schedulerName: Required value"),
    ("repeated-scheduler-name", {"profiles": [{}, {"schedulerName": "default-scheduler"}]},
     'profiles[1].schedulerName: Duplicate value: "default-scheduler"'),
    ("greater-than-100-profile-percentage-of-nodes-to-score",
     {"profiles": [{}, {"schedulerName": "b", "percentageOfNodesToScore": 101}]},
     "profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("negative-profile-percentage-of-nodes-to-score",
     {"profiles": [{}, {"schedulerName": "b", "percentageOfNodesToScore": -1}]},
     "profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ("different-queue-sort",
     {"profiles": [{"plugins": SORT},
                   {"schedulerName": "b",
                    "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}}}]},
     "profiles[1].plugins.queueSort: Invalid value: ['CustomSort']: must be the same for all "
     "profiles"),
    ("one-empty-queue-sort", {"profiles": [{"plugins": SORT}, {"schedulerName": "b"}]},
     "profiles[1].plugins.queueSort: Invalid value: []: must be the same for all profiles"),
    ("duplicated-plugin-config",
     {"profiles": [{"pluginConfig": [{"name": "config"}, {"name": "config"}]}]},
     'profiles[0].pluginConfig[1]: Duplicate value: "config"'),
    ("removed plugin",
     {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]},
     'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
     '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
     '"kubescheduler.config.k8s.io/v1")'),
    ("pod initial backoff", {"podInitialBackoffSeconds": 0},
     "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ("pod max backoff", {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
     "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to "
     "PodInitialBackoffSeconds"),
    ("unknown field", {"profiles": [{"schedulerNme": "x"}]},
     'unknown field "profiles[0].schedulerNme"; did you mean "schedulerName"?'),
    ("unknown top-level field", {"parallelsim": 4},
     'unknown field "parallelsim"; did you mean "parallelism"?'),
    ("unknown plugin field",
     {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A", "wieght": 2}]}}}]},
     'unknown field "profiles[0].plugins.score.enabled[0].wieght"; did you mean "weight"?'),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_kube_scheduler_configuration(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", **data})
    assert str(info.value) == f"KubeSchedulerConfiguration: {message}"


def _profile(*names: str, point: str = "multiPoint") -> dict[str, Any]:
    enabled = [{"name": n} for n in names]
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    plugins.setdefault(point, {})["enabled"] = enabled
    if point != "multiPoint":
        plugins["multiPoint"]["enabled"] = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]
    return {"profiles": [{"plugins": plugins}]}


async def _open(data: dict[str, Any]) -> None:
    async with Scheduler.open(parse_config(data), cluster=InMemoryCluster()):
        pass


FRAMEWORK_CASES = [
    ("no queue sort", _profile("DefaultBinder"),
     "profile 'default-scheduler': plugins.queueSort: no queue sort plugin is enabled"),
    ("two queue sorts", _profile("PrioritySort", "Coscheduling", "DefaultBinder"),
     "profile 'default-scheduler': plugins.queueSort: only one queue sort plugin can be enabled"),
    ("no bind", _profile("PrioritySort"),
     "profile 'default-scheduler': plugins.bind: at least one bind plugin is needed"),
    ("duplicate plugin", _profile("NodeName", "NodeName", point="filter"),
     "profile 'default-scheduler': plugins.filter.enabled[1]: plugin \"NodeName\" already "
     'registered as "FilterPlugin"'),
    ("does not extend", _profile("NodeName", point="queueSort"),
     "profile 'default-scheduler': plugins.queueSort: plugin 'NodeName' does not extend "
     "QueueSortPlugin plugin"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "message"), [c[1:] for c in FRAMEWORK_CASES], ids=[c[0] for c in FRAMEWORK_CASES]
)
@pytest.mark.anyio
async def test_new_framework_errors(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        await _open(data)
    assert str(info.value).startswith(message)


@pytest.mark.anyio
async def test_plugin_args_error_names_its_plugin_config_entry() -> None:
    data = {"profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": {}},
                                           {"name": "InterPodAffinity",
                                            "args": {"hardPodAffinityWeigth": 1}}]}]}  # fmt: skip
    with pytest.raises(ConfigError) as info:
        await _open(data)
    assert str(info.value).startswith(
        "profile 'default-scheduler': pluginConfig[1] InterPodAffinity"
    )
    assert "hardPodAffinityWeigth" in str(info.value)


@pytest.mark.parametrize(
    ("args", "field"),
    [({"defaultConstrains": []}, "defaultConstrains"),
     ({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                               "whenUnsatisfiable": "DoNotSchedule", "maxSkw": 2}]},
      "defaultConstraints[0].maxSkw")],
    ids=["args", "constraint"],
)  # fmt: skip
@pytest.mark.anyio
async def test_pod_topology_spread_args_are_decoded_strictly(
    args: dict[str, Any], field: str
) -> None:
    data = {"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": args}]}]}
    with pytest.raises(ConfigError) as info:
        await _open(data)
    assert str(info.value) == (
        "profile 'default-scheduler': pluginConfig[0] PodTopologySpread: args: "
        f'unknown field "{field}"'
    )
