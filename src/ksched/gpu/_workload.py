"""An experiment's workload, drawn as the FGD artifact draws it: pod order, tuning to a
target share of GPU capacity, and the seeded node order that breaks score ties.

# pkg/simulator/core.go (Simulate: the order of the draws)
# pkg/simulator/simulator.go (SortClusterPods, TunePodsByNodeTotalResource, tuneUpPods,
#   tuneDownPods, syncClusterResourceList)

The draws, in the artifact's order after ``rand.Seed(seed)``:

1. one ``rand.Int()``, thrown away (an argument of a debug log line, evaluated anyway);
2. with shuffling, the pods sorted by name and shuffled (``rand.Shuffle``); without, the
   pods sorted by creation time, then name (the artifact's YAML has no times: name order);
3. tuning up (the pods ask for less than ``ratio`` x the GPU capacity): clones of the
   name-sorted original pods drawn with replacement (``rand.Intn``), each appended as
   ``<name>-tuned-<i>``, until the first clone whose *per-GPU* milli would take the total past
   the target (that clone is dropped); tuning down: pods removed at random
   (``pods[rand.Intn(len)]``) while the total is above the target;
4. ten ``rand.Float64()``, one per informer the simulator starts before it adds the nodes
   (client-go's reflector draws its watch timeout, ``reflector.go: ListAndWatch``; found by
   matching the artifact's node names, and constant for its binary);
5. the nodes sorted by name and renamed ``"%04d-" % perm[i] + name`` with
   ``perm = rand.Perm(len(nodes))``: the scheduler takes the lexicographically smallest
   name among the best-scored nodes, so this is a seeded tie-break order.

``GoDraws`` makes these draws with Go's ``math/rand`` (the artifact's numbers, draw for draw);
``NumpyDraws`` with a seeded numpy generator (the same procedure, another stream).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

import attrs
import numpy as np

from .._errors import ConfigError
from ..api import Node, ObjectMeta, Pod
from ._gorand import GoRand
from ._openb import MILLI, PodShape, renamed

__all__ = [
    "DrawSource",
    "GoDraws",
    "NumpyDraws",
    "Workload",
    "WorkloadConfig",
    "draw_source",
    "prepare_workload",
]

_T = TypeVar("_T")
MAX_CLONES = 2_000_000
"""Tuning up stops with an error past this many clones (a target far above the trace)."""
MAX_TUNE = 100.0
INFORMER_DRAWS = 10
"""The artifact's informers' ``rand.Float64()`` draws between the tuning and the node order."""


class DrawSource(Protocol):
    """The random draws an experiment makes, in the artifact's terms."""

    def discard(self) -> None:
        """Draw one ``rand.Int()`` and drop it."""

    def discard_floats(self, count: int) -> None:
        """Draw ``count`` times ``rand.Float64()`` and drop them."""

    def intn(self, n: int) -> int:
        """A uniform integer in [0, n)."""

    def perm(self, n: int) -> list[int]:
        """A random permutation of range(n)."""

    def shuffle(self, items: list[_T]) -> None:
        """Shuffle in place."""


class GoDraws:
    """Draws from Go's ``math/rand`` seeded with ``seed`` (``--rng go``)."""

    def __init__(self, seed: int) -> None:
        self.rand = GoRand(seed)

    def discard(self) -> None:
        self.rand.int_()

    def discard_floats(self, count: int) -> None:
        for _ in range(count):
            self.rand.float64()

    def intn(self, n: int) -> int:
        return self.rand.intn(n)

    def perm(self, n: int) -> list[int]:
        return self.rand.perm(n)

    def shuffle(self, items: list[_T]) -> None:
        self.rand.shuffle_list(items)


class NumpyDraws:
    """Draws from ``numpy.random.default_rng(seed)`` (``--rng ksched``)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def discard(self) -> None:
        pass  # nothing to stay in step with

    def discard_floats(self, count: int) -> None:
        pass

    def intn(self, n: int) -> int:
        return int(self.rng.integers(n))

    def perm(self, n: int) -> list[int]:
        return [int(i) for i in self.rng.permutation(n)]

    def shuffle(self, items: list[_T]) -> None:
        order = self.rng.permutation(len(items))
        items[:] = [items[i] for i in order]


def draw_source(rng: str, seed: int) -> DrawSource:
    """``GoDraws`` for ``"go"``, ``NumpyDraws`` for ``"ksched"``."""
    if rng == "go":
        return GoDraws(seed)
    if rng == "ksched":
        return NumpyDraws(seed)
    raise ConfigError(f"rng: must be 'go' or 'ksched', got {rng!r}")


@attrs.frozen(kw_only=True)
class WorkloadConfig:
    """The artifact's workload knobs (``workloadTuningConfig``, ``shufflePod``)."""

    tune: float = 1.3
    """Target total GPU request as a share of the cluster's GPU milli (0 or less: keep)."""
    seed: int = 42
    """The tuning seed (``-tuneseed``): it seeds every draw of the experiment."""
    shuffle: bool = True
    """Shuffle the pods (``--shuffle-pod=true``, as every published experiment does)."""
    rng: str = "go"
    """``"go"``: Go's math/rand, draw for draw; ``"ksched"``: a seeded numpy generator."""

    def __attrs_post_init__(self) -> None:
        if not -MAX_TUNE <= self.tune <= MAX_TUNE:  # also refuses NaN
            raise ConfigError(f"tune: must be at most {MAX_TUNE}, got {self.tune}")


