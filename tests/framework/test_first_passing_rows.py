"""The batch Filter's rotated scan: the first ``limit`` passing rows from ``start`` on."""

from __future__ import annotations

import numpy as np
import pytest

from ksched.framework._fast._scan import first_passing_rows


def _reference(mask: np.ndarray, start: int, limit: int) -> tuple[int, list[int]] | None:
    """The per-node loop: walk the rotated order, stop at ``limit`` passing nodes."""
    n = len(mask)
    passing: list[int] = []
    for i in range(n):
        row = (start + i) % n
        if mask[row]:
            passing.append(row)
            if len(passing) == limit:
                return i + 1, passing
    return (n, passing) if passing else None


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_rotated_walk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    mask = rng.random(n) < rng.choice([0.0, 0.1, 0.5, 1.0])
    for start in range(n):
        for limit in (1, 2, 5, n, n + 3):
            got = first_passing_rows(mask, start, limit)
            want = _reference(mask, start, limit)
            if want is None:
                assert got is None
                continue
            assert got is not None
            assert (got[0], got[1].tolist()) == want


@pytest.mark.parametrize("density", [0.02, 0.3, 0.9, 1.0])
def test_matches_the_rotated_walk_on_large_tables(density: float) -> None:
    # Large enough that the scan looks at windows after ``start`` before the whole table.
    rng = np.random.default_rng(7)
    n = 20_000
    mask = rng.random(n) < density
    for start in (0, 1, 7_000, 15_000, n - 1):
        for limit in (1, 50, 500, 2_000, n):
            got = first_passing_rows(mask, start, limit)
            want = _reference(mask, start, limit)
            assert got is not None and want is not None
            assert (got[0], got[1].tolist()) == want, (start, limit)
            # The same with the count of passing rows given (as a kept mask keeps it).
            counted = first_passing_rows(mask, start, limit, int(np.count_nonzero(mask)))
            assert counted is not None and (counted[0], counted[1].tolist()) == want


def test_matches_the_rotated_walk_when_passing_rows_cluster() -> None:
    # The first window is sized as if passing rows were spread evenly; clustered ones
    # (a filled-up table with room left only at its end) make the scan widen it.
    n = 20_000
    mask = np.zeros(n, dtype=np.bool_)
    mask[18_500:] = True
    mask[::997] = True
    for start in (0, 3_000, 18_000, 19_999):
        for limit in (10, 500, 1_400, 2_000):
            got = first_passing_rows(mask, start, limit)
            want = _reference(mask, start, limit)
            assert got is not None and want is not None
            assert (got[0], got[1].tolist()) == want, (start, limit)
