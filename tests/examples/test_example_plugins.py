"""The example out-of-tree plugins (examples/plugins): scenarios, behaviour, discovery.

The package is installed in the venv (``pip install -e examples/plugins``), so its
plugins are found through the ``ksched.plugins`` entry points.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import anyio
import attrs
import pytest
from trio.testing import MockClock

from ksched import plugin_registry, simulate
from ksched._errors import ConfigError
from ksched.api import Namespace, Pod, read_object
from ksched.cluster import InMemoryCluster
from ksched.config import parse_config
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.scheduler import Scheduler
from ksched.testing import make_node, make_pod

try:
    import ksched_example_plugins as examples
except ImportError:  # pragma: no cover - the message says what to do
    pytest.fail(
        "the example plugins are not installed: .venv/bin/pip install -e examples/plugins",
        pytrace=False,
    )

SCENARIOS = Path(__file__).parents[2] / "examples" / "plugins" / "scenarios"
EXAMPLE_PLUGINS = ("DynamicResourceBinding", "GpuCardType", "MachineGroup", "StickyNode")


def profile(plugin: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A config: the default plugins plus ``plugin`` (with ``args``)."""
    data: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": [{"name": plugin}]}}}
    if args is not None:
        data["pluginConfig"] = [{"name": plugin, "args": args}]
    return {"profiles": [data]}


def pod(manifest: Mapping[str, Any]) -> Pod:
    obj = read_object({"apiVersion": "v1", "kind": "Pod", **manifest})
    assert isinstance(obj, Pod)
    return obj


def cpu_pod(name: str, cpu: str, **metadata: Any) -> Pod:
    return pod(
        {
            "metadata": {"name": name, **metadata},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        }
    )


def node(name: str, cpu: str, **labels: str) -> Any:
    builder = make_node(name).capacity(cpu=cpu, memory="32Gi", pods=110)
    return builder.labels(labels).obj()


# ---- discovery ---------------------------------------------------------------------------


def test_distribution_declares_the_entry_points() -> None:
    dist = importlib.metadata.distribution("ksched-example-plugins")
    eps = {ep.name: ep.value for ep in dist.entry_points if ep.group == "ksched.plugins"}
    assert eps == {
        "DynamicResourceBinding": (
            "ksched_example_plugins.dynamic_resource_binding:DynamicResourceBinding"
        ),
        "GpuCardType": "ksched_example_plugins.gpu_card_type:GpuCardType",
        "MachineGroup": "ksched_example_plugins.machine_group:MachineGroup",
        "StickyNode": "ksched_example_plugins.sticky_node:StickyNode",
    }


def test_registry_finds_the_example_plugins_by_entry_point() -> None:
    registry = plugin_registry()
    for name in EXAMPLE_PLUGINS:
        assert registry[name] == getattr(examples, name).new
    # A spec naming an installed entry point's factory again is the same plugin.
    again = plugin_registry(["ksched_example_plugins:StickyNode"])
    assert again["StickyNode"] == examples.StickyNode.new


def test_scheduler_builds_entry_point_plugins_named_in_config() -> None:
    config = parse_config(profile("GpuCardType", {"mode": "preferred"}))
    scheduler = Scheduler(config, InMemoryCluster(), registry=plugin_registry())
    fw = scheduler.frameworks["default-scheduler"]
    plugin = fw.plugins["GpuCardType"]
    assert isinstance(plugin, examples.GpuCardType)
    assert plugin.args.mode == "preferred"
    assert "GpuCardType" in fw.points["filter"]
    assert "GpuCardType" in fw.points["score"]


# ---- scenarios ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    result = simulate.check_scenario(path, registry=plugin_registry())
    assert result.passed, result.detail


def test_every_example_plugin_has_a_scenario() -> None:
    named = {
        name
        for path in SCENARIOS.glob("*.yaml")
        for name in EXAMPLE_PLUGINS
        if f"name: {name}" in path.read_text()
    }
    assert named == set(EXAMPLE_PLUGINS)


@pytest.mark.parametrize("plugin", EXAMPLE_PLUGINS)
def test_scenarios_fail_without_the_plugin(plugin: str) -> None:
    # The scenarios pin what the plugin does: a plugin of the same name that does
    # nothing makes each of its scenarios fail.
    class Inert:
        name = plugin

        def filter(self, state: CycleState, pod: Pod, node_info: Any) -> None:
            return None

    registry = {**plugin_registry(), plugin: lambda args, handle: Inert()}
    paths = [p for p in SCENARIOS.glob("*.yaml") if f"name: {plugin}" in p.read_text()]
    assert paths
    for path in paths:
        assert not simulate.check_scenario(path, registry=registry).passed, path.name


