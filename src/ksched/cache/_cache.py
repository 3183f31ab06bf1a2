"""The scheduler's cache of nodes and pods, with assumed pods, and its per-cycle snapshot.

# pkg/scheduler/backend/cache/cache.go, snapshot.go, node_tree.go
Every change bumps a node's generation; ``update_snapshot`` brings in only the NodeInfos
whose generation moved since the snapshot was last refreshed. A snapshot holds the cache's
own NodeInfo until the cache changes that node: the cache then copies it first and changes
the copy (copy on write), so a snapshot never sees a change it was not refreshed with, and
the nodes nothing changed are never copied (at 50 000 nodes, most of them).

Images (addNodeImageStates / removeNodeImageStates): one state per image name for the
whole cluster, holding the size the first node to list that name reported and the set of
nodes listing it. Later nodes only join the set, whatever size they report; a node leaving
only leaves it, so the size outlives its reporter while any node still lists the name. An
update leaves, then joins again: its new size counts only when no other node lists the name.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import attrs

from ..api import Node, ObjectMeta, Pod
from ..framework import NodeInfo, PodInfo
from ..framework.batch import ImageStateSummary, NodeTable, PodIndex

__all__ = ["Cache", "Snapshot"]

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"


_OVERLAY_GENERATIONS = itertools.count(-1, -1)
"""Generations of overlaid copies: negative, so never a cache generation, and unique, so
caches keyed by (node, generation) never mistake one tentative state for another."""


def _zone_key(node: Node) -> str:
    labels = node.labels
    region, zone = labels.get(REGION_LABEL, ""), labels.get(ZONE_LABEL, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


@attrs.define(eq=False, slots=True)
class _ImageState:
    """One image name across the cluster: upstream's shared ImageStateSummary."""

    size: int
    """As reported by the node that first listed the name."""
    nodes: set[str]
    summary: ImageStateSummary
    """What every listing node's NodeInfo shows: ``size`` and ``len(nodes)``."""


def _image_names(node: Node) -> list[str]:
    return [name for image in node.status.images for name in image.names]


@attrs.define(eq=False, slots=True)
class _PodState:
    pod: Pod
    assumed: bool = False
    binding_finished: bool = False


class Snapshot:
    """A consistent view of the nodes for one scheduling cycle (the SharedLister)."""

    def __init__(self) -> None:
        self._by_name: dict[str, NodeInfo] = {}
        self._list: list[NodeInfo] = []
        self._with_affinity: list[NodeInfo] = []
        self._with_anti_affinity: list[NodeInfo] = []
        self._affinity_stale = False
        """The two lists above need rebuilding (done on first read, not per refresh)."""
        self._index: dict[str, int] = {}
        self.generation = 0
        self.layout = -1
        self.table = NodeTable()
        """The nodes as columns, row ``i`` being ``list()[i]`` (for batch forms)."""
        self.pod_index = PodIndex()
        """The pods by label, per-node counts of selected pods and of existing pods'
        affinity terms, rows as in ``table`` (for the topology plugins)."""
        self.overlaid: set[str] = set()
        """Nodes whose copy holds a tentative change (:meth:`overlay`), put back from the
        cache at the next refresh."""

    def list(self) -> Sequence[NodeInfo]:
        return self._list

    def get(self, node_name: str) -> NodeInfo | None:
        return self._by_name.get(node_name)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        if self._affinity_stale:
            self._list_affinity()
        return self._with_affinity

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        if self._affinity_stale:
            self._list_affinity()
        return self._with_anti_affinity

    def _list_affinity(self) -> None:
        self._with_affinity = [i for i in self._list if i.pods_with_affinity]
        self._with_anti_affinity = [i for i in self._list if i.pods_with_required_anti_affinity]
        self._affinity_stale = False

    def __len__(self) -> int:
        return len(self._list)

    def overlay(self, info: NodeInfo) -> None:
        """Put ``info`` (a changed clone of a listed node) in place of the node's copy.

        A pod-group cycle places its members and removes preemption victims here, in the
        snapshot only, so each member sees the ones before it while the cache learns only
        the group's final decision. The next refresh from the cache replaces the copy.
        """
        index = self._index[info.name]
        old = self._by_name[info.name]
        info.generation = next(_OVERLAY_GENERATIONS)
        self._by_name[info.name] = self._list[index] = info
        self.table.update_row(index, info)
        self.pod_index.replace_node(old, info)
        if old.pods_with_affinity or info.pods_with_affinity:
            self._affinity_stale = True
        self.overlaid.add(info.name)


