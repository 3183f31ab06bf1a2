"""ImageLocality: upstream image_locality_test.go (TestImageLocalityPriority,
TestNormalizedImageName).

The scheduler cache keys ``NodeInfo.image_states`` by the names a node reports in
``status.images`` (already tagged, as upstream's cache does); ``image_states`` below is built
the same way: each name maps to the image size and how many nodes report that name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import cast

import pytest

from ksched.api import Container, ContainerImage, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from ksched.framework import CycleState, Handle, ImageStateSummary, NodeInfo
from ksched.plugins.image_locality import ImageLocality, normalized_image_name

MB = 1024 * 1024


class FakeSnapshot:
    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self._infos = list(infos)

    def list(self) -> Sequence[NodeInfo]:
        return self._infos

    def get(self, node_name: str) -> NodeInfo | None:
        return next((ni for ni in self._infos if ni.name == node_name), None)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return []

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return []


class FakeHandle:
    """Just the snapshot: ImageLocality counts all nodes through it."""

    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self.snapshot = FakeSnapshot(infos)


def node_infos(nodes: Sequence[Node]) -> list[NodeInfo]:
    """NodeInfos with image_states filled as the cache fills them."""
    holders: dict[str, set[str]] = {}
    sizes: dict[str, int] = {}
    for n in nodes:
        for image in n.status.images:
            for name in image.names:
                holders.setdefault(name, set()).add(n.name)
                sizes.setdefault(name, image.size_bytes)
    infos = []
    for n in nodes:
        info = NodeInfo.of(n)
        info.image_states = {
            name: ImageStateSummary(size=sizes[name], num_nodes=len(holders[name]))
            for image in n.status.images
            for name in image.names
        }
        infos.append(info)
    return infos


def image_node(name: str, *images: tuple[Sequence[str], int]) -> Node:
    """upstream makeImageNode: only status.images (sizes in MB)."""
    return Node(
        metadata=ObjectMeta(name=name, namespace=""),
        status=NodeStatus(
            images=tuple(ContainerImage(names=tuple(n), size_bytes=s * MB) for n, s in images)
        ),
    )


def image_pod(*images: str, init: Sequence[str] = ()) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p"),
        spec=PodSpec(
            containers=tuple(Container(name=f"c{i}", image=im) for i, im in enumerate(images)),
            init_containers=tuple(Container(name=f"i{i}", image=im) for i, im in enumerate(init)),
        ),
    )


NODE_40_300_2000 = (
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
)
NODE_250_10 = ((["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))
NODE_600_40_900 = (
    (["gcr.io/600:latest"], 600),
    (["gcr.io/40:latest"], 40),
    (["gcr.io/900:latest"], 900),
)
NODE_300_600_900 = (
    (["gcr.io/300:latest"], 300),
    (["gcr.io/600:latest"], 600),
    (["gcr.io/900:latest"], 900),
)
NODE_4000_30 = ((["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))
NODE_20_30_40 = (
    (["gcr.io/20:latest"], 20),
    (["gcr.io/30:latest"], 30),
    (["gcr.io/40:latest"], 40),
)

CASES = [
    ("two images spread on two nodes, prefer the larger image one",
     image_pod("gcr.io/40", "gcr.io/250"),
     [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)], [0, 5]),
    ("two images on one node, prefer this node", image_pod("gcr.io/40", "gcr.io/300"),
     [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)], [7, 0]),
    ("if exceed limit, use limit", image_pod("gcr.io/10", "gcr.io/4000"),
     [image_node("node1", *NODE_4000_30), image_node("node2", *NODE_250_10)], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)",
     image_pod("gcr.io/10", "gcr.io/4000"),
     [image_node("node1", *NODE_4000_30), image_node("node2", *NODE_250_10),
      image_node("node3")], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred",
     image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     [image_node("node1", *NODE_600_40_900), image_node("node2", *NODE_300_600_900),
      image_node("node3")], [32, 36, 0]),
    ("pod with multiple small images", image_pod("gcr.io/30", "gcr.io/40"),
     [image_node("node1", *NODE_20_30_40), image_node("node2", *NODE_4000_30)], [1, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     image_pod("gcr.io/30", init=["gcr.io/300"]),
     [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_20_30_40)], [6, 0]),
]  # fmt: skip


@pytest.mark.parametrize("pre_score", [True, False], ids=["with PreScore", "without PreScore"])
@pytest.mark.parametrize(
    ("pod", "nodes", "want"), [r[1:] for r in CASES], ids=[r[0] for r in CASES]
)
def test_image_locality_priority(
    pod: Pod, nodes: Sequence[Node], want: list[int], pre_score: bool
) -> None:
    infos = node_infos(nodes)
    plugin = ImageLocality(cast(Handle, FakeHandle(infos)))
    state = CycleState()
    if pre_score:
        plugin.pre_score(state, pod, infos)
    assert [plugin.score(state, pod, ni) for ni in infos] == want


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


NORMALIZED = [
    ("add :latest postfix 1", "root", "root:latest"),
    ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("keep it as is 1", "root:tag", "root:tag"),
    ("keep it as is 2", "root@" + fake_digest("root"), "root@" + fake_digest("root")),
]


@pytest.mark.parametrize(
    ("image", "want"), [r[1:] for r in NORMALIZED], ids=[r[0] for r in NORMALIZED]
)
def test_normalized_image_name(image: str, want: str) -> None:
    assert normalized_image_name(image) == want