# ---- typed args --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin", "args", "message"),
    [
        (
            "GpuCardType",
            {"mode": "loose"},
            "profile 'default-scheduler': pluginConfig[0] GpuCardType: args.mode: "
            "must be one of 'strict', 'preferred', not 'loose'",
        ),
        (
            "GpuCardType",
            {"rareCardTypes": ["a100", 7]},
            "GpuCardType: args.rareCardTypes[1]: must be a string, not 7",
        ),
        (
            "MachineGroup",
            {"confine_teams": True},
            "MachineGroup: args.confine_teams: unknown field (did you mean 'confineTeams'?)",
        ),
        (
            "MachineGroup",
            {"confineTeams": "yes"},
            "MachineGroup: args.confineTeams: must be a boolean, not 'yes'",
        ),
        (
            "DynamicResourceBinding",
            {"capacity": {"fpga": "one"}},
            "DynamicResourceBinding: args.capacity.fpga: must be an integer, not 'one'",
        ),
        (
            "DynamicResourceBinding",
            {"attachSeconds": -1},
            "DynamicResourceBinding: args: 'attach_seconds' must be >= 0.0: -1.0",
        ),
        ("StickyNode", {"annotation": None}, "StickyNode: args.annotation: must be a string"),
    ],
    ids=["literal", "list-item", "snake-case-key", "bool", "mapping-value", "validator", "str"],
)
def test_bad_args_name_profile_plugin_and_field(
    plugin: str, args: dict[str, Any], message: str
) -> None:
    config = parse_config(profile(plugin, args))
    with pytest.raises(ConfigError) as info:
        Scheduler(config, InMemoryCluster(), registry=plugin_registry())
    assert message in str(info.value)
    assert str(info.value).startswith("profile 'default-scheduler': ")


def test_args_defaults() -> None:
    assert examples.GpuCardTypeArgs() == examples.GpuCardTypeArgs(
        mode="strict", rare_card_types=frozenset(), card_label="ksched.example/gpu-card"
    )
    config = parse_config(profile("GpuCardType", {"rareCardTypes": ["a100", "h100"]}))
    scheduler = Scheduler(config, InMemoryCluster(), registry=plugin_registry())
    plugin = scheduler.frameworks["default-scheduler"].plugins["GpuCardType"]
    assert isinstance(plugin, examples.GpuCardType)
    assert plugin.args.rare_card_types == frozenset({"a100", "h100"})
    assert plugin.args.mode == "strict"


# ---- StickyNode --------------------------------------------------------------------------

ANNOTATION = "ksched.example/sticky-node"


def owned(name: str, owner: str, uid: str = "") -> Pod:
    ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": owner, "controller": True}
    return cpu_pod(name, "2", ownerReferences=[ref], uid=uid)


def stateful_set(name: str, **annotations: str) -> Any:
    return read_object(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"selector": {"matchLabels": {"vm": name}}},
        }
    )


@pytest.mark.anyio
async def test_sticky_node_records_first_node_and_returns_there() -> None:
    cluster = InMemoryCluster()
    await cluster.add([node("big", "16"), node("small", "8"), stateful_set("vm")])
    config = parse_config(profile("StickyNode"))
    async with Scheduler.open(config, cluster, registry=plugin_registry()):
        await cluster.add_pod(owned("vm-0", "vm"))
        first = await cluster.wait_bound("default/vm-0", timeout=5)
        assert first.spec.node_name == "big"  # the emptier node
        owner = cluster.get("StatefulSet", "default/vm")
        assert owner is not None
        assert owner.metadata.annotations == {ANNOTATION: "big"}

        # The VM restarts while "big" fills up: "small" is now the emptier node.
        await cluster.delete_pod("default/vm-0")
        await cluster.add_pod(make_pod("batch").req(cpu="12").obj())
        await cluster.wait_bound("default/batch", timeout=5)
        await cluster.add_pod(owned("vm-0", "vm", uid="vm-0-restarted"))
        await anyio.wait_all_tasks_blocked()  # (wait_bound would see the first binding)
        again = cluster.get_pod("default/vm-0")
        assert again is not None
        assert again.metadata.uid == "vm-0-restarted"
        assert again.spec.node_name == "big"
        # Pods without an owner are not touched: StickyNode skipped them.
        other = make_pod("free").req(cpu="1").obj()
        await cluster.add_pod(other)
        assert (await cluster.wait_bound("default/free", timeout=5)).spec.node_name == "small"