class Cache:
    """Nodes, bound pods and assumed pods, aggregated into NodeInfos."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._ghost: set[str] = set()
        self._pods: dict[str, _PodState] = {}
        self._zones: dict[str, list[str]] = {}
        self._images: dict[str, _ImageState] = {}
        self._generation = 0
        self._dirty: set[str] = set()
        """Nodes changed since the last snapshot refresh."""
        self._shared: set[str] = set()
        """Nodes whose NodeInfo a snapshot holds: copied before the cache changes them."""
        self._layout = 0
        """Bumped when the snapshot's node list changes membership or order."""
        self._order: list[str] | None = None
        self._refreshed_at = 0

    # ---- bookkeeping ----------------------------------------------------------------

    def _own(self, info: NodeInfo) -> NodeInfo:
        """``info`` (the cache's NodeInfo of its node), to be changed: a copy in its place
        when a snapshot holds it."""
        name = info.name
        if name not in self._shared:
            return info
        self._shared.discard(name)
        copy = self._nodes[name] = info.clone()
        return copy

    def _touch(self, info: NodeInfo) -> None:
        self._generation += 1
        info.generation = self._generation
        self._dirty.add(info.name)

    def _relayout(self) -> None:
        self._layout += 1
        self._order = None

    def _info_for(self, node_name: str) -> NodeInfo:
        info = self._nodes.get(node_name)
        if info is None:
            placeholder = Node(metadata=ObjectMeta(name=node_name, namespace=""))
            info = NodeInfo.of(placeholder)
            self._nodes[node_name] = info
            self._ghost.add(node_name)
        return info

    # ---- nodes ------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        info = self._nodes.get(node.name)
        if info is None:  # a new node: its NodeInfo made once (no placeholder first)
            info = self._nodes[node.name] = NodeInfo.of(node)
            old: Node | None = None
            keep_position = False
        else:
            info = self._own(info)
            old = None if node.name in self._ghost else info.node
            self._ghost.discard(node.name)
            keep_position = old is not None and _zone_key(old) == _zone_key(node)
            if old is not None and not keep_position:
                self._untrack_zone(old)
            info.set_node(node)
        if not keep_position:
            self._zones.setdefault(_zone_key(node), []).append(node.name)
            self._relayout()
        self._update_images(node.name, old, node)
        self._touch(info)

    update_node = add_node

    def remove_node(self, node: Node) -> None:
        info = self._nodes.get(node.name)
        if info is None:
            return
        self._untrack_zone(info.node)
        self._update_images(node.name, info.node, None)
        self._relayout()
        if info.pods:
            # Keep the pods accounted until they are removed, as upstream does.
            self._ghost.add(node.name)
            self._touch(self._own(info))
        else:
            del self._nodes[node.name]
            self._ghost.discard(node.name)
            self._shared.discard(node.name)
            self._generation += 1

    def _update_images(self, node_name: str, old: Node | None, new: Node | None) -> None:
        """Move ``node_name`` from the images ``old`` lists to those ``new`` lists.

        As upstream: leave every image of ``old`` (a state no node lists any more is
        dropped), then join every image of ``new`` (a name no node lists yet starts a
        state with this node's size). Other nodes listing an image whose count changed
        are touched, so the snapshot refreshes what they show.
        """
        images = self._images
        old_names = _image_names(old) if old is not None else []
        for name in old_names:
            state = images.get(name)
            if state is not None:
                state.nodes.discard(node_name)
                if not state.nodes:
                    del images[name]
        new_names: list[str] = []
        if new is not None:
            for image in new.status.images:
                for name in image.names:
                    new_names.append(name)
                    state = images.get(name)
                    if state is None:
                        summary = ImageStateSummary(image.size_bytes, 1)
                        images[name] = _ImageState(image.size_bytes, {node_name}, summary)
                    else:
                        state.nodes.add(node_name)
        for name in (*old_names, *new_names):
            state = images.get(name)
            if state is not None and state.summary.num_nodes != len(state.nodes):
                state.summary = ImageStateSummary(state.size, len(state.nodes))
                self._touch_image_holders(state.nodes, node_name)

    def _untrack_zone(self, node: Node) -> None:
        zone = _zone_key(node)
        names = self._zones.get(zone)
        if names is not None and node.name in names:
            names.remove(node.name)
            if not names:
                del self._zones[zone]

    def _touch_image_holders(self, holders: set[str], changed: str) -> None:
        for holder in holders:
            if holder != changed:  # the changed node is touched by its caller
                info = self._nodes.get(holder)
                if info is not None:
                    self._touch(self._own(info))

    def node_names(self) -> list[str]:
        """Node names in upstream node-tree order: zones interleaved round-robin."""
        if self._order is None:
            self._order = self._interleave_zones()
        return list(self._order)

    def _interleave_zones(self) -> list[str]:
        out: list[str] = []
        zones = [names for names in self._zones.values() if names]
        index = 0
        while True:
            added = False
            for names in zones:
                if index < len(names):
                    out.append(names[index])
                    added = True
            if not added:
                return out
            index += 1

    @property
    def node_count(self) -> int:
        return len(self._nodes) - len(self._ghost)

    def node_info(self, node_name: str) -> NodeInfo | None:
        if node_name in self._ghost:
            return None
        return self._nodes.get(node_name)

    # ---- pods -------------------------------------------------------------------------

    def assume_pod(self, pod: Pod, pod_info: PodInfo | None = None) -> None:
        """Account ``pod`` (with ``spec.node_name`` set) before it is bound; ``pod_info``:
        its PodInfo when the caller has it (else it is made here)."""
        if pod.uid in self._pods:
            raise ValueError(f"pod {pod.key} is already in the cache")
        assert pod.spec.node_name
        self._add(pod, pod_info)
        self._pods[pod.uid] = _PodState(pod, assumed=True)

    def finish_binding(self, pod: Pod) -> None:
        state = self._pods.get(pod.uid)
        if state is not None and state.assumed:
            state.binding_finished = True

    def forget_pod(self, pod: Pod) -> None:
        """Drop an assumed pod (its binding failed or was abandoned)."""
        state = self._pods.get(pod.uid)
        if state is None or not state.assumed:
            return
        self._remove(state.pod)
        del self._pods[pod.uid]

    def sizes(self) -> dict[str, int]:
        """Nodes, pods and assumed pods held (scheduler_cache_size)."""
        assumed = sum(1 for s in self._pods.values() if s.assumed)
        return {"nodes": len(self._nodes), "pods": len(self._pods), "assumed_pods": assumed}

    def is_assumed(self, uid: str) -> bool:
        state = self._pods.get(uid)
        return state is not None and state.assumed

    def add_pod(self, pod: Pod) -> None:
        """A pod observed bound to a node; confirms it if it was assumed."""
        state = self._pods.get(pod.uid)
        if state is not None:
            # Upstream updates the assumed copy so the cached pod is the bound one.
            if state.assumed and not self._confirm_in_place(state.pod, pod):
                self._remove(state.pod)
                self._add(pod)
            state.pod = pod
            state.assumed = False
            return
        self._add(pod)
        self._pods[pod.uid] = _PodState(pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        state = self._pods.get(old.uid)
        if state is None:
            self.add_pod(new)
            return
        self._remove(state.pod)
        self._add(new)
        state.pod = new
        state.assumed = False

    def remove_pod(self, pod: Pod) -> None:
        state = self._pods.pop(pod.uid, None)
        if state is not None:
            self._remove(state.pod)

    def get_pod(self, uid: str) -> Pod | None:
        state = self._pods.get(uid)
        return state.pod if state is not None else None

    def pods(self) -> Iterator[Pod]:
        return (s.pod for s in self._pods.values())

    @property
    def pod_count(self) -> int:
        return len(self._pods)

    def _confirm_in_place(self, assumed: Pod, bound: Pod) -> bool:
        """Swap the bound pod in for its assumed copy when nothing the NodeInfo derives
        from it differs (same node, containers, overhead, affinity, labels): the usual
        bind. The PodInfo is shared with the snapshot's copy, so no refresh is needed."""
        a, b = assumed.spec, bound.spec
        if (
            a.node_name != b.node_name
            or a.containers is not b.containers
            or a.init_containers is not b.init_containers
            or a.overhead is not b.overhead
            or a.affinity is not b.affinity
            or assumed.metadata.labels is not bound.metadata.labels
            or assumed.metadata.namespace != bound.metadata.namespace
            or assumed.metadata.deletion_timestamp != bound.metadata.deletion_timestamp
        ):
            return False
        assert b.node_name is not None
        info = self._nodes.get(b.node_name)
        if info is None:
            return False
        # From the end: the pod was assumed recently, so it sits near the tail; a node
        # holding thousands of pods must not cost a full scan per bind.
        for pod_info in reversed(info.pods):
            if pod_info.pod.uid == bound.uid:
                pod_info.pod = bound
                return True
        return False

    def _add(self, pod: Pod, pod_info: PodInfo | None = None) -> None:
        assert pod.spec.node_name is not None
        info = self._own(self._info_for(pod.spec.node_name))
        info.add_pod(PodInfo.of(pod) if pod_info is None else pod_info)
        self._touch(info)

    def _remove(self, pod: Pod) -> None:
        assert pod.spec.node_name is not None
        info = self._nodes.get(pod.spec.node_name)
        if info is None:
            return
        info = self._own(info)
        info.remove_pod(pod)
        self._touch(info)
        if pod.spec.node_name in self._ghost and not info.pods:
            del self._nodes[pod.spec.node_name]
            self._ghost.discard(pod.spec.node_name)

    # ---- snapshot ---------------------------------------------------------------------

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date, copying only the NodeInfos that changed.

        Per cycle this costs O(changed nodes); the node list is rebuilt only when nodes
        come or go, and the affinity lists only when a changed node holds such pods (and
        then only when next read). The pod index follows the same changes.
        """
        if snapshot.generation == self._generation and not snapshot.overlaid:
            return
        by_name = snapshot._by_name
        if snapshot.layout != self._layout:
            names = self.node_names()
            old_by_name = by_name
            by_name = {name: self._fresh_copy(name, by_name.get(name)) for name in names}
            snapshot._by_name = by_name
            snapshot._list = [by_name[name] for name in names]
            snapshot._index = {name: i for i, name in enumerate(names)}
            snapshot.layout = self._layout
            snapshot.table.rebuild(snapshot._list)
            pod_index = snapshot.pod_index
            pod_index.relayout(snapshot._list, snapshot._index)
            for name, old in old_by_name.items():
                if name not in by_name:
                    pod_index.replace_node(old, None)
            for name, copy in by_name.items():
                old_copy = old_by_name.get(name)
                if copy is not old_copy:
                    pod_index.replace_node(old_copy, copy)
            affinity_changed = True
        else:
            affinity_changed = False
            # The dirty set holds the changes since the last refresh; a snapshot that
            # missed that refresh compares every node's generation instead.
            changed = self._dirty if snapshot.generation == self._refreshed_at else by_name
            if snapshot.overlaid:
                changed = set(changed) | snapshot.overlaid
            for name in list(changed):
                index = snapshot._index.get(name)
                if index is None:
                    continue  # a node without a Node object: not listed
                old = by_name[name]
                copy = self._fresh_copy(name, old)
                if copy is old:
                    continue
                by_name[name] = snapshot._list[index] = copy
                snapshot.table.update_row(index, copy)
                snapshot.pod_index.replace_node(old, copy)
                affinity_changed = affinity_changed or bool(
                    old.pods_with_affinity or copy.pods_with_affinity
                )
        snapshot.overlaid.clear()
        if affinity_changed:
            snapshot._affinity_stale = True
        self._dirty.clear()
        self._refreshed_at = snapshot.generation = self._generation

    def _fresh_copy(self, name: str, cached: NodeInfo | None) -> NodeInfo:
        """The node's NodeInfo for a snapshot holding ``cached``: ``cached`` while it is
        current, else the cache's own (shared until the cache changes the node)."""
        info = self._nodes[name]
        if cached is not None and cached.generation == info.generation:
            return cached
        # A node listing no images has none to summarise (the usual node of a large run).
        # A shared NodeInfo of this generation already shows these summaries.
        info.image_states = self._image_states(info.node) if info.node.status.images else {}
        self._shared.add(name)
        return info

    def _image_states(self, node: Node) -> dict[str, ImageStateSummary]:
        """The cluster-wide summary of each image ``node`` lists (shared between nodes)."""
        images = self._images
        return {name: images[name].summary for name in _image_names(node) if name in images}
