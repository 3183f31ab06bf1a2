"""The batch resource scorers equal the per-node ones, with and without absent resources."""

from __future__ import annotations

import numpy as np
import pytest

from ksched.plugins.node_resources_balanced_allocation import (
    balanced_resource_score,
    balanced_resource_scores,
)
from ksched.plugins.node_resources_fit._scorer import least_resource_score, least_resource_scores


def _columns(seed: int, zeros: bool) -> list[tuple[np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    columns = []
    for w in rng.integers(1, 4, size=int(rng.integers(1, 4))).tolist():
        cap = rng.integers(0 if zeros else 1, 64_000, size=n).astype(np.int64)
        req = rng.integers(0, 80_000, size=n).astype(np.int64)  # beyond cap sometimes
        columns.append((req, cap, w))
    return columns


def _entries(
    columns: list[tuple[np.ndarray, np.ndarray, int]], i: int
) -> list[tuple[int, int, int]]:
    # gather() leaves out a resource the node does not have (allocatable 0)
    return [(int(r[i]), int(c[i]), w) for r, c, w in columns if c[i] != 0]


@pytest.mark.parametrize("zeros", [False, True], ids=["complete", "absent-resources"])
@pytest.mark.parametrize("seed", range(25))
def test_least_allocated_batch_equals_per_node(seed: int, zeros: bool) -> None:
    columns = _columns(seed, zeros)
    got = least_resource_scores(columns).tolist()
    assert got == [least_resource_score(_entries(columns, i)) for i in range(len(got))]


@pytest.mark.parametrize("seed", range(25))
def test_balanced_batch_equals_per_node_when_complete(seed: int) -> None:
    columns = _columns(seed, zeros=False)
    got = balanced_resource_scores(columns).tolist()
    assert got == [balanced_resource_score(_entries(columns, i)) for i in range(len(got))]
