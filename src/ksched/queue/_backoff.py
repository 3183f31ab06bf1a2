"""backoffQ: pods waiting out their backoff, ordered by expiry.

# pkg/scheduler/backend/queue/backoff_queue.go: getBackoffTime, calculateBackoffDuration,
# isEntityBackingoff, alignToWindow, popAllBackoffCompleted, popBackoff
Times are compared in whole nanoseconds, as upstream's time.Time does, so float rounding
never moves an instant across a window boundary.
"""

from __future__ import annotations

from collections.abc import Callable

from ._entry import QueuedPod
from ._heap import KeyedHeap

__all__ = ["NS", "WINDOW_NS", "BackoffQueue", "align_ns", "backoff_duration_ns", "to_ns"]

NS = 1_000_000_000
WINDOW_NS = NS
"""backoffQOrderingWindowDuration: backoff expiries are truncated to 1 s windows."""

_NO_BACKOFF = -(1 << 100)  # sorts before every real expiry


def to_ns(seconds: float) -> int:
    return round(seconds * NS)


def align_ns(t_ns: int) -> int:
    """Truncate to the ordering window (Go's Time.Truncate(1s))."""
    return t_ns - t_ns % WINDOW_NS


def backoff_duration_ns(count: int, initial_ns: int, max_ns: int) -> int:
    """``initial << (count - 1)``, capped at ``max`` (calculateBackoffDuration)."""
    if count <= 0:
        return 0
    shift = count - 1
    if initial_ns > max_ns >> shift:
        return max_ns
    return initial_ns << shift


def _uid(entry: QueuedPod) -> str:
    return entry.pod_info.pod.uid


class BackoffQueue:
    """Two heaps, as upstream: pods rejected by plugins (poppable when activeQ is empty)
    and pods that failed with an error (only ever flushed once their backoff is over)."""

    __slots__ = ("_align", "_errors", "_initial_ns", "_max_ns", "_rejected")

    def __init__(
        self,
        *,
        initial: float,
        maximum: float,
        active_less: Callable[[QueuedPod, QueuedPod], bool],
        pop_from_backoff_q: bool,
    ) -> None:
        self._initial_ns = to_ns(initial)
        self._max_ns = to_ns(maximum)
        self._align = pop_from_backoff_q

        def by_expiry(a: QueuedPod, b: QueuedPod) -> bool:
            ea, eb = self._key(a), self._key(b)
            if ea != eb:
                return ea < eb
            return a.sequence < b.sequence

        def by_expiry_then_priority(a: QueuedPod, b: QueuedPod) -> bool:
            ea, eb = self._key(a), self._key(b)
            if ea != eb:
                return ea < eb
            return active_less(a, b)

        self._rejected: KeyedHeap[QueuedPod] = KeyedHeap(
            _uid, by_expiry_then_priority if pop_from_backoff_q else by_expiry
        )
        self._errors: KeyedHeap[QueuedPod] = KeyedHeap(_uid, by_expiry)

    # ---- backoff arithmetic -----------------------------------------------------------

    def align(self, t_ns: int) -> int:
        return align_ns(t_ns) if self._align else t_ns

    def expiry_ns(self, entry: QueuedPod) -> int | None:
        """When ``entry``'s backoff ends (None: it has none), cached until its next failure."""
        if self._max_ns == 0:
            return None
        count = entry.unschedulable_count
        if entry.consecutive_errors > 0:
            count = entry.consecutive_errors
        if count == 0:
            return None
        if entry.expiry_ns is None:
            duration = backoff_duration_ns(count, self._initial_ns, self._max_ns)
            entry.expiry_ns = self.align(to_ns(entry.timestamp) + duration)
            entry.backoff_expiry = entry.expiry_ns / NS
        return entry.expiry_ns

    def _key(self, entry: QueuedPod) -> int:
        expiry = self.expiry_ns(entry)
        return _NO_BACKOFF if expiry is None else expiry

    def is_backing_off(self, entry: QueuedPod, now_ns: int) -> bool:
        """Still backing off while the expiry is not before the current window."""
        expiry = self.expiry_ns(entry)
        return expiry is not None and expiry >= self.align(now_ns)

    def completion_ns(self, entry: QueuedPod, now_ns: int) -> int:
        """The first instant at which ``entry`` is no longer backing off."""
        expiry = self.expiry_ns(entry)
        if expiry is None or expiry < self.align(now_ns):
            return now_ns
        return expiry + WINDOW_NS if self._align else expiry + 1

    # ---- the heaps ---------------------------------------------------------------------

    def add(self, entry: QueuedPod) -> None:
        """Into the error heap when no plugin rejected the pod, else the rejected heap."""
        uid = _uid(entry)
        if not entry.unschedulable_plugins and not entry.pending_plugins:
            self._rejected.delete(uid)
            self._errors.add_or_update(entry)
        else:
            self._errors.delete(uid)
            self._rejected.add_or_update(entry)

    def update(self, entry: QueuedPod) -> None:
        """Restore the order after ``entry`` (already queued) changed."""
        uid = _uid(entry)
        heap = self._rejected if uid in self._rejected else self._errors
        heap.add_or_update(entry)

    def delete(self, uid: str) -> QueuedPod | None:
        entry = self._rejected.delete(uid)
        return entry if entry is not None else self._errors.delete(uid)

    def get(self, uid: str) -> QueuedPod | None:
        entry = self._rejected.get(uid)
        return entry if entry is not None else self._errors.get(uid)

    def __contains__(self, uid: str) -> bool:
        return uid in self._rejected or uid in self._errors

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errors)

    def len_poppable(self) -> int:
        """Pods Pop may take when activeQ is empty (the rejected heap only)."""
        return len(self._rejected)

    def pop_poppable(self) -> QueuedPod | None:
        """The head of the rejected heap, backing off or not (popBackoff)."""
        return self._rejected.pop()

    def pop_all_completed(self, now_ns: int) -> list[QueuedPod]:
        done: list[QueuedPod] = []
        for heap in (self._rejected, self._errors):
            while (head := heap.peek()) is not None and not self.is_backing_off(head, now_ns):
                heap.pop()
                done.append(head)
        return done

    def next_completion_ns(self, now_ns: int) -> int | None:
        times = [
            self.completion_ns(head, now_ns)
            for heap in (self._rejected, self._errors)
            if (head := heap.peek()) is not None
        ]
        return min(times) if times else None

    def values(self) -> list[QueuedPod]:
        return self._rejected.values() + self._errors.values()
