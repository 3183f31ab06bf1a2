"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays even.

# pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go (+ resource_allocation.go);
# defaults and validation of NodeResourcesBalancedAllocationArgs from pkg/scheduler/apis/config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
import numpy as np

from .._errors import ConfigError
from ..api import Pod
from ..framework import MAX_NODE_SCORE, SKIP, CycleState, Handle, NodeInfo, SpecMemo, Status
from ..framework.batch import (
    POD_RESOURCES,
    RESOURCES,
    Capabilities,
    IntArray,
    NodeTable,
    SignFragment,
    resources_signer,
)
from .node_resources_fit import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    ResourceSpec,
    parse_resource_specs,
)

__all__ = ["NodeResourcesBalancedAllocation", "NodeResourcesBalancedAllocationArgs"]

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


@attrs.frozen
class NodeResourcesBalancedAllocationArgs:
    """NodeResourcesBalancedAllocationArgs (v1), defaults applied: cpu and memory, weight 1."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> NodeResourcesBalancedAllocationArgs:
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{NAME}: args: must be a mapping, not {type(raw).__name__}")
        unknown = sorted(set(raw) - {"resources", "apiVersion", "kind"})
        if unknown:
            raise ConfigError(f"{NAME}: args.{unknown[0]}: unknown field")
        resources = parse_resource_specs(raw.get("resources"), "args.resources", NAME)
        return cls(resources=resources or DEFAULT_RESOURCES)


def validate_balanced_allocation_args(args: NodeResourcesBalancedAllocationArgs) -> None:
    """Upstream ValidateNodeResourcesBalancedAllocationArgs: unique names, every weight 1."""
    errs = []
    seen: set[str] = set()
    for i, spec in enumerate(args.resources):
        if spec.name in seen:
            errs.append(f"args.resources[{i}].name: Duplicate value: {spec.name!r}")
        seen.add(spec.name)
        if spec.weight != 1:
            errs.append(f"args.resources[{i}].weight: Invalid value: {spec.weight}: must be 1")
    if errs:
        raise ConfigError(f"{NAME}: " + "; ".join(errs))


def balanced_resource_score(entries: Sequence[tuple[int, int, int]]) -> int:
    """(1 - standard deviation of the requested fractions) * 100, truncated.

    ``entries`` are ``(requested, allocatable, weight)`` of the resources the node has; a
    fraction above 1 counts as 1.
    """
    fractions = []
    total = 0.0
    for req, cap, _ in entries:
        fraction = req / cap
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_resource_scores(columns: Sequence[tuple[IntArray, IntArray, int]]) -> IntArray:
    """:func:`balanced_resource_score` for nodes that have every resource of ``columns``
    (no zero allocatable), with the same float operations in the same order."""
    fractions = [
        np.minimum(req / (cap if cap.all() else np.where(cap != 0, cap, 1)), 1.0)
        for req, cap, _ in columns
    ]
    count = len(columns[0][0]) if columns else 0
    std = np.zeros(count)
    if len(fractions) == 2:
        std = np.abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = fractions[0]
        for fraction in fractions[1:]:
            total = total + fraction
        mean = total / len(fractions)
        acc = np.zeros(count)
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = np.sqrt(acc / len(fractions))
    scores: IntArray = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    return scores


@attrs.frozen(slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class NodeResourcesBalancedAllocation:
    """Scores a node by how evenly the pod would leave its resources used (actual
    requests, no non-zero defaults); a pod requesting nothing is not scored."""

    name = NAME
    capabilities = Capabilities(node_local_score=True, pod_fields=(POD_RESOURCES,))

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None) -> None:
        args = args or NodeResourcesBalancedAllocationArgs()
        validate_balanced_allocation_args(args)
        self.args = args
        self._allocation = ResourceAllocationScorer(args.resources, use_requested=True)
        # The state reads only the pod's spec: one per spec, shared by a workload's pods.
        self._pre_score_state = SpecMemo(self._make_pre_score_state)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeResourcesBalancedAllocation:
        return cls(NodeResourcesBalancedAllocationArgs.from_dict(args))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        pre = self._pre_score_state(pod)
        if pre is None:
            # Best-effort pods would all pile onto the same balanced node: not scored.
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, pre)
        return None

    def _make_pre_score_state(self, pod: Pod) -> _PreScoreState | None:
        reqs = self._allocation.pod_request_list(pod)
        return _PreScoreState(reqs) if any(reqs) else None

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        """Fit and the resource scorers read the pod's requests and overhead."""
        return ((RESOURCES, resources_signer(pod)),)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is not None:
            reqs = s.pod_requests
        else:
            reqs = self._allocation.pod_request_list(pod)
            if not any(reqs):
                return 0
        return balanced_resource_score(self._allocation.gather(node_info, reqs))

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or not len(rows):
            return None
        columns = self._allocation.gather_columns(table, rows, s.pod_requests)
        if not columns:
            return None
        scores = balanced_resource_scores(columns)
        if all(cap.all() for _, cap, _ in columns):
            return scores
        complete = np.logical_and.reduce([cap != 0 for _, cap, _ in columns])
        for i in (~complete).nonzero()[0].tolist():
            # a node lacking a resource has fewer fractions: score it as one
            scores[i] = self.score(state, pod, table.infos[int(rows[i])])
        return scores

    def score_extensions(self) -> None:
        return None
