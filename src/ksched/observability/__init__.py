"""Observability and the HTTP the edges serve: metrics, health endpoints, logs."""

from ._health import HealthServer as HealthServer
from ._http import Handler as Handler
from ._http import Request as Request
from ._http import Response as Response
from ._http import parse_address as parse_address
from ._http import serve_http as serve_http
from ._logging import configure_logging as configure_logging
from ._metrics import SchedulerMetrics as SchedulerMetrics
from ._rest_client_metrics import RestClientMetrics as RestClientMetrics

__all__ = [
    "Handler",
    "HealthServer",
    "Request",
    "Response",
    "RestClientMetrics",
    "SchedulerMetrics",
    "configure_logging",
    "parse_address",
    "serve_http",
]