@pytest.mark.anyio
async def test_sticky_node_waits_for_its_node_to_come_back() -> None:
    cluster = InMemoryCluster()
    await cluster.add([node("n1", "8"), stateful_set("vm", **{ANNOTATION: "n2"})])
    config = parse_config(profile("StickyNode"))
    async with Scheduler.open(config, cluster, registry=plugin_registry()) as scheduler:
        await cluster.add_pod(owned("vm-0", "vm"))
        await anyio.wait_all_tasks_blocked()
        record = scheduler.records["default/vm-0"]
        assert record.message is not None
        assert "1 node(s) didn't match the node n2 recorded for the pod's owner" in record.message
        await cluster.add_node(node("n2", "8"))
        bound = await cluster.wait_bound("default/vm-0", timeout=5)
        assert bound.spec.node_name == "n2"


def test_sticky_node_needs_a_store_that_updates_owners() -> None:
    class ReadOnly(InMemoryCluster):
        apply = None  # type: ignore[assignment]  # a store without writes

    with pytest.raises(ConfigError, match="StickyNode: the cluster store cannot"):
        Scheduler(parse_config(profile("StickyNode")), ReadOnly(), registry=plugin_registry())


# ---- GpuCardType -------------------------------------------------------------------------

CARD = "ksched.example/gpu-card"


