"""The table rows holding nominated pods, kept in step with the nominator's log."""

from __future__ import annotations

import random

import numpy as np

from ksched.framework import NodeInfo
from ksched.framework._nominated_verdicts import NominatedVerdicts
from ksched.framework._table import NodeTable
from ksched.queue._nominator import Nominator
from ksched.testing import make_node, make_pod


def test_kept_rows_follow_random_nominations() -> None:
    rng = random.Random(7)
    infos = [NodeInfo.of(make_node(f"n{i}").obj()) for i in range(12)]
    table = NodeTable(infos)
    nominator = Nominator()
    nodes = nominator.nodes()
    verdicts = NominatedVerdicts()
    pods = [make_pod(f"p{i}").obj() for i in range(8)]
    for _ in range(400):
        pod = rng.choice(pods)
        action = rng.random()
        if action < 0.5:
            nominator.add(pod, rng.choice([*table.names, "gone", ""]))
        elif action < 0.8:
            nominator.delete(pod)
        else:
            nominator.touch(pod.uid)
        if rng.random() < 0.5:
            expected = np.array([name in nodes for name in table.names])
            assert (verdicts.nominated_rows(table, nodes) == expected).all()


def test_a_plain_collection_is_read_afresh() -> None:
    table = NodeTable([NodeInfo.of(make_node(f"n{i}").obj()) for i in range(3)])
    verdicts = NominatedVerdicts()
    assert verdicts.nominated_rows(table, {"n1", "x"}).tolist() == [False, True, False]
    assert verdicts.nominated_rows(table, ["n2"]).tolist() == [False, False, True]
