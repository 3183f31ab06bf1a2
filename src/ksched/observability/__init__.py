"""Observability and the HTTP the edges serve: metrics, health endpoints, logs."""

from ._http import Handler as Handler
from ._http import Request as Request
from ._http import Response as Response
from ._http import parse_address as parse_address
from ._http import serve_http as serve_http

__all__ = ["Handler", "Request", "Response", "parse_address", "serve_http"]
