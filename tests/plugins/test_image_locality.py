"""ImageLocality: upstream image_locality_test.go (TestImageLocalityPriority,
TestNormalizedImageName).

The scheduler cache keys ``NodeInfo.image_states`` by the names a node reports in
``status.images`` (already tagged, as upstream's cache does); ``image_states`` below is built
the same way: each name maps to the image size and how many nodes report that name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from ksched.api import Container, ContainerImage, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from ksched.cache import Cache, Snapshot
from ksched.framework import CycleState, NodeInfo
from ksched.framework.batch import ImageStateSummary
from ksched.plugins.image_locality import ImageLocality, normalized_image_name
from ksched.testing import FakeHandle, make_node

MB = 1024 * 1024


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
    plugin = ImageLocality(FakeHandle(nodes=infos))
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


# ---- one image name, different sizes on different nodes --------------------------------


def scores(cache: Cache, pod: Pod) -> dict[str, int]:
    """ImageLocality's score per node from a fresh snapshot; the batch form must agree."""
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    plugin = ImageLocality(FakeHandle(snapshot=snapshot))
    state = CycleState()
    infos = snapshot.list()
    plugin.pre_score(state, pod, infos)
    per_node = {info.name: plugin.score(state, pod, info) for info in infos}
    rows = np.arange(len(infos), dtype=np.int64)
    batch = plugin.score_batch(state, pod, snapshot.table, rows)
    assert batch is not None
    assert dict(zip(snapshot.table.names, batch.tolist(), strict=True)) == per_node
    return per_node


def web_node(name: str, size_mb: int | None) -> Node:
    node = make_node(name)
    if size_mb is not None:
        node = node.image("web:v1", size_mb * MB)
    return node.obj()


def test_image_size_is_the_first_reporters_for_every_node() -> None:
    # pkg/scheduler/backend/cache/cache.go addNodeImageStates/removeNodeImageStates: one
    # summary per image name, sized by the first node to list it. Expected scores from
    # image_locality.go: sum = int(size * listing/total nodes), then
    # 100 * (sum - 23Mi) // (1000Mi - 23Mi), sum clamped to [23Mi, 1000Mi].
    pod = image_pod("web:v1")
    cache = Cache()
    for node in (web_node("n1", 300), web_node("n2", 800), web_node("n3", 500)):
        cache.add_node(node)
    cache.add_node(web_node("n4", None))
    # 300Mi * 3/4 = 225Mi -> 20 on all three (each node's own size would give 20, 59, 36).
    assert scores(cache, pod) == {"n1": 20, "n2": 20, "n3": 20, "n4": 0}

    # The first reporter leaves: its size stays while others list the name.
    # 300Mi * 2/3 = 200Mi -> 18 (n2's 800Mi would give 52).
    cache.remove_node(web_node("n1", 300))
    assert scores(cache, pod) == {"n2": 18, "n3": 18, "n4": 0}

    # An update with another size leaves and joins again: n3 still lists the name, so the
    # size does not change.
    cache.update_node(web_node("n2", 100))
    assert scores(cache, pod) == {"n2": 18, "n3": 18, "n4": 0}

    # n3 leaves: n2 alone lists the name, still at 300Mi. 300Mi * 1/2 = 150Mi -> 12.
    cache.remove_node(web_node("n3", 500))
    assert scores(cache, pod) == {"n2": 12, "n4": 0}

    # Updated while it alone lists the name, n2's own size takes over.
    # 100Mi * 1/2 = 50Mi -> 2.
    cache.update_node(web_node("n2", 100))
    assert scores(cache, pod) == {"n2": 2, "n4": 0}

    # Nobody lists it any more; the next node to list it sets the size afresh.
    # 700Mi * 1/2 = 350Mi -> 33.
    cache.update_node(web_node("n2", None))
    cache.update_node(web_node("n4", 700))
    assert scores(cache, pod) == {"n2": 0, "n4": 33}
