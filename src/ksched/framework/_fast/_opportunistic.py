"""Opportunistic batching: reuse the previous pod's ranking for an equal pod.

# pkg/scheduler/framework/runtime/batch.go
When pods with equal signatures come in consecutive scheduling cycles and each fills the
node it took (one pod per node), the next pod's best node is the previous pod's runner-up:
the other nodes did not change and would score the same. The hint is checked with the
Filter plugins (and nominated pods) like a nominated node; if it does not fit, the cycle
runs in full and its ranking replaces the cached one.

The cached ranking is used only when all of these hold (upstream's rules):

- the previous scheduling cycle was this profile's and succeeded (stored results);
- the pod's signature equals the one the ranking was made for;
- the ranking is younger than 0.5 s;
- the node the previous pod took still exists and now rejects this pod (if it could
  host this pod too, its new score is unknown and the ranking says nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import attrs

from ...api import Pod
from .._signature import SCHEDULER_NAME, PodSignature, SignPlugin
from .._status import Status
from .._types import NodeInfo

__all__ = ["MAX_BATCH_AGE", "OpportunisticBatch"]

MAX_BATCH_AGE = 0.5
"""Seconds a cached ranking stays usable."""

# Why a cached ranking was dropped (upstream's flush reasons).
POD_SKIPPED = "pod_skipped"
POD_FAILED = "pod_failed"
POD_INCOMPATIBLE = "pod_incompatible"
EXPIRED = "expired"
NODE_MISSING = "node_missing"
NODE_NOT_FULL = "node_not_full"
POD_NOT_BATCHABLE = "pod_not_batchable"
EMPTY_LIST = "empty_list"


@attrs.define(eq=False, slots=True)
class _Ranking:
    signature: PodSignature
    build: Callable[[], list[str]] | None
    """Builds the other feasible nodes, best first; None once ``nodes`` holds them."""
    created: float
    nodes: list[str] = attrs.field(factory=list)
    """Remaining nodes, worst first: the next hint is ``nodes.pop()``."""

    def remaining(self) -> list[str]:
        """``nodes``, built on first use: most rankings are flushed unread (the chosen
        node still fits the next pod), so a cycle does not pay for ordering them."""
        if self.build is not None:
            self.nodes = self.build()
            self.nodes.reverse()
            self.build = None
        return self.nodes


@attrs.define(eq=False, slots=True)
class _LastCycle:
    cycle: int = -1
    chosen: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's cached ranking, and counts of hints given, used and flushes."""

    def __init__(self, signers: Sequence[SignPlugin]) -> None:
        self._signers = list(signers)
        self._ranking: _Ranking | None = None
        self._last = _LastCycle()
        self.stats: Counter[str] = Counter()
        """``hint``, ``no_hint``, ``hint_used``, ``hint_not_used`` and flush reasons."""

    @property
    def batched_pods(self) -> int:
        """Pods placed on a hinted node."""
        return self.stats["hint_used"]

    def sign(self, pod: Pod) -> PodSignature | None:
        """The pod's signature, or None when a plugin cannot sign it (or raises)."""
        fragments: dict[str, object] = {SCHEDULER_NAME: pod.spec.scheduler_name}
        signers = self._signers
        for i, plugin in enumerate(signers):
            try:
                out = plugin.sign_pod(pod)
            except Exception:
                return None
            if isinstance(out, Status):
                if i:
                    # The order of signers does not change a signature; asking a plugin
                    # that refused first makes an unsignable pod cheap to recognize.
                    signers.insert(0, signers.pop(i))
                return None
            for key, value in out:
                fragments[key] = value
        return tuple(sorted(fragments.items()))

    async def node_hint(
        self,
        signature: PodSignature | None,
        cycle: int,
        now: float,
        get_node: Callable[[str], NodeInfo | None],
        run_filter: Callable[[NodeInfo], Awaitable[Status]],
    ) -> str | None:
        """The node to try first for ``pod``, or None (GetNodeHint)."""
        ranking = self._ranking
        if ranking is None or (ranking.build is None and not ranking.nodes):
            self.stats["no_hint"] += 1
            return None
        reason = None
        last = self._last
        if cycle != last.cycle + 1:
            reason = POD_SKIPPED
        elif not last.succeeded:
            reason = POD_FAILED
        elif signature is None or signature != ranking.signature:
            reason = POD_INCOMPATIBLE
        elif now > ranking.created + MAX_BATCH_AGE:
            reason = EXPIRED
        else:
            chosen = get_node(last.chosen)
            if chosen is None:
                reason = NODE_MISSING
            elif not (await run_filter(chosen)).is_rejected:
                reason = NODE_NOT_FULL
        if reason is None and not ranking.remaining():
            reason = EMPTY_LIST
        if reason is not None:
            self._flush(reason)
            self.stats["no_hint"] += 1
            return None
        self.stats["hint"] += 1
        return ranking.nodes.pop()

    def store(
        self,
        signature: PodSignature | None,
        hinted: str | None,
        chosen: str,
        others: Callable[[], list[str]] | None,
        cycle: int,
        now: float,
    ) -> None:
        """Record a successful cycle (StoreScheduleResults).

        ``others`` gives the remaining feasible nodes, best first; it is called only
        when a later cycle takes a hint from them. None when the cycle found a single node.
        """
        last = self._last
        last.cycle, last.chosen, last.succeeded = cycle, chosen, True
        if hinted is not None and hinted == chosen:
            self.stats["hint_used"] += 1
            return
        if hinted is not None:
            self.stats["hint_not_used"] += 1
        if signature is not None and others is not None:
            self._ranking = _Ranking(signature, others, now)
            return
        self._flush(POD_NOT_BATCHABLE if signature is None else EMPTY_LIST)

    def _flush(self, reason: str) -> None:
        if self._ranking is not None:
            self.stats[f"flush_{reason}"] += 1
        self._ranking = None
