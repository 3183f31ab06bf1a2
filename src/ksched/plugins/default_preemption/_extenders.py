"""Extenders with a ``preemptVerb`` trim the preemption candidates.

# pkg/scheduler/framework/preemption/preemption.go (callExtenders, CandidatesToVictimsMap)
Each extender that supports preemption and is interested in the pod gets the candidates
left by the one before it and answers which nodes stay and with which victims. An error
fails the attempt unless the extender is ignorable (then it is skipped); a node it keeps
without victims is an error, or dropped when it is ignorable. Once no node is left, the
remaining extenders are not asked. Upstream rebuilds the candidates from a map (in no
order); here the survivors keep their order and nodes the extender added come after.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ...api import Pod
from ...framework import Code, Extender, SharedLister, Status
from ._candidates import Candidate, Victims

__all__ = ["call_extenders"]

logger = logging.getLogger("ksched.scheduler")


async def call_extenders(
    extenders: Sequence[Extender],
    pod: Pod,
    candidates: list[Candidate],
    nodes: SharedLister,
) -> tuple[list[Candidate], Status | None]:
    """The candidates every preempting extender keeps; a Status when one failed."""
    victims = {c.name: (c.victims.pods, c.victims.num_pdb_violations) for c in candidates}
    if not victims:
        return candidates, None
    asked = False
    kept: dict[str, tuple[Sequence[Pod], int]] = dict(victims)
    for extender in extenders:
        if not extender.supports_preemption or not extender.is_interested(pod):
            continue
        asked = True
        try:
            answer = await extender.process_preemption(pod, kept, nodes)
        except Exception as exc:
            if extender.is_ignorable:
                logger.info(
                    "Skipped extender as it returned error and has ignorable flag set",
                    extra={"kv": {"extender": extender.name, "err": str(exc)}},
                )
                continue
            return [], Status(Code.ERROR, (str(exc),))
        for node_name, (pods, _) in list(answer.items()):
            if pods:
                continue
            if extender.is_ignorable:
                del answer[node_name]
                logger.info(
                    "Ignored node for which the extender didn't report victims",
                    extra={"kv": {"node": node_name, "extender": extender.name}},
                )
                continue
            return [], Status(
                Code.ERROR, (f'expected at least one victim pod on node "{node_name}"',)
            )
        kept = dict(answer)
        if not kept:
            break
    if not asked:
        return candidates, None
    order = [c.name for c in candidates if c.name in kept]
    order += [name for name in kept if name not in victims]
    return [Candidate(name, Victims(tuple(kept[name][0]), kept[name][1])) for name in order], None
