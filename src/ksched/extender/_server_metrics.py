"""What ``ksched extender serve`` records of the requests it serves.

kube-scheduler serves no extender, so these names are ksched's own, in the scheduler's
namespace: ``scheduler_extender_server_requests_total{verb,code}`` counts every request
by verb (``filter``, ``prioritize``, ``preempt``, ``bind``; ``other`` for a path that is
none of them) and HTTP status, and ``scheduler_extender_server_request_duration_seconds
{verb}`` times the verbs' requests from the body read to the answer.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from ..observability._metrics import _Counter, _Histogram, exponential_buckets

__all__ = ["ExtenderServerMetrics"]


class _Families(Collector):
    def __init__(self, owner: ExtenderServerMetrics) -> None:
        self._owner = owner

    def collect(self) -> Iterator[Metric]:
        yield self._owner.requests.family()
        yield self._owner.duration.family()


class ExtenderServerMetrics:
    """The served requests, on ``registry`` (a new one when None)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.requests = _Counter(
            "scheduler_extender_server_requests",
            "Number of requests ksched's extender server answered, by verb and HTTP code.",
            ["verb", "code"],
        )
        self.duration = _Histogram(
            "scheduler_extender_server_request_duration_seconds",
            "Time ksched's extender server took to answer a verb's request.",
            exponential_buckets(0.0001, 2, 17),
            ["verb"],
        )
        self.registry.register(_Families(self))

    def served(self, verb: str, code: int, seconds: float | None) -> None:
        """A request was answered with ``code``; ``seconds`` for a verb's request."""
        self.requests.inc((verb, str(code)))
        if seconds is not None:
            self.duration.observe((verb,), seconds)
