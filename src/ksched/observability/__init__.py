"""Observability and the HTTP the edges serve: metrics, health endpoints, logs, and how
their ports are secured (TLS, authentication, authorization)."""

from ._auth import ANONYMOUS as ANONYMOUS
from ._auth import AccessReview as AccessReview
from ._auth import AccessReviewer as AccessReviewer
from ._auth import Authenticator as Authenticator
from ._auth import Authorizer as Authorizer
from ._auth import TokenReview as TokenReview
from ._auth import TokenReviewer as TokenReviewer
from ._auth import UserInfo as UserInfo
from ._health import HealthServer as HealthServer
from ._http import Guard as Guard
from ._http import Handler as Handler
from ._http import Limits as Limits
from ._http import Request as Request
from ._http import Response as Response
from ._http import parse_address as parse_address
from ._http import serve_http as serve_http
from ._logging import configure_logging as configure_logging
from ._metrics import SchedulerMetrics as SchedulerMetrics
from ._rest_client_metrics import RestClientMetrics as RestClientMetrics
from ._serving import Serving as Serving
from ._serving import ServingOptions as ServingOptions
from ._tls import ServingCertificate as ServingCertificate

__all__ = [
    "ANONYMOUS",
    "AccessReview",
    "AccessReviewer",
    "Authenticator",
    "Authorizer",
    "Guard",
    "Handler",
    "HealthServer",
    "Limits",
    "Request",
    "Response",
    "RestClientMetrics",
    "SchedulerMetrics",
    "Serving",
    "ServingCertificate",
    "ServingOptions",
    "TokenReview",
    "TokenReviewer",
    "UserInfo",
    "configure_logging",
    "parse_address",
    "serve_http",
]
