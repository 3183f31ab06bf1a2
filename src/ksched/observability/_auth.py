"""Who a client of a ksched port is and what it may do, decided as kube-scheduler's
secure port decides it.

# k8s.io/apiserver pkg/server/options/authentication.go (DelegatingAuthenticationOptions:
#   client certificate, then a Bearer token checked by TokenReview, else anonymous;
#   results cached 10 s), pkg/authentication/request/x509 (CommonNameUserConversion:
#   user = CN, groups = O), pkg/authentication/group (system:authenticated added),
#   pkg/server/options/authorization.go (DelegatingAuthorizationOptions: AlwaysAllowPaths
#   /healthz /readyz /livez, AlwaysAllowGroups system:masters, SubjectAccessReview
#   allowed and denied answers cached 10 s each), pkg/authorization/path (a path ending
#   in * matches as a prefix), pkg/endpoints/request/requestinfo.go (a non-resource
#   request's verb is its HTTP method in lower case).
The reviews themselves are protocols here (``TokenReviewer``, ``AccessReviewer``):
``ksched.kube`` implements them against the API server, so this layer imports no client.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Generic, Protocol, TypeVar

import anyio
import attrs

__all__ = [
    "ANONYMOUS",
    "AccessReview",
    "AccessReviewer",
    "Authenticator",
    "Authorizer",
    "TokenReview",
    "TokenReviewer",
    "UserInfo",
]

AUTHENTICATED = "system:authenticated"
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
DEFAULT_ALWAYS_ALLOW_GROUPS = ("system:masters",)
CACHE_TTL = 10.0
"""Seconds a review's answer is kept (upstream's token, allow and deny TTLs alike)."""
CACHE_ENTRIES = 4096
"""Answers kept at most per cache; the oldest go first."""


@attrs.frozen
class UserInfo:
    """An authenticated (or the anonymous) user, as Kubernetes' ``user.Info``."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Extra attributes as sorted (key, values) pairs, so a user is hashable."""


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


@attrs.frozen
class TokenReview:
    """A TokenReview's status: the user when ``authenticated``, else the ``error``."""

    authenticated: bool
    user: UserInfo | None = None
    error: str = ""


@attrs.frozen
class AccessReview:
    """A SubjectAccessReview's status."""

    allowed: bool
    reason: str = ""


class TokenReviewer(Protocol):
    """Checks a Bearer token (``authentication.k8s.io/v1`` TokenReview)."""

    async def review_token(self, token: str) -> TokenReview: ...


class AccessReviewer(Protocol):
    """Checks a non-resource request (``authorization.k8s.io/v1`` SubjectAccessReview)."""

    async def review_access(self, user: UserInfo, verb: str, path: str) -> AccessReview: ...


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@attrs.define(eq=False)
class _ReviewCache(Generic[K, V]):
    """Answers kept for a while (on the event loop's clock), at most ``entries`` of them;
    callers asking for the same key at once share one review."""

    ttl: Callable[[V], float]
    entries: int = CACHE_ENTRIES
    _kept: OrderedDict[K, tuple[float, V]] = attrs.field(init=False, factory=OrderedDict)
    _pending: dict[K, anyio.Event] = attrs.field(init=False, factory=dict)

    async def get(self, key: K, review: Callable[[], Awaitable[V]]) -> V:
        """The kept answer for ``key``, else ``review()``'s (kept for ``ttl(answer)``)."""
        while True:
            kept = self._kept.get(key)
            if kept is not None and kept[0] > anyio.current_time():
                self._kept.move_to_end(key)
                return kept[1]
            pending = self._pending.get(key)
            if pending is None:
                break
            await pending.wait()  # another caller is asking; its answer is kept, or not
        self._pending[key] = done = anyio.Event()
        try:
            answer = await review()
            self._kept[key] = (anyio.current_time() + self.ttl(answer), answer)
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
            return answer
        finally:
            del self._pending[key]
            done.set()


@attrs.define(eq=False)
class Authenticator:
    """Client certificate (verified by the TLS layer), else Bearer token, else anonymous."""

    tokens: TokenReviewer | None = None
    """Without one, a Bearer token is not looked at (the client is anonymous)."""
    success_ttl: float = CACHE_TTL
    failure_ttl: float = CACHE_TTL
    _cache: _ReviewCache[bytes, TokenReview] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._cache = _ReviewCache(
            lambda r: self.success_ttl if r.authenticated else self.failure_ttl
        )

    async def authenticate(
        self, headers: Mapping[str, str], client_subject: Mapping[str, tuple[str, ...]] | None
    ) -> UserInfo | None:
        """The user, ANONYMOUS when no credential was given, None when one was refused."""
        if client_subject is not None and client_subject.get("commonName"):
            name = client_subject["commonName"][0]
            groups = (*client_subject.get("organizationName", ()), AUTHENTICATED)
            return UserInfo(name, groups=groups)
        token = _bearer(headers.get("authorization", ""))
        if token is None or self.tokens is None:
            return ANONYMOUS
        if not token:
            return None
        reviewer = self.tokens
        # Keyed by a digest: the cache holds no token.
        key = hashlib.sha256(token.encode()).digest()
        review = await self._cache.get(key, lambda: reviewer.review_token(token))
        if not review.authenticated or review.user is None:
            return None
        user = review.user
        if AUTHENTICATED not in user.groups:
            user = attrs.evolve(user, groups=(*user.groups, AUTHENTICATED))
        return user


def _bearer(value: str) -> str | None:
    """The token of ``Authorization: Bearer TOKEN``; "" for a malformed Bearer header,
    None when the header is not a Bearer one (as upstream's bearertoken authenticator)."""
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token if token and " " not in token else ""


@attrs.define(eq=False)
class Authorizer:
    """Always-allowed paths and groups, else the ``reviewer``'s SubjectAccessReview
    (without one, everything else is forbidden, as upstream without a kubeconfig)."""

    reviewer: AccessReviewer | None = None
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS
    always_allow_groups: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_GROUPS
    allow_ttl: float = CACHE_TTL
    deny_ttl: float = CACHE_TTL
    _cache: _ReviewCache[tuple[UserInfo, str, str], AccessReview] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._cache = _ReviewCache(lambda r: self.allow_ttl if r.allowed else self.deny_ttl)
        for path in self.always_allow_paths:
            if "*" in path[:-1]:
                raise ValueError(f"always-allow path {path!r}: '*' may only end a path")

    def path_allowed(self, path: str) -> bool:
        """Whether ``path`` is one that needs no check."""
        for allowed in self.always_allow_paths:
            allowed = "/" + allowed.lstrip("/")
            if (allowed.endswith("*") and path.startswith(allowed[:-1])) or path == allowed:
                return True
        return False

    async def authorize(self, user: UserInfo, verb: str, path: str) -> AccessReview:
        """May ``user`` do ``verb`` (lower-case HTTP method) on the non-resource ``path``?"""
        if any(group in self.always_allow_groups for group in user.groups):
            return AccessReview(True)
        if self.path_allowed(path):
            return AccessReview(True)
        reviewer = self.reviewer
        if reviewer is None:
            return AccessReview(False, "no authorizer: only always-allowed paths are served")
        return await self._cache.get(
            (user, verb, path), lambda: reviewer.review_access(user, verb, path)
        )
