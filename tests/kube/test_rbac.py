"""examples/kube/rbac.yaml grants what `ksched run` does: run as that ServiceAccount."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from ksched import Scheduler
from ksched.kube import (
    KubeClient,
    KubeCluster,
    KubeConfig,
    LeaderElection,
    LeaderElector,
    TokenBucket,
)

from ._plane import REPO, ControlPlane
from ._support import profile_config, wait_until
from .conftest import Api

pytestmark = pytest.mark.anyio

_PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


async def _apply_rbac(api: Api) -> None:
    for doc in yaml.safe_load_all((REPO / "examples/kube/rbac.yaml").read_text()):
        path = _PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
        try:
            await api.client.request("POST", path, body=doc)
        except Exception as exc:  # applied by the other backend's run already
            if "AlreadyExists" not in str(exc):
                raise


async def test_scheduler_runs_with_the_example_rbac(plane: ControlPlane, api: Api) -> None:
    await _apply_rbac(api)
    token: dict[str, Any] = await api.client.request(
        "POST",
        "/api/v1/namespaces/kube-system/serviceaccounts/ksched/token",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    name = f"ksched-{api.ns}"
    await api.create_node(f"{api.ns}-n0", cpu="1")
    await api.create_pod("fits", scheduler=name)
    await api.create_pod("too-big", scheduler=name, cpu="2")
    config = KubeConfig(server=plane.url, token=token["status"]["token"], insecure=True)
    election = LeaderElection(
        resource_name="ksched", lease_duration=3.0, renew_deadline=2.0, retry_period=0.5
    )
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0))
        elector = LeaderElector(client, election)
        async with KubeCluster.open(
            client, scheduler_names=(name,), may_write=elector.is_leader
        ) as cluster:
            # v1.24 serves neither Coscheduling's CRD here nor resource.k8s.io/v1 (1.34+)
            # nor the Workload API (1.35+).
            assert cluster.missing_groups == {
                "scheduling.x-k8s.io/v1alpha1",
                "resource.k8s.io/v1",
                "scheduling.k8s.io/v1alpha1",
                "scheduling.k8s.io/v1alpha2",
                "scheduling.k8s.io/v1alpha3",
                "scheduling.k8s.io/v1beta1",
            }
            await cluster.wait_synced()

            async def lead() -> None:
                async with Scheduler.open(profile_config(name), cluster=cluster):
                    bound = await cluster.wait_bound(f"{api.ns}/fits", timeout=15)
                    await wait_until(lambda: cluster.writer.written_statuses >= 1, 10)
                    await wait_until(lambda: cluster.writer.written_events >= 2, 10)
                    await cluster.evict(bound)  # pods: delete, pods/status: patch

            with anyio.fail_after(30):
                await elector.run(lead)
    reasons = {e["reason"] for e in await api.events()}
    assert {"Scheduled", "FailedScheduling"} <= reasons
    pod = await api.pod("too-big")
    assert any(c["type"] == "PodScheduled" for c in pod["status"]["conditions"])
    victim = await api.pod("fits")
    assert victim["metadata"].get("deletionTimestamp")
    assert any(c["type"] == "DisruptionTarget" for c in victim["status"]["conditions"])


def test_rbac_example_is_valid_yaml() -> None:
    kinds = [
        d["kind"] for d in yaml.safe_load_all(Path(REPO / "examples/kube/rbac.yaml").read_text())
    ]
    assert set(kinds) == set(_PATHS)
    assert kinds[0] == "ServiceAccount"  # the subject exists before anything binds it
