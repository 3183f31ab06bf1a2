"""Nodes, pods and a Handle for the GPU-sharing plugin tests (tests/plugins/test_gpu_share*.py).

Nodes and pods are built from manifests as the FGD artifact's YAML files spell them
(hkust-adsl/kubernetes-scheduler-simulator data/node_yaml, data/pod_csv_to_yaml.py).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from ksched import InMemoryCluster, parse_config
from ksched.api import Node, Pod, read_object
from ksched.framework import NodeInfo, PodInfo
from ksched.plugins.gpu_share import TypicalPod

MILLI_KEY = "alibabacloud.com/gpu-milli"
COUNT_KEY = "alibabacloud.com/gpu-count"
INDEX_KEY = "alibabacloud.com/gpu-index"
MODEL_KEY = "alibabacloud.com/gpu-card-model"


def gpu_node(name: str, gpus: int, model: str = "G2", cpu: str = "64", pods: int = 1001) -> Node:
    """A node as the artifact's openb_node_list_gpu_node.yaml has it."""
    amounts = {
        "cpu": cpu,
        "memory": "256Gi",
        "pods": str(pods),
        COUNT_KEY: str(gpus),
        MILLI_KEY: str(gpus * 1000),
    }
    labels = {MODEL_KEY: model} if model else {}
    node = read_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"capacity": amounts, "allocatable": amounts},
        }
    )
    assert isinstance(node, Node)
    return node


def gpu_pod(
    name: str,
    cpu: str = "4",
    milli: int | str | None = None,
    count: int | str | None = None,
    *,
    model: str | None = None,
    index: str | None = None,
    node: str | None = None,
    priority: int | None = None,
    namespace: str = "default",
) -> Pod:
    """A pod as pod_csv_to_yaml.py writes it: GPU asks in annotations, cpu in requests."""
    annotations: dict[str, str] = {}
    if milli is not None:
        annotations[MILLI_KEY] = str(milli)
    if count is not None:
        annotations[COUNT_KEY] = str(count)
    if model is not None:
        annotations[MODEL_KEY] = model
    if index is not None:
        annotations[INDEX_KEY] = index
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]
    }
    if node is not None:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    pod = read_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"{namespace}/{name}",
                "annotations": annotations,
            },
            "spec": spec,
        }
    )
    assert isinstance(pod, Pod)
    return pod


def info_of(node: Node, pods: Iterable[Pod] = ()) -> NodeInfo:
    return NodeInfo.of(node, [PodInfo.of(p) for p in pods])


class FakeHandle:
    """The parts of the Handle the GPU plugins read: the cluster, the snapshot, the rng and
    the profile's plugins."""

    def __init__(self, nodes: Sequence[NodeInfo] = (), seed: int = 0) -> None:
        self.cluster = InMemoryCluster()
        self.nodes = list(nodes)
        self.rng = random.Random(seed)
        self.score_plugins: list[tuple[str, Any]] = []
        self.reserve_plugins: list[tuple[str, Any]] = []

    @property
    def snapshot(self) -> FakeHandle:
        return self

    def list(self) -> list[NodeInfo]:
        return self.nodes

    def get(self, name: str) -> NodeInfo | None:
        return next((n for n in self.nodes if n.name == name), None)

    def plugins_at(self, point: str) -> Sequence[tuple[str, Any]]:
        if point == "score":
            return self.score_plugins
        if point in ("reserve", "filter"):
            return self.reserve_plugins
        return []


def typical(*rows: tuple[int, int, int, str, float]) -> tuple[TypicalPod, ...]:
    """TypicalPods from (milliCpu, milliGpu, gpuNumber, gpuType, percentage) rows."""
    return tuple(
        TypicalPod(milli_cpu=c, milli_gpu=g, gpu_number=k, gpu_type=t, percentage=p)
        for c, g, k, t, p in rows
    )


def gpu_profile(
    policy: str | None,
    args: dict[str, Any] | None = None,
    share_args: dict[str, Any] | None = None,
    *,
    preemption: bool = True,
) -> Any:
    """A configuration: the default filters, Open-Gpu-Share, and ``policy`` as the only
    Score plugin (weight 1000), as the artifact's run scripts configure a policy."""
    plugins: dict[str, Any] = {
        "preFilter": {"enabled": [{"name": "Open-Gpu-Share"}]},
        "filter": {"enabled": [{"name": "Open-Gpu-Share"}]},
        "preScore": {"disabled": [{"name": "*"}]},
        "score": {"disabled": [{"name": "*"}]},
        "reserve": {"enabled": [{"name": "Open-Gpu-Share"}]},
        "preBind": {"enabled": [{"name": "Open-Gpu-Share"}]},
    }
    if policy is not None:
        plugins["score"]["enabled"] = [{"name": policy, "weight": 1000}]
        if policy == "RandomScore":
            plugins["preScore"]["enabled"] = [{"name": policy}]
    if not preemption:
        plugins["postFilter"] = {"disabled": [{"name": "*"}]}
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugins}
    config: list[dict[str, Any]] = []
    if args is not None and policy is not None:
        config.append({"name": policy, "args": args})
    if share_args is not None:
        config.append({"name": "Open-Gpu-Share", "args": share_args})
    if config:
        profile["pluginConfig"] = config
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100,
            "profiles": [profile],
        }
    )
