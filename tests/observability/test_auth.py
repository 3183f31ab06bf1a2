"""The review caches: answers kept 10 s as upstream's defaults, concurrent asks share one
review, the number kept is bounded; the Bearer header read as upstream reads it.

# k8s.io/apiserver pkg/server/options/authentication.go (CacheTTL 10s), authorization.go
# (AllowCacheTTL 10s, DenyCacheTTL 10s)
"""

from __future__ import annotations

import anyio
import pytest
from trio.testing import MockClock

from ksched.observability import (
    ANONYMOUS,
    AccessReview,
    Authenticator,
    Authorizer,
    TokenReview,
    UserInfo,
)

pytestmark = pytest.mark.anyio

ALICE = UserInfo("alice", groups=("devs",))


class Counting:
    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.access: list[str] = []

    async def review_token(self, token: str) -> TokenReview:
        self.tokens.append(token)
        await anyio.sleep(0.5)  # the API server takes a while
        return TokenReview(token == "good", ALICE if token == "good" else None)

    async def review_access(self, user: UserInfo, verb: str, path: str) -> AccessReview:
        self.access.append(path)
        return AccessReview(path == "/metrics")


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, object]]:
    return ("trio", {"clock": MockClock(autojump_threshold=0)})


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_token_answers_are_kept_ten_seconds_good_or_bad() -> None:
    reviews = Counting()
    authn = Authenticator(reviews)
    start = anyio.current_time()
    user = await authn.authenticate(_bearer("good"), None)
    assert user == UserInfo("alice", groups=("devs", "system:authenticated"))
    assert await authn.authenticate(_bearer("bad"), None) is None
    await anyio.sleep(9.0 - (anyio.current_time() - start))
    await authn.authenticate(_bearer("good"), None)
    await authn.authenticate(_bearer("bad"), None)
    assert reviews.tokens == ["good", "bad"]
    await anyio.sleep(1.5)  # past 10 s after each answer
    await authn.authenticate(_bearer("good"), None)
    await authn.authenticate(_bearer("bad"), None)
    assert reviews.tokens == ["good", "bad", "good", "bad"]


async def test_concurrent_requests_with_one_token_share_one_review() -> None:
    reviews = Counting()
    authn = Authenticator(reviews)
    async with anyio.create_task_group() as tg:
        for _ in range(50):
            tg.start_soon(authn.authenticate, _bearer("good"), None)
    assert reviews.tokens == ["good"]


async def test_access_answers_are_kept_ten_seconds_and_the_cache_is_bounded() -> None:
    reviews = Counting()
    authz = Authorizer(reviews)
    authz._cache.entries = 3
    assert (await authz.authorize(ALICE, "get", "/metrics")).allowed
    assert not (await authz.authorize(ALICE, "get", "/secret")).allowed
    await authz.authorize(ALICE, "get", "/metrics")
    assert reviews.access == ["/metrics", "/secret"]
    for path in ("/a", "/b", "/c"):  # pushes the oldest out
        await authz.authorize(ALICE, "get", path)
    await authz.authorize(ALICE, "get", "/metrics")
    assert reviews.access.count("/metrics") == 2
    await anyio.sleep(10.1)
    await authz.authorize(ALICE, "get", "/c")
    assert reviews.access.count("/c") == 2


async def test_always_allowed_paths_and_groups_need_no_review() -> None:
    reviews = Counting()
    authz = Authorizer(reviews, always_allow_paths=("/healthz", "/debug/*", "livez"))
    for path in ("/healthz", "/debug/x/y", "/livez"):
        assert (await authz.authorize(ANONYMOUS, "get", path)).allowed
    assert (
        await authz.authorize(UserInfo("root", groups=("system:masters",)), "post", "/x")
    ).allowed
    assert reviews.access == []
    assert not (await Authorizer(None).authorize(ALICE, "get", "/metrics")).allowed


@pytest.mark.parametrize(
    ("header", "outcome"),
    [
        ("", "anonymous"),
        ("Basic dXNlcjpwYXNz", "anonymous"),  # not a Bearer header: not looked at
        ("Bearer good", "alice"),
        ("bearer good", "alice"),
        ("Bearer", "refused"),
        ("Bearer a b", "refused"),
        ("Bearer bad", "refused"),
    ],
)
async def test_the_bearer_header(header: str, outcome: str) -> None:
    authn = Authenticator(Counting())
    user = await authn.authenticate({"authorization": header} if header else {}, None)
    got = "refused" if user is None else "anonymous" if user == ANONYMOUS else user.name
    assert got == outcome


async def test_a_verified_client_certificate_wins_over_a_token() -> None:
    reviews = Counting()
    subject = {"commonName": ("bob",), "organizationName": ("ops", "sre")}
    user = await Authenticator(reviews).authenticate(_bearer("bad"), subject)
    assert user == UserInfo("bob", groups=("ops", "sre", "system:authenticated"))
    assert reviews.tokens == []
