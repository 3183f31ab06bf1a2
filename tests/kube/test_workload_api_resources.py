"""The Workload API in the cluster connector: read in the newest version the server
serves, skipped (logged once) where it serves none, list items read as the right kind."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ksched.api import PodGroup, SchedulingPodGroup, Workload
from ksched.kube import RESOURCES, KubeClient, KubeCluster, Reflector, TokenBucket

pytestmark = pytest.mark.anyio

SCHEDULING = "scheduling.k8s.io"


def _cluster(group_versions: list[str]) -> KubeCluster:
    groups = [
        {"name": gv.split("/")[0], "versions": [{"groupVersion": gv}]} for gv in group_versions
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/apis"
        return httpx.Response(200, json={"groups": groups})

    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    client = KubeClient(http, TokenBucket(0, 0))
    return KubeCluster(client, client)


@pytest.mark.parametrize(
    ("served", "workload", "pod_group"),
    [
        (["scheduling.k8s.io/v1alpha1"], "v1alpha1", None),
        (["scheduling.k8s.io/v1alpha1", "scheduling.k8s.io/v1alpha2"], "v1alpha2", "v1alpha2"),
        (["scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1beta1"], "v1beta1", "v1beta1"),
    ],
)
async def test_each_kind_is_read_in_the_newest_served_version(
    served: list[str], workload: str, pod_group: str | None
) -> None:
    cluster = _cluster(["scheduling.k8s.io/v1", *served])
    await cluster._discover()
    assert cluster.reflectors["Workload"].resource.version == workload
    got = cluster.reflectors.get("SchedulingPodGroup")
    assert (got.resource.version if got else None) == pod_group
    # a version passed over for a newer or an older one is not reported missing; a kind
    # served in no version is (v1alpha1 has no PodGroup object)
    missing = {g for g in cluster.missing_groups if g.startswith(SCHEDULING)}
    newer = {f"{SCHEDULING}/{v}" for v in ("v1alpha2", "v1alpha3", "v1beta1")}
    assert missing == (set() if pod_group else newer)


async def test_a_server_without_the_workload_api_skips_it_logging_each_version_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = _cluster(["scheduling.k8s.io/v1"])
    with caplog.at_level("INFO", logger="ksched.kube"):
        await cluster._discover()
    assert "Workload" not in cluster.reflectors
    assert "SchedulingPodGroup" not in cluster.reflectors
    versions = ("v1alpha1", "v1alpha2", "v1alpha3", "v1beta1")
    assert {f"{SCHEDULING}/{v}" for v in versions} <= cluster.missing_groups
    lines = [r.getMessage() for r in caplog.records if SCHEDULING + "/v1" in r.getMessage()]
    assert len(lines) == len(versions)


def _convert(kind: str, version: str, item: dict[str, Any]) -> Any:
    resource = next(
        r for r in RESOURCES if r.kind == kind and r.version == version and "scheduling" in r.group
    )
    never_called = httpx.MockTransport(lambda request: httpx.Response(500))  # no request is made
    http = httpx.AsyncClient(base_url="http://k", transport=never_called)
    reflector = Reflector(KubeClient(http, TokenBucket(0, 0)), resource, print, print)
    return reflector._convert(item)


def test_list_items_without_kind_or_api_version_are_read_as_their_resource() -> None:
    meta = {"name": "g", "namespace": "ns", "resourceVersion": "1"}
    pg = _convert(
        "SchedulingPodGroup",
        "v1beta1",
        {"metadata": meta, "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}},
    )
    assert isinstance(pg, SchedulingPodGroup) and pg.policy.min_count == 3
    w = _convert(
        "Workload",
        "v1alpha1",
        {"metadata": meta, "spec": {"podGroups": [{"name": "a", "policy": {"basic": {}}}]}},
    )
    assert isinstance(w, Workload) and [g.name for g in w.pod_groups] == ["a"]
    cos = _convert("PodGroup", "v1alpha1", {"metadata": meta, "spec": {"minMember": 2}})
    assert isinstance(cos, PodGroup) and cos.min_member == 2
