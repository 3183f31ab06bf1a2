"""TokenReview and SubjectAccessReview against the API server, for the ports ksched serves.

# k8s.io/apiserver plugin/pkg/authenticator/token/webhook (TokenReview, authentication.k8s.io/v1),
# plugin/pkg/authorizer/webhook (SubjectAccessReview, authorization.k8s.io/v1, non-resource
# attributes), pkg/server/options/authorization.go getClient (its own client: QPS 200,
# burst 400, 10 s timeout).
The serving layer (``ksched.observability``) caches the answers; this module only asks.
The identity ``ksched`` runs as needs ``create`` on ``tokenreviews`` and
``subjectaccessreviews`` (the ``system:auth-delegator`` ClusterRole).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import attrs

from ..observability import AccessReview, TokenReview, UserInfo
from ._client import KubeClient, TokenBucket

__all__ = ["DelegatedAuth", "review_limiter"]

REVIEW_QPS, REVIEW_BURST = 200.0, 400
REVIEW_TIMEOUT = 10.0


def review_limiter() -> TokenBucket:
    """The reviews' own rate limit (upstream's), apart from the scheduler's requests."""
    return TokenBucket(REVIEW_QPS, REVIEW_BURST)


@attrs.define(eq=False)
class DelegatedAuth:
    """Implements the serving layer's ``TokenReviewer`` and ``AccessReviewer``."""

    client: KubeClient
    audiences: tuple[str, ...] = ()
    timeout: float = REVIEW_TIMEOUT

    async def review_token(self, token: str) -> TokenReview:
        """POST a TokenReview; its status says who the token belongs to."""
        spec: dict[str, Any] = {"token": token}
        if self.audiences:
            spec["audiences"] = list(self.audiences)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        with anyio.fail_after(self.timeout):
            answer = await self.client.request(
                "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=body, retry=False
            )
        status = _mapping((answer or {}).get("status"))
        if not status.get("authenticated"):
            return TokenReview(False, error=str(status.get("error") or "token not authenticated"))
        user = _mapping(status.get("user"))
        extra = _mapping(user.get("extra"))
        return TokenReview(
            True,
            UserInfo(
                str(user.get("username", "")),
                str(user.get("uid", "")),
                tuple(str(g) for g in user.get("groups") or ()),
                tuple(sorted((str(k), tuple(map(str, v or ()))) for k, v in extra.items())),
            ),
        )

    async def review_access(self, user: UserInfo, verb: str, path: str) -> AccessReview:
        """POST a SubjectAccessReview for ``verb`` on the non-resource ``path``."""
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        with anyio.fail_after(self.timeout):
            answer = await self.client.request(
                "POST",
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                body=body,
                retry=False,
            )
        status = _mapping((answer or {}).get("status"))
        reason = status.get("reason") or status.get("evaluationError") or ""
        return AccessReview(bool(status.get("allowed")), str(reason))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
