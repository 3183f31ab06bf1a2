"""client-go's API-client metrics, recorded by ksched's kube client.

# staging/src/k8s.io/component-base/metrics/prometheus/restclient/metrics.go (names, labels,
# buckets); client-go rest/request.go (when each is recorded)
Per request: ``rest_client_request_duration_seconds`` once, from the first wait for the
rate limiter to the last answer (retries included); ``rest_client_rate_limiter_duration_seconds``
for each wait for a token; ``rest_client_requests_total`` and
``rest_client_request_size_bytes`` for each try on the wire, the code ``<error>`` when no
answer came; ``rest_client_request_retries_total`` for each try after the first, labelled
with the code that caused it; ``rest_client_response_size_bytes`` for the final body.
A watch counts as a request (its code and the limiter wait), without a duration.
``verb``/``method`` is the HTTP method and ``host`` the server's ``host:port``, as upstream.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from ._metrics import _Counter, _Histogram

__all__ = ["ERROR_CODE", "RestClientMetrics"]

ERROR_CODE = "<error>"
"""The ``code`` of a try that got no answer (a connection error), as client-go labels it."""

_LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
_SIZE_BUCKETS = (64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)


class _Families(Collector):
    def __init__(self, owner: RestClientMetrics) -> None:
        self._owner = owner

    def collect(self) -> Iterator[Metric]:
        for metric in self._owner.recorded:
            yield metric.family()


class RestClientMetrics:
    """The API-client metrics of one process's kube clients (client-go's ``rest_client_*``).

    Give the same object to every :class:`~ksched.kube.KubeClient` whose requests it
    should count; ``registry`` is where they appear (a new one when None), typically the
    scheduler's: ``RestClientMetrics(scheduler_metrics.registry)``.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.request_duration = _Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            _LATENCY_BUCKETS,
            ["verb", "host"],
        )
        self.rate_limiter_duration = _Histogram(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            _LATENCY_BUCKETS,
            ["verb", "host"],
        )
        self.request_size = _Histogram(
            "rest_client_request_size_bytes",
            "Request size in bytes. Broken down by verb and host.",
            _SIZE_BUCKETS,
            ["verb", "host"],
        )
        self.response_size = _Histogram(
            "rest_client_response_size_bytes",
            "Response size in bytes. Broken down by verb and host.",
            _SIZE_BUCKETS,
            ["verb", "host"],
        )
        self.requests = _Counter(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
        )
        self.retries = _Counter(
            "rest_client_request_retries",
            "Number of request retries, partitioned by status code, verb, and host.",
            ["code", "verb", "host"],
        )
        self.recorded = (
            self.request_duration,
            self.rate_limiter_duration,
            self.request_size,
            self.response_size,
            self.requests,
            self.retries,
        )
        self.registry.register(_Families(self))

    def rate_limited(self, verb: str, host: str, seconds: float) -> None:
        """A wait for the rate limiter's token ended."""
        self.rate_limiter_duration.observe((verb, host), seconds)

    def attempt(self, code: str, verb: str, host: str, request_bytes: int) -> None:
        """One try went on the wire: its answer's status code, or ``<error>``."""
        self.requests.inc((code, verb, host))
        self.request_size.observe((verb, host), request_bytes)

    def retry(self, code: str, verb: str, host: str) -> None:
        """A try is repeated because the last one answered ``code``."""
        self.retries.inc((code, verb, host))

    def done(self, verb: str, host: str, seconds: float, response_bytes: int | None) -> None:
        """A request ended after ``seconds``; its final body had ``response_bytes``
        (None: no body came back)."""
        self.request_duration.observe((verb, host), seconds)
        if response_bytes is not None:
            self.response_size.observe((verb, host), response_bytes)
