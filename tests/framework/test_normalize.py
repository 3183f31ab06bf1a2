"""The array form of DefaultNormalizeScore gives what the per-node form gives.

# pkg/scheduler/framework/plugins/helper/normalize_score.go DefaultNormalizeScore
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ksched.framework import default_normalize_score, default_normalize_scores


@pytest.mark.parametrize("reverse", [False, True], ids=["plain", "reverse"])
def test_array_form_equals_dict_form(reverse: bool) -> None:
    rng = random.Random(5)
    for _ in range(3000):
        values = [
            rng.choice([rng.randrange(-300, 300), rng.randrange(0, 5), 0])
            for _ in range(rng.randrange(0, 8))
        ]
        by_node = {f"n{i}": v for i, v in enumerate(values)}
        default_normalize_score(by_node, reverse=reverse)
        array = np.array(values, dtype=np.int64).reshape(-1)
        default_normalize_scores(array, reverse=reverse)
        assert array.tolist() == list(by_node.values()), values


@pytest.mark.parametrize(
    ("scores", "reverse", "want"),
    [
        ([10, 5, 0], False, [100, 50, 0]),
        ([10, 5, 0], True, [0, 50, 100]),
        ([0, 0], False, [0, 0]),
        ([0, 0], True, [100, 100]),
        ([3, 1], False, [100, 33]),  # Go's integer division truncates
    ],
    ids=["scaled", "reversed", "all zero", "all zero reversed", "truncated"],
)
def test_upstream_cases(scores: list[int], reverse: bool, want: list[int]) -> None:
    array = np.array(scores, dtype=np.int64)
    default_normalize_scores(array, reverse=reverse)
    assert array.tolist() == want