@attrs.frozen(kw_only=True)
class Workload:
    """What an experiment submits: nodes (in the order to add them) and pods (in order)."""

    nodes: tuple[Node, ...]
    """Renamed ``NNNN-<name>`` and sorted by name: the artifact's tie-break order."""
    pods: tuple[Pod, ...]
    originals: int
    """How many of ``pods`` are trace pods (the rest are tuned clones, appended)."""
    target_gpu_milli: float
    pod_gpu_milli: int
    """The pods' total GPU request after tuning."""
    node_gpu_milli: int


def _gpu_milli_of_node(node: Node) -> int:
    return int(node.status.capacity.get(MILLI, 0))


def _creation_order(pods: list[Pod], times: dict[str, float] | None) -> None:
    """The artifact's order without shuffling: creation time, then name (a pod without a
    time counts as created now, after every time of the trace)."""
    if times is None:
        pods.sort(key=lambda p: p.name)
        return
    pods.sort(key=lambda p: (times.get(p.key, float("inf")), p.name))


def _tune_up(
    pods: list[Pod], originals: Sequence[Pod], total: int, target: float, draws: DrawSource
) -> int:
    shapes = [PodShape.of(p) for p in originals]
    if not any(shape.gpu_milli > 0 for shape in shapes):
        raise ConfigError("tune: no pod asks for a GPU, so tuning up would never stop")
    clone = 0
    while True:
        if clone >= MAX_CLONES:
            raise ConfigError(f"tune: more than {MAX_CLONES} clones needed to reach the target")
        index = draws.intn(len(originals))
        shape = shapes[index]
        # The artifact tests the per-GPU milli, then adds the total (tuneUpPods).
        if float(total + shape.gpu_milli) > target:
            return total
        pods.append(renamed(originals[index], f"{originals[index].name}-tuned-{clone}"))
        total += shape.total_gpu_milli
        clone += 1


def _tune_down(pods: list[Pod], total: int, target: float, draws: DrawSource) -> int:
    while float(total) > target:
        if not pods:
            raise ConfigError("tune: no pods left while their GPU request is above the target")
        removed = pods.pop(draws.intn(len(pods)))
        total -= PodShape.of(removed).total_gpu_milli
    return total


def _renamed_nodes(nodes: Sequence[Node], draws: DrawSource) -> tuple[Node, ...]:
    by_name = sorted(nodes, key=lambda n: n.name)
    perm = draws.perm(len(by_name))
    out = []
    for node, index in zip(by_name, perm, strict=True):
        meta = node.metadata
        out.append(
            Node(
                metadata=ObjectMeta(
                    name=f"{index:04d}-{meta.name}",
                    namespace=meta.namespace,
                    labels=meta.labels,
                    annotations=meta.annotations,
                ),
                spec=node.spec,
                status=node.status,
            )
        )
    out.sort(key=lambda n: n.name)
    return tuple(out)


def prepare_workload(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    config: WorkloadConfig | None = None,
    *,
    creation_times: dict[str, float] | None = None,
) -> Workload:
    """Order, tune and rename as the artifact does (see the module docstring).

    Args:
        nodes: the cluster's nodes.
        pods: the trace's pods (any order: the artifact sorts them by name first).
        config: the knobs (tune 1.3, seed 42, shuffled, Go draws when None).
        creation_times: pod key -> creation time, for the unshuffled order (None: the
            artifact's YAML, which has no times).
    """
    config = config or WorkloadConfig()
    draws = draw_source(config.rng, config.seed)
    originals = sorted(pods, key=lambda p: p.name)
    draws.discard()
    order = list(originals)
    if config.shuffle:
        draws.shuffle(order)
    else:
        _creation_order(order, creation_times)
    total = sum(PodShape.of(p).total_gpu_milli for p in order)
    capacity = sum(_gpu_milli_of_node(n) for n in nodes)
    target = config.tune * float(capacity)
    trace_pods = len(order)
    if config.tune > 0 and originals and capacity > 0:
        if float(total) < target:
            total = _tune_up(order, originals, total, target, draws)
        elif float(total) > target:
            total = _tune_down(order, total, target, draws)
    draws.discard_floats(INFORMER_DRAWS)
    return Workload(
        nodes=_renamed_nodes(nodes, draws),
        pods=tuple(order),
        originals=min(trace_pods, len(order)),
        target_gpu_milli=target,
        pod_gpu_milli=total,
        node_gpu_milli=capacity,
    )
