"""The table rows holding nominated pods, kept in step with the nominator's log."""

from __future__ import annotations

import random

import numpy as np

from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.framework._fast._nominated_verdicts import NominatedVerdicts
from ksched.framework.batch import NodeTable
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


def test_sweep_merge_keeps_position_order() -> None:
    """Kept rejections merged into a batch pass's rejections: by position, each status
    object once in ``distinct``, only the statuses used."""
    table = NodeTable([NodeInfo.of(make_node(f"n{i}").obj()) for i in range(8)])
    nominator = Nominator()
    for i in (1, 4, 6):
        nominator.add(make_pod(f"p{i}").obj(), f"n{i}")
    verdicts = NominatedVerdicts()
    pod = make_pod("x").obj()
    sweep = verdicts.sweep(CycleState(), pod, [], table, nominator.nodes())
    assert sweep is not None
    a = Status(Code.UNSCHEDULABLE, ("a",), plugin="P")
    b = Status(Code.UNSCHEDULABLE, ("b",), plugin="P")
    unused = Status(Code.UNSCHEDULABLE, ("c",), plugin="P")
    sweep.keep("n6", unused)
    for name, status in (("n1", a), ("n4", b), ("n6", a)):
        assert sweep.keep(name, status) is status
    order = np.array([3, 4, 5, 6, 7, 0, 1, 2])  # rotated from row 3
    special = np.isin(order, [1, 4, 6])
    decided = np.flatnonzero(sweep.rejected_at(order, special))
    assert decided.tolist() == [1, 3, 6]
    batch = Status(Code.UNSCHEDULABLE, ("batch",), plugin="Q")
    distinct = [batch, b]
    batch_pos, batch_which = np.array([0, 2, 7]), np.array([0, 1, 0])
    positions, which = sweep.merge(batch_pos, batch_which, distinct, decided, order)
    assert positions.tolist() == [0, 1, 2, 3, 6, 7]
    assert [distinct[k] for k in which.tolist()] == [batch, b, b, a, a, batch]
    assert distinct == [batch, b, a]
