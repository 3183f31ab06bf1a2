"""NodeTable's host-port index and free-room columns follow pods coming and going."""

from __future__ import annotations

from ksched.framework import NodeInfo, PodInfo
from ksched.framework.batch import NodeTable
from ksched.testing import make_node, make_pod


def test_port_in_use_follows_pods() -> None:
    infos = [NodeInfo(make_node(f"n{i}").capacity(cpu="4", pods=10).obj()) for i in range(3)]
    table = NodeTable(infos)
    assert table.port_in_use("TCP", 80) is None
    web = PodInfo.of(make_pod("web").host_port(80, host_ip="10.0.0.1").node("n1").obj())
    dns = PodInfo.of(make_pod("dns").host_port(53, "UDP").node("n2").obj())
    infos[1].add_pod(web)
    infos[2].add_pod(dns)
    table.update_row(1, infos[1])
    table.update_row(2, infos[2])
    tcp80 = table.port_in_use("", 80)  # "" means TCP
    assert tcp80 is not None and tcp80.tolist() == [False, True, False]
    assert table.port_in_use("UDP", 80) is None
    udp53 = table.port_in_use("UDP", 53)
    assert udp53 is not None and udp53.tolist() == [False, False, True]
    infos[1].remove_pod(web.pod)
    table.update_row(1, infos[1])
    assert table.port_in_use("TCP", 80) is None
    assert table.has_ports.tolist() == [False, False, True]


def test_free_room_follows_pods() -> None:
    infos = [NodeInfo.of(make_node(f"n{i}").capacity(cpu="4", pods=3).obj()) for i in range(2)]
    table = NodeTable(infos)
    assert table.free_cpu.tolist() == [4000, 4000]
    assert table.free_pods.tolist() == [3, 3]
    pod = PodInfo.of(make_pod("p").req(cpu="1500m", memory="1Gi").node("n1").obj())
    infos[1].add_pod(pod)
    table.update_row(1, infos[1])
    assert table.free_cpu.tolist() == [4000, 2500]
    assert table.free_memory.tolist() == (table.alloc_memory - [0, 1 << 30]).tolist()
    assert table.free_pods.tolist() == [3, 2]
    infos[1].remove_pod(pod.pod)
    table.update_row(1, infos[1])
    assert table.free_cpu.tolist() == [4000, 4000]
    assert table.free_pods.tolist() == [3, 3]


def test_host_ports_truthiness_follows_pods() -> None:
    info = NodeInfo(make_node("n0").capacity(cpu="4", pods=10).obj())
    table = NodeTable([info])
    web = PodInfo.of(make_pod("web").host_port(80).node("n0").obj())
    plain = PodInfo.of(make_pod("plain").node("n0").obj())
    info.add_pod(plain)
    table.update_row(0, info)
    assert not info.used_ports and table.has_ports.tolist() == [False]
    info.add_pod(web)
    table.update_row(0, info)
    assert info.used_ports and table.has_ports.tolist() == [True]
    info.remove_pod(web.pod)
    table.update_row(0, info)
    assert not info.used_ports and table.has_ports.tolist() == [False]
    assert table.port_in_use("TCP", 80) is None
