"""What the HTTP server and its handlers exchange: requests, responses, the limits.

The server (``_http``) and its connections (``_http_connection``) both read these; they
live apart so that neither imports the other for them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import attrs

from ._auth import UserInfo

__all__ = ["Guard", "Handler", "Limits", "MiB", "Request", "Response"]

MiB = 1024 * 1024


@attrs.frozen(kw_only=True)
class Limits:
    """What one server allows its clients (sizes in bytes, times in seconds)."""

    max_connections: int = 128
    """Connections served at once; more wait in the listen backlog."""
    backlog: int = 128
    """Connections the kernel queues before refusing more."""
    max_header_bytes: int = 64 * 1024
    """The request line and headers; more answers 431."""
    max_body_bytes: int = 1 * MiB
    """The request body; more answers 413 (the extender raises it: a 5000-node request
    is about 10 MiB)."""
    header_timeout: float = 10.0
    """From accept to the end of the first request's head, TLS handshake included."""
    body_timeout: float = 30.0
    """From the end of the head to the end of the body."""
    idle_timeout: float = 30.0
    """How long a kept-alive connection may wait for (the head of) its next request."""
    write_timeout: float = 30.0
    """How long a client may take to read a response."""


@attrs.frozen
class Request:
    """One HTTP request: method, target path (query string split off) and body.

    ``client_subject`` is the subject of the client's verified TLS certificate (attribute
    name to values, e.g. ``{"commonName": ("alice",), "organizationName": ("ops",)}``);
    ``user`` is who the server's guard found the client to be.
    """

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes = b""
    client_subject: Mapping[str, tuple[str, ...]] | None = None
    user: UserInfo | None = None


@attrs.frozen
class Response:
    """What a handler returns."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        """A plain-text response."""
        return cls(status, text.encode())


Handler = Callable[[Request], Awaitable[Response]]
"""``await handler(request) -> Response``; an exception answers 500 with its text."""

Guard = Callable[[Request], Awaitable[Response | UserInfo]]
"""Runs on each request's head, before its body is read: the user it may act as, or the
answer refusing it (401, 403), which the server sends without reading the body."""
