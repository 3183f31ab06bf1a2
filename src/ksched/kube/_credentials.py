"""Where each request's ``Authorization`` header comes from, cheaply.

# client-go transport/token_source.go (NewCachedFileTokenSource: a token file re-read
# once its copy is older than a minute less 10 s of leeway, the old token kept while a
# read fails and it is not a minute old; reset by a 401), plugin/pkg/client/auth/exec
# (the plugin's credential cached until status.expirationTimestamp, run again on a 401;
# a rotated client certificate closes the connections)
A request asks ``cached()`` for the header: a string kept in memory, no I/O. Only when it
is stale does it ``await fetch()``, which reads the token file in a worker thread or runs
the plugin as a child process, one caller at a time. A 401 answer ``invalidate``-s the
header it was sent with, so the request can go once more with a fresh one.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import ssl
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import attrs
import httpx

from ._exec import CredentialError, ExecConfig, ExecCredential, run_plugin

__all__ = [
    "CredentialError",
    "Credentials",
    "CredentialsAuth",
    "ExecCredentials",
    "StaticCredentials",
    "TokenFileCredentials",
    "basic_header",
    "load_pem_chain",
]

log = logging.getLogger("ksched.kube")

TOKEN_FILE_PERIOD = 60.0
TOKEN_FILE_LEEWAY = 10.0


class Credentials:
    """No credentials: requests go without an ``Authorization`` header."""

    static = True
    """The header never changes (it may be baked into a client's default headers)."""

    def cached(self) -> str | None:
        """The header to send now if one is held and fresh, else None (then ``fetch``)."""
        return None

    async def fetch(self) -> str | None:
        """The header to send, renewed if stale (file read or plugin run off the loop)."""
        return None

    def invalidate(self, sent: str | None) -> bool:
        """A 401 answered a request sent with ``sent``: drop it if it is still the one
        held. True when the next ``fetch`` gets a new one (sending again may help)."""
        return False

    def attach(self, context: ssl.SSLContext, on_rotate: Callable[[], None]) -> None:
        """Keep ``context``'s client certificate up to date (plugins that return one);
        ``on_rotate`` closes connections made with the old one."""

    def check(self, backend: str = "asyncio") -> None:
        """Get a credential once, before the event loop runs: a plugin that cannot run
        fails the start with its message (CredentialError) instead of every request."""


@attrs.define(eq=False)
class StaticCredentials(Credentials):
    """A kubeconfig's inline ``token`` or ``username``/``password``."""

    header: str | None = attrs.field(repr=False)

    def cached(self) -> str | None:
        return self.header

    async def fetch(self) -> str | None:
        return self.header


def basic_header(username: str, password: str) -> str:
    """RFC 7617 basic authentication, as client-go sends a kubeconfig's username/password."""
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


@attrs.define(eq=False)
class TokenFileCredentials(Credentials):
    """A bearer token read from a file and re-read about once a minute (projected
    service-account tokens rotate hourly)."""

    static = False
    path: Path
    _header: str | None = attrs.field(default=None, repr=False, alias="token")
    clock: Callable[[], float] = time.monotonic
    _read_at: float = attrs.field(default=float("-inf"), init=False)
    _lock: anyio.Lock | None = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        if self._header is not None:  # an initial token, read when the config was loaded
            self._header = f"Bearer {self._header}"
            self._read_at = self.clock()

    def cached(self) -> str | None:
        if self.clock() < self._read_at + TOKEN_FILE_PERIOD - TOKEN_FILE_LEEWAY:
            return self._header
        return None

    async def fetch(self) -> str | None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            header = self.cached()
            if header is not None:
                return header
            try:
                token = (await anyio.Path(self.path).read_text()).strip()
                if not token:
                    raise CredentialError(f"read empty token from file {str(self.path)!r}")
            except (OSError, UnicodeError, CredentialError) as exc:
                if self._header is not None and self.clock() < self._read_at + TOKEN_FILE_PERIOD:
                    log.error("Unable to rotate token: %s", exc)
                    return self._header
                if isinstance(exc, CredentialError):
                    raise
                raise CredentialError(
                    f"failed to read token file {str(self.path)!r}: {exc}"
                ) from exc
            self._header, self._read_at = f"Bearer {token}", self.clock()
            return self._header

    def invalidate(self, sent: str | None) -> bool:
        if sent is not None and sent == self._header:
            self._read_at = float("-inf")
            return True
        return False


@attrs.define(eq=False)
class ExecCredentials(Credentials):
    """A credential plugin's token or client certificate, cached until it expires."""

    static = False
    config: ExecConfig
    cluster: Mapping[str, Any] | None = None
    """``spec.cluster`` for a plugin that asks for it (``provideClusterInfo``)."""
    clock: Callable[[], float] = time.time
    """Wall-clock seconds (expirationTimestamp is a wall-clock time)."""
    runs: int = attrs.field(default=0, init=False)
    """How often the plugin ran (for logs and tests)."""
    _held: ExecCredential | None = attrs.field(default=None, init=False, repr=False)
    _header: str | None = attrs.field(default=None, init=False, repr=False)
    _lock: anyio.Lock | None = attrs.field(default=None, init=False)
    _contexts: weakref.WeakKeyDictionary[ssl.SSLContext, Callable[[], None]] = attrs.field(
        factory=weakref.WeakKeyDictionary, init=False, repr=False
    )

    def _fresh(self) -> bool:
        held = self._held
        return held is not None and (held.expires is None or self.clock() < held.expires)

    def cached(self) -> str | None:
        return self._header if self._header is not None and self._fresh() else None

    async def fetch(self) -> str | None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if not self._fresh():
                self._adopt(await run_plugin(self.config, self.cluster))
            return self._header

    def _adopt(self, credential: ExecCredential) -> None:
        old, self._held = self._held, credential
        self.runs += 1
        self._header = f"Bearer {credential.token}" if credential.token else None
        if credential.cert_pem and (old is None or old.cert_pem != credential.cert_pem):
            for context, on_rotate in list(self._contexts.items()):
                self._load(context)
                if old is not None:
                    on_rotate()

    def _load(self, context: ssl.SSLContext) -> None:
        held = self._held
        if held is None or not held.cert_pem:
            return
        try:
            load_pem_chain(context, held.cert_pem, held.key_pem)
        except (ssl.SSLError, OSError) as exc:
            raise CredentialError(f"failed parsing client key/certificate: {exc}") from exc

    def invalidate(self, sent: str | None) -> bool:
        if self._held is not None and sent == self._header:
            self._held, self._header = None, None
            return True
        return False

    def attach(self, context: ssl.SSLContext, on_rotate: Callable[[], None]) -> None:
        self._contexts[context] = on_rotate
        self._load(context)

    def check(self, backend: str = "asyncio") -> None:
        anyio.run(self.fetch, backend=backend)
        self._lock = None  # made by that event loop; the next one makes its own


@contextlib.contextmanager
def _memory_file(data: bytes) -> Iterator[str]:
    """A path to ``data`` in an anonymous memory file: ssl loads certificates and keys
    only from paths, and a key must never touch the disk."""
    fd = os.memfd_create("ksched-credential", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


def load_pem_chain(context: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Load a client certificate and key held in memory into ``context``."""
    with _memory_file(cert_pem) as cert, _memory_file(key_pem) as key:
        context.load_cert_chain(cert, key)


class CredentialsAuth(httpx.Auth):
    """``Credentials`` as httpx authentication: the header on each request, and one more
    try with a renewed header after a 401 (KubeClient's own fast path does the same)."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> Any:  # an async generator of requests, as httpx.Auth declares it
        creds = self.credentials
        sent = creds.cached()
        if sent is None:
            sent = await creds.fetch()
        if sent is not None:
            request.headers["Authorization"] = sent
        response = yield request
        if response.status_code == 401 and creds.invalidate(sent):
            await response.aread()
            again = await creds.fetch()
            if again is not None:
                request.headers["Authorization"] = again
            yield request
