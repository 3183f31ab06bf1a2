"""The extender steps of a scheduling cycle and of a binding cycle.

# pkg/scheduler/schedule_one.go (findNodesThatPassExtenders, prioritizeNodes, bind)
Filter: each interested extender in turn, on the nodes still feasible; its failed nodes
join the FitError (FailedAndUnresolvableNodes as UnschedulableAndUnresolvable, which
preemption skips), an error fails the attempt unless the extender is ignorable.
Prioritize: the interested extenders at once; score times weight, scaled from 0..10 to
0..100, added to the plugins' totals; an error is ignored. Bind: the first binder
extender interested in the pod binds it instead of the Bind plugins.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from ..api import Pod
from ..framework import MAX_NODE_SCORE, Code, NodeInfo, NodeToStatus, Status

if TYPE_CHECKING:
    from ..extender import ExtenderClient

__all__ = ["bind_by_extender", "filter_by_extenders", "prioritize_by_extenders"]

logger = logging.getLogger("ksched.scheduler")


async def filter_by_extenders(
    extenders: Sequence[ExtenderClient],
    pod: Pod,
    feasible: Sequence[NodeInfo],
    statuses: NodeToStatus,
) -> Sequence[NodeInfo] | Status:
    """The nodes every interested extender keeps; the others' statuses into ``statuses``."""
    from ..extender import ExtenderError, pod_json

    raw = None
    for extender in extenders:
        if not feasible:
            break
        if not extender.config.filter_verb or not extender.is_interested(pod):
            continue
        raw = raw if raw is not None else pod_json(pod)
        try:
            result = await extender.filter(pod, raw, [info.node for info in feasible])
        except ExtenderError as exc:
            if extender.config.ignorable:
                logger.info(
                    "Skipping extender as it returned error and has ignorable flag set",
                    extra={"kv": {"extender": extender.name, "err": str(exc)}},
                )
                continue
            return Status(Code.ERROR, (str(exc),))
        for name, message in result.failed_and_unresolvable.items():
            prior = statuses.get(name).reasons if name in statuses else ()
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            statuses.set(name, Status(code, (*prior, message), plugin=extender.name))
        for name, message in result.failed.items():
            if name in result.failed_and_unresolvable:
                continue  # FailedAndUnresolvableNodes takes precedence
            if name in statuses:
                prior_status = statuses.get(name)
                reasons = (*prior_status.reasons, message)
                statuses.set(name, Status(prior_status.code, reasons, plugin=extender.name))
            else:
                statuses.set(name, Status(Code.UNSCHEDULABLE, (message,), plugin=extender.name))
        kept = set(result.node_names)
        feasible = [info for info in feasible if info.name in kept]
    return feasible


async def prioritize_by_extenders(
    extenders: Sequence[ExtenderClient], pod: Pod, feasible: Sequence[NodeInfo]
) -> dict[str, int]:
    """Node -> what the extenders add to its total (0..100 per unit of weight)."""
    from ..extender import MAX_EXTENDER_PRIORITY, ExtenderError, pod_json

    chosen = [e for e in extenders if e.config.prioritize_verb and e.is_interested(pod)]
    if not chosen:
        return {}
    raw = pod_json(pod)
    nodes = [info.node for info in feasible]
    combined: dict[str, int] = {}

    async def ask(extender: ExtenderClient) -> None:
        try:
            scores = await extender.prioritize(pod, raw, nodes)
        except ExtenderError as exc:  # prioritize errors are ignored, as upstream's
            logger.info("Extender prioritize failed", extra={"kv": {"err": str(exc)}})
            return
        for host, score in scores.items():
            combined[host] = combined.get(host, 0) + score

    async with anyio.create_task_group() as tg:
        for extender in chosen:
            tg.start_soon(ask, extender)
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    return {host: score * scale for host, score in combined.items()}


async def bind_by_extender(
    extenders: Sequence[ExtenderClient], pod: Pod, node_name: str
) -> Status | None:
    """The binder extender's verdict, or None when no binder extender wants the pod."""
    from ..extender import ExtenderError

    for extender in extenders:
        if extender.is_binder and extender.is_interested(pod):
            try:
                await extender.bind(pod, node_name)
            except ExtenderError as exc:
                return Status(Code.ERROR, (str(exc),), plugin=extender.name)
            return Status(Code.SUCCESS)
    return None