@pytest.mark.parametrize(
    ("mode", "asks", "card", "code"),
    [
        ("strict", None, None, None),
        ("strict", None, "a100", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        ("strict", None, "t4", None),  # t4 is not rare
        ("strict", "a100", "a100", None),
        ("strict", "a100", None, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        ("strict", "t4", "a100", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        ("preferred", "a100", None, None),
        ("preferred", "t4", "a100", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        ("preferred", None, "a100", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ],
)
def test_gpu_card_type_filter(
    mode: Literal["strict", "preferred"], asks: str | None, card: str | None, code: Code | None
) -> None:
    args = examples.GpuCardTypeArgs(mode=mode, rare_card_types=frozenset({"a100"}))
    plugin = examples.GpuCardType(args)
    the_pod = cpu_pod("p", "1", annotations={CARD: asks} if asks else {})
    info = NodeInfo.of(node("n", "4", **({CARD: card} if card else {})))
    status = plugin.filter(CycleState(), the_pod, info)
    assert (status.code if status is not None else None) == code


def test_gpu_card_type_every_card_rare_by_default() -> None:
    plugin = examples.GpuCardType(examples.GpuCardTypeArgs())
    info = NodeInfo.of(node("n", "4", **{CARD: "t4"}))
    status = plugin.filter(CycleState(), cpu_pod("p", "1"), info)
    assert status is not None
    assert status.reasons == ("node(s) had GPU card type t4 reserved for pods that ask for it",)


@pytest.mark.anyio
async def test_gpu_card_type_jobs_that_take_a_node_each_are_batched() -> None:
    """GpuCardType signs pods, so equal GPU jobs that fill a node each share a ranking
    (with PodTopologySpread's default constraints cleared, as batching needs)."""
    data = profile("GpuCardType", {"rareCardTypes": ["a100"]})
    data["profiles"][0]["pluginConfig"].append(
        {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}
    )
    cluster = InMemoryCluster()
    await cluster.add([node(f"a100-{i}", "4", **{CARD: "a100"}) for i in range(4)])
    await cluster.add([node("t4-0", "64", **{CARD: "t4"})])
    async with Scheduler.open(parse_config(data), cluster, registry=plugin_registry()) as sched:
        placed = []
        for i in range(4):
            job = cpu_pod(f"train-{i}", "3", annotations={CARD: "a100"})
            await cluster.add_pod(job)
            node_name = (await cluster.wait_bound(job.key, timeout=10)).spec.node_name
            assert node_name is not None
            placed.append(node_name)
        batch = sched.frameworks["default-scheduler"].batch
        assert batch is not None
        assert batch.batched_pods == 3
    # Each job on its own a100 node (3 of 4 cpus), never on the t4.
    assert sorted(placed) == ["a100-0", "a100-1", "a100-2", "a100-3"]


# ---- MachineGroup ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_machine_group_pod_moves_in_when_its_namespace_joins_the_team() -> None:
    cluster = InMemoryCluster()
    namespace = Namespace(name="lab")
    await cluster.add([namespace, node("ml-1", "8", **{"ksched.example/machine-group": "ml"})])
    config = parse_config(profile("MachineGroup"))
    async with Scheduler.open(config, cluster, registry=plugin_registry()) as scheduler:
        await cluster.add_pod(cpu_pod("job", "1", namespace="lab"))
        await anyio.wait_all_tasks_blocked()
        message = scheduler.records["lab/job"].message
        assert message is not None
        assert "1 node(s) belonged to another team's machine group" in message
        # The namespace joins team ml: the Namespace event requeues the pod.
        await cluster.add([attrs.evolve(namespace, labels={"ksched.example/team": "ml"})])
        bound = await cluster.wait_bound("lab/job", timeout=5)
        assert bound.spec.node_name == "ml-1"


# ---- DynamicResourceBinding --------------------------------------------------------------

FPGA = {"ksched.example/dynamic-resource": "fpga"}


def mock_clock() -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
    )


class FailingPreBind:
    """A PreBind plugin after DynamicResourceBinding that fails once per pod."""

    name = "FailingPreBind"

    def __init__(self) -> None:
        self.failed: set[str] = set()

    def new(self, args: Any, handle: Any) -> FailingPreBind:
        return self

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.uid in self.failed:
            return None
        self.failed.add(pod.uid)
        return Status(Code.ERROR, "volume not ready")


@mock_clock()
@pytest.mark.anyio
async def test_dynamic_resource_attaches_at_prebind_and_retries_when_used_up() -> None:
    pool = examples.ResourcePool({"fpga": 1})
    registry = {
        **plugin_registry(),
        "DynamicResourceBinding": examples.DynamicResourceBinding.with_pool(pool),
    }
    config = parse_config(profile("DynamicResourceBinding", {"attachSeconds": 2}))
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", "8"))
    async with Scheduler.open(config, cluster, registry=registry) as scheduler:
        t0 = anyio.current_time()
        await cluster.add_pod(cpu_pod("a", "1", annotations=FPGA))
        await cluster.wait_bound("default/a", timeout=5)
        assert anyio.current_time() - t0 == 2.0  # the attach took 2 s of the loop's clock
        assert pool.attachments == {"default/a": ("fpga", "n1")}

        await cluster.add_pod(cpu_pod("b", "1", annotations=FPGA))
        await anyio.sleep(2.5)
        await anyio.wait_all_tasks_blocked()
        b = cluster.get_pod("default/b")
        assert b is not None and not b.spec.node_name
        message = scheduler.records[b.uid].message
        assert message == "cannot attach fpga to n1: all 1 fpga are attached"
        assert list(pool.attachments) == ["default/a"]

        # Deleting a releases its FPGA; b's next retry (backoff) gets it.
        t1 = anyio.current_time()
        await cluster.delete_pod("default/a")
        assert pool.attachments == {}
        bound = await cluster.wait_bound("default/b", timeout=30)
        # b failed at 4.0 (its attach began at 2.0), was retried 2 s later (error
        # backoff, then the backoffQ flush) and attached for 2 s more.
        assert (t1 - t0, anyio.current_time() - t0) == (4.5, 8.0)
        assert bound.spec.node_name == "n1"
        assert list(pool.attachments) == [bound.uid]
        assert scheduler.records[bound.uid].attempts == 2


@mock_clock()
@pytest.mark.anyio
async def test_dynamic_resource_released_by_unreserve_after_a_later_failure() -> None:
    pool = examples.ResourcePool({"fpga": 1})
    failing = FailingPreBind()
    registry = {
        **plugin_registry(),
        "DynamicResourceBinding": examples.DynamicResourceBinding.with_pool(pool),
        "FailingPreBind": failing.new,
    }
    config = parse_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [
                                {"name": "DynamicResourceBinding"},
                                {"name": "FailingPreBind"},
                            ]
                        }
                    }
                }
            ]
        }
    )
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", "8"))
    async with Scheduler.open(config, cluster, registry=registry):
        t0 = anyio.current_time()
        await cluster.add_pod(cpu_pod("a", "1", annotations=FPGA))
        bound = await cluster.wait_bound("default/a", timeout=30)
        # Failed at t0, retried 2 s later (error backoff, then the backoffQ flush).
        assert anyio.current_time() - t0 == 2.0
        # First attempt: attached, then FailingPreBind failed -> Unreserve released it.
        assert failing.failed == {bound.uid}
        assert pool.log == [
            ("attach", "fpga", "n1", "default/a"),
            ("release", "fpga", "n1", "default/a"),
            ("attach", "fpga", "n1", "default/a"),
        ]
        assert pool.attachments == {"default/a": ("fpga", "n1")}


def test_resource_pool() -> None:
    pool = examples.ResourcePool({"fpga": 2})
    pool.attach("fpga", "n1", "p1")
    pool.attach("fpga", "n1", "p1")  # idempotent per pod
    pool.attach("fpga", "n2", "p2")
    assert pool.in_use("fpga") == 2
    with pytest.raises(examples.AttachError, match="all 2 fpga are attached"):
        pool.attach("fpga", "n1", "p3")
    with pytest.raises(examples.AttachError, match="no resource class 'gpu'"):
        pool.attach("gpu", "n1", "p3")
    assert pool.release("p1") is True
    assert pool.release("p1") is False
    pool.attach("fpga", "n1", "p3")
    assert pool.attachments == {"p2": ("fpga", "n2"), "p3": ("fpga", "n1")}
    assert [entry[0] for entry in pool.log] == ["attach", "attach", "release", "attach"]
