"""Secure serving: how a ksched port is served, as kube-scheduler's port 10259 is.

# k8s.io/apiserver pkg/server/options/serving.go, authentication.go, authorization.go;
# cmd/kube-scheduler/app/options (secure serving on by default, delegated authn/authz,
# /healthz /readyz /livez always allowed); pkg/endpoints/filters (401 and 403 answers as
# metav1.Status, "forbidden: User %q cannot %s path %q").
HTTPS by default, with a certificate made at start unless files are given; clients are
authenticated and each request authorized (``_auth``) before its body is read; plain
HTTP only when ``ServingOptions.http`` says so, with the same checks.
"""

from __future__ import annotations

import functools
import json
import logging
import ssl
from typing import Any, Protocol

import anyio
import anyio.abc
import attrs

from .._errors import ConfigError
from ._auth import (
    DEFAULT_ALWAYS_ALLOW_PATHS,
    AccessReviewer,
    Authenticator,
    Authorizer,
    TokenReviewer,
    UserInfo,
)
from ._http import Handler, Limits, Request, Response, serve_http
from ._tls import ServingCertificate, server_context

__all__ = ["Serving", "ServingOptions"]

log = logging.getLogger("ksched.http")


class _Reviewer(TokenReviewer, AccessReviewer, Protocol):
    """Both reviews (``ksched.kube``'s DelegatedAuth)."""


@attrs.frozen(kw_only=True)
class ServingOptions:
    """What the command line says about a port (``--tls-cert-file`` and the rest)."""

    http: bool = False
    """Plain HTTP (no TLS): only when asked for."""
    cert_file: str | None = None
    key_file: str | None = None
    client_ca_file: str | None = None
    """Clients presenting a certificate signed by this CA are authenticated by it."""
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS
    limits: Limits = attrs.field(factory=Limits)

    def check(self) -> None:
        """ConfigError naming the flag of a contradictory choice."""
        if bool(self.cert_file) != bool(self.key_file):
            raise ConfigError("--tls-cert-file and --tls-private-key-file go together")
        if self.http and (self.cert_file or self.client_ca_file):
            raise ConfigError("--http serves plain HTTP: it takes no --tls-* or --client-ca-file")
        for path in self.always_allow_paths:
            if "*" in path[:-1]:
                raise ConfigError(
                    f"--authorization-always-allow-paths: {path!r}: '*' may only end a path"
                )


@attrs.define(eq=False)
class Serving:
    """A port's TLS context and request guard, made once at start."""

    tls: ssl.SSLContext | None
    authenticator: Authenticator
    authorizer: Authorizer | None
    """None: every authenticated request is allowed (a port with nothing to protect)."""
    limits: Limits
    certificate: ServingCertificate | None = None
    """The certificate made at start (None when read from files, or plain HTTP)."""

    @classmethod
    def build(
        cls,
        options: ServingOptions,
        host: str,
        *,
        tokens: TokenReviewer | None = None,
        access: AccessReviewer | None = None,
        authorize: bool = True,
    ) -> Serving:
        """Serving for ``host`` as ``options`` say; ``tokens`` and ``access`` check Bearer
        tokens and requests (through the API server). ``authorize=False``: no request is
        refused once authenticated (nothing on the port needs protecting)."""
        options.check()
        certificate = None
        tls = None
        if not options.http:
            if not options.cert_file:
                alternate = ["127.0.0.1", "::1"] if host in ("", "0.0.0.0", "::") else [host]
                certificate = ServingCertificate.self_signed("localhost", alternate)
                log.info(
                    "generated a self-signed serving certificate",
                    extra={"kv": {"sha256": certificate.fingerprint}},
                )
            tls = server_context(
                certificate=certificate,
                cert_file=options.cert_file,
                key_file=options.key_file,
                client_ca_file=options.client_ca_file,
            )
        authorizer = (
            Authorizer(access, always_allow_paths=options.always_allow_paths) if authorize else None
        )
        return cls(tls, Authenticator(tokens), authorizer, options.limits, certificate)

    def delegate(self, reviewer: _Reviewer) -> None:
        """Check Bearer tokens and requests through ``reviewer`` from now on (for a
        caller that builds the serving before its API client)."""
        self.authenticator.tokens = reviewer
        if self.authorizer is not None:
            self.authorizer.reviewer = reviewer

    @property
    def scheme(self) -> str:
        """``https`` or ``http``."""
        return "http" if self.tls is None else "https"

    async def guard(self, request: Request) -> Response | UserInfo:
        """The user the request acts as, or the 401/403 refusing it."""
        try:
            user = await self.authenticator.authenticate(request.headers, request.client_subject)
        except Exception as exc:  # the API server could not review the token: 401, as upstream
            log.warning(
                "could not authenticate the request",
                extra={"kv": {"path": request.path, "error": f"{type(exc).__name__}: {exc}"}},
            )
            user = None
        if user is None:
            return _status(401, "Unauthorized", "Unauthorized")
        if self.authorizer is None:
            return user
        verb = request.method.lower()
        decision = await self.authorizer.authorize(user, verb, request.path)
        if decision.allowed:
            return user
        message = f"forbidden: User {json.dumps(user.name)} cannot {verb} path "
        message += json.dumps(request.path)
        if decision.reason:
            message += f": {json.dumps(decision.reason)}"
        return _status(403, "Forbidden", message, details={})

    async def serve(
        self,
        handler: Handler,
        host: str,
        port: int,
        *,
        task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve ``handler`` until cancelled; reports the bound port."""
        async with anyio.create_task_group() as tg:
            serve = functools.partial(
                serve_http, handler, host, port, tls=self.tls, limits=self.limits, guard=self.guard
            )
            bound = await tg.start(serve)
            log.debug(
                "serving",
                extra={"kv": {"address": f"{self.scheme}://{host}:{bound}"}},
            )
            task_status.started(bound)


def _status(code: int, reason: str, message: str, **more: Any) -> Response:
    """A metav1.Status answer, as kube-apiserver's filters write it."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        **more,
        "code": code,
    }
    return Response(code, json.dumps(body).encode(), "application/json")
