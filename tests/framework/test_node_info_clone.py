"""NodeInfo.clone: the snapshot's copy changes apart from the cache's NodeInfo."""

from __future__ import annotations

from ksched.framework import NodeInfo, PodInfo
from ksched.testing import make_node, make_pod


def test_a_clone_changes_apart_and_shares_only_allocatable() -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj()
    info = NodeInfo.of(node, [make_pod("a").req(cpu="1").host_port(80).node("n1").obj()])
    copy = info.clone()
    copy.add_pod(PodInfo.of(make_pod("b").req(cpu="2").node("n1").obj()))
    assert (info.requested.milli_cpu, copy.requested.milli_cpu) == (1000, 3000)
    assert ([p.pod.name for p in info.pods], len(copy.pods)) == (["a"], 2)
    assert info.generation < copy.generation
    copy.remove_pod(info.pods[0].pod)
    assert info.used_ports.conflicts("0.0.0.0", "TCP", 80)
    assert not copy.used_ports.conflicts("0.0.0.0", "TCP", 80)
    # Allocatable is only ever replaced (set_node), so the copies share it.
    assert copy.allocatable is info.allocatable
    info.set_node(make_node("n1").capacity(cpu="8", memory="8Gi", pods=10).obj())
    assert (info.allocatable.milli_cpu, copy.allocatable.milli_cpu) == (8000, 4000)
