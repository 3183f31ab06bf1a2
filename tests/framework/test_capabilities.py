"""Capabilities: what a plugin lets the fast paths assume, declared on the plugin.

An out-of-tree node-local Filter with a batch form gets its mask kept for equal pods, as
the in-tree ones do; one that promises nothing is asked for every pod. The answers are
the same either way.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pytest

from ksched import InMemoryCluster, Pod, Scheduler
from ksched.config import parse_config
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.framework.batch import BoolArray, Capabilities, NodeTable, PodField
from ksched.scheduler._observer import UNOBSERVED
from ksched.testing import make_node, make_pod

ZONE = "example.com/zone"


def _zone_wanted(pod: Pod) -> Hashable:
    return pod.spec.node_selector.get(ZONE)


class ZoneFilter:
    """Passes the nodes in the zone the pod's nodeSelector names (or every node)."""

    name = "ZoneFilter"

    def __init__(self) -> None:
        self.batch_calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = pod.spec.node_selector.get(ZONE)
        if wanted is None or node_info.node.labels.get(ZONE) == wanted:
            return None
        return Status(Code.UNSCHEDULABLE, ("node(s) were in another zone",))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray:
        self.batch_calls += 1
        wanted = pod.spec.node_selector.get(ZONE)
        return np.fromiter(
            (wanted is None or i.node.labels.get(ZONE) == wanted for i in table.infos),
            np.bool_,
            len(table),
        )


class LocalZoneFilter(ZoneFilter):
    capabilities = Capabilities(node_local_filter=True, pod_fields=(PodField(ZONE, _zone_wanted),))


def _scheduler(plugin: ZoneFilter) -> Scheduler:
    config = parse_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [
                                {"name": "PrioritySort"},
                                {"name": "DefaultBinder"},
                                {"name": "NodeResourcesFit"},
                                {"name": "ZoneFilter"},
                            ],
                            "disabled": [{"name": "*"}],
                        }
                    }
                }
            ]
        }
    )
    registry = {"ZoneFilter": lambda args, handle: plugin}
    scheduler = Scheduler(config, InMemoryCluster(), registry=registry, seed=1)
    for i in range(200):
        node = make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110).label(ZONE, f"z{i % 4}")
        scheduler.cache.add_node(node.obj())
    return scheduler


async def _place(scheduler: Scheduler, pods: list[Pod]) -> list[object]:
    fw = scheduler.frameworks["default-scheduler"]
    out: list[object] = []
    for pod in pods:
        scheduler.cache.update_snapshot(scheduler.snapshot)
        out.append(await scheduler.algorithm.schedule_pod(fw, CycleState(), pod, UNOBSERVED))
    return out


def _pods() -> list[Pod]:
    return [make_pod(f"p{i}").req(cpu="100m").node_selector({ZONE: "z1"}).obj() for i in range(5)]


@pytest.mark.anyio
async def test_a_declared_node_local_filter_gets_its_mask_kept(anyio_backend: str) -> None:
    local, plain = LocalZoneFilter(), ZoneFilter()
    kept = await _place(_scheduler(local), _pods())
    asked = await _place(_scheduler(plain), _pods())
    assert kept == asked  # the same nodes either way
    # Equal pods: the kept mask answers after the first (no row changed in between).
    assert local.batch_calls == 1
    # Promising nothing: the batch form is asked for every pod.
    assert plain.batch_calls == len(asked)


def test_the_row_key_reads_the_declared_fields() -> None:
    fw = _scheduler(LocalZoneFilter()).frameworks["default-scheduler"]
    a, b = _pods()[:2]
    other = make_pod("o").req(cpu="100m").node_selector({ZONE: "z2"}).obj()
    assert fw.row_key(a) == fw.row_key(b) != fw.row_key(other)
    assert fw.set.kept_filters == {"NodeResourcesFit", "ZoneFilter"}


def test_a_plugin_that_promises_nothing_is_named_in_the_profile_notes() -> None:
    fw = _scheduler(ZoneFilter()).frameworks["default-scheduler"]
    notes = fw.set.notes()
    assert (
        "plugin 'ZoneFilter' turns opportunistic batching off: it does not sign pods (sign_pod)"
        in notes
    )
    assert any("'ZoneFilter' turns kept Filter masks off" in n for n in notes)
    assert fw.batch is None
