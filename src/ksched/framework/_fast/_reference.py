"""What the fast paths use of the reference path: the Framework, seen from here.

A protocol rather than the class, so the fast-path layer does not import the runtime it
stands beside (``Framework`` satisfies it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ...api import Pod
from .._calls import FilterOutcome, PluginCall, ScorePluginEntry
from .._cycle_state import CycleState
from .._metrics import MetricsRecorder
from .._profile import PluginSet
from .._protocols import Plugin
from .._status import Status
from .._table import IntArray
from .._types import NodeInfo, PodInfo

__all__ = ["ReferencePath"]


class ReferencePath(Protocol):
    """The per-node reference path of one profile (``Framework``)."""

    set: PluginSet
    plugins: dict[str, Plugin]
    parallelism: int
    filters_async: bool

    def calls_for(
        self, state: CycleState, point: str, calls: list[PluginCall]
    ) -> list[PluginCall]: ...

    async def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    async def run_filter_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> Status: ...

    def run_filter_with_nominated_pods_sync(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> Status: ...

    def filter_nodes_inline(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        two_pass: Callable[[CycleState, Pod, NodeInfo, Sequence[PodInfo]], Status],
    ) -> FilterOutcome: ...

    async def score_nodes(
        self,
        sp: ScorePluginEntry,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        recorder: MetricsRecorder | None,
    ) -> IntArray: ...
