"""ImageLocality: favour nodes that already hold the pod's images.

# pkg/scheduler/framework/plugins/imagelocality/image_locality.go
Each image counts at its cluster-wide size from the cache (the size the first node to list
the name reported, whatever this node reports), scaled by the share of nodes listing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
import numpy as np

from ..api import Pod
from ..framework import MAX_NODE_SCORE, CycleState, Handle, NodeInfo, SpecMemo
from ..framework.batch import IMAGE_NAMES, IntArray, NodeTable, SignFragment

__all__ = ["ImageLocality", "normalized_image_name"]

NAME: Final = "ImageLocality"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
"""Image sums below this score 0."""
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB
"""Per container: image sums at ``MAX_CONTAINER_THRESHOLD * containers`` or above score 100."""


def normalized_image_name(name: str) -> str:
    """The image name as a node reports it: ``:latest`` added when no tag is given."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Map the summed image scores linearly from [23Mi, 1000Mi * containers] onto 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


@attrs.frozen(slots=True)
class _PreScoreState:
    images: tuple[str, ...]
    """Normalized image of every init and app container, in that order."""
    total_nodes: int

    def clone(self) -> _PreScoreState:
        return self


def _pod_images(pod: Pod) -> tuple[str, ...]:
    """The normalized image of every init and app container, in that order."""
    return tuple(
        normalized_image_name(c.image) for c in (*pod.spec.init_containers, *pod.spec.containers)
    )


class ImageLocality:
    """Scores each node by the size of the pod's images it already has, each image scaled
    by the share of all nodes holding it (so a rare image does not draw every pod)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        # The images read only the pod's spec: worked out once per spec.
        self._images = SpecMemo(_pod_images)
        self._last_state: _PreScoreState | None = None

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> ImageLocality:
        return cls(handle)

    def _state(self, pod: Pod) -> _PreScoreState:
        images = self._images(pod)
        total = len(self._handle.snapshot.list())
        last = self._last_state
        if last is None or last.images is not images or last.total_nodes != total:
            last = self._last_state = _PreScoreState(images, total)
        return last  # immutable: equal pods on an unchanged node count share one

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        images = (*pod.spec.init_containers, *pod.spec.containers)
        return ((IMAGE_NAMES, tuple(sorted(normalized_image_name(c.image) for c in images))),)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        state.write(PRE_SCORE_STATE_KEY, self._state(pod))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = self._state(pod)
        image_states = node_info.image_states
        total = 0
        for image in s.images:
            summary = image_states.get(image)
            if summary is not None:
                total += int(summary.size * (summary.num_nodes / s.total_nodes))
        return calculate_priority(total, len(s.images))

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or not s.images:
            return None
        # Nodes holding none of the pod's images all get the score of an empty sum.
        scores: IntArray = np.full(len(rows), calculate_priority(0, len(s.images)), dtype=np.int64)
        holders = table.rows_with_images(s.images)
        if holders:
            for i in np.isin(rows, holders).nonzero()[0].tolist():
                scores[i] = self.score(state, pod, table.infos[int(rows[i])])
        return scores

    def uniform_score(self, state: CycleState, pod: Pod, table: NodeTable) -> int | None:
        """The empty sum's score while no node holds any of the pod's images."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or not s.images or table.rows_with_images(s.images):
            return None
        return calculate_priority(0, len(s.images))

    def score_extensions(self) -> None:
        return None
