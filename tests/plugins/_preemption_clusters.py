"""Random clusters for the preemption differential tests: PreemptionBasic's kind."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ksched.testing import make_node, make_pod

Started = Callable[[random.Random, Any], Any]
"""Gives a running pod's builder its start time (drawing from the rng or not)."""


def full_nodes(
    rng: random.Random, *, most_nodes: int, leave_room: list[int], started: Started
) -> list[Any]:
    """4..``most_nodes`` nodes each short of room (a node stops filling when its room is
    at most a choice of ``leave_room``), running pods of random priorities and requests,
    then 0-2 pods nominated to random nodes."""
    objects: list[Any] = []
    names = [f"n{i}" for i in range(rng.randint(4, most_nodes))]
    for name in names:
        room = rng.choice([2000, 4000, 4000, 8000])
        objects.append(make_node(name).capacity(cpu=f"{room}m", memory="8Gi", pods=110).obj())
        j = 0
        while room > rng.choice(leave_room):
            cpu = min(room, rng.choice([500, 900, 1000, 2000]))
            room -= cpu
            p = make_pod(f"{name}-p{j}").node(name).priority(rng.choice([0, 0, 5, 50]))
            objects.append(started(rng, p.req(cpu=f"{cpu}m", memory="256Mi")).obj())
            j += 1
    for k in range(rng.randint(0, 2)):
        q = make_pod(f"nom{k}").priority(rng.choice([5, 100])).req(cpu="1", memory="256Mi")
        objects.append(q.nominated(rng.choice(names)).obj())
    return objects
