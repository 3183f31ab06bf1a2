"""A pod placed on a node (the assumed pod) and the in-memory binding that writes it."""

from __future__ import annotations

import attrs
import pytest

from ksched.api._assign import assigned, is_assigned_copy
from ksched.cluster import InMemoryCluster
from ksched.testing import make_pod


def test_assigned_equals_evolve_and_shares_every_other_value() -> None:
    pod = make_pod("p").req(cpu="1").label("app", "web").obj()
    copy = assigned(pod, "n1")
    assert copy == attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name="n1"))
    assert copy.spec.containers is pod.spec.containers
    assert copy.metadata is pod.metadata and copy.status is pod.status
    assert pod.spec.node_name is None  # the original is untouched
    assert is_assigned_copy(copy, pod)


def test_a_copy_with_any_other_change_is_not_an_assigned_copy() -> None:
    pod = make_pod("p").req(cpu="1").obj()
    relabelled = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, labels={"a": "b"}))
    assert not is_assigned_copy(assigned(relabelled, "n1"), pod)
    rebuilt = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name="n1"))
    assert rebuilt == assigned(pod, "n1")
    assert is_assigned_copy(rebuilt, pod)  # evolve shares the field values too
    reprioritised = attrs.evolve(pod, spec=attrs.evolve(pod.spec, priority=7, node_name="n1"))
    assert not is_assigned_copy(reprioritised, pod)


@pytest.mark.anyio
async def test_binding_the_assumed_pod_stores_it_as_is() -> None:
    cluster = InMemoryCluster()
    await cluster.add_pod(make_pod("p").req(cpu="1").obj())
    stored = cluster.get_pod("default/p")
    assert stored is not None
    assumed = assigned(stored, "n1")
    cluster.bind_now(assumed, "n1")
    assert cluster.get_pod("default/p") is assumed


@pytest.mark.anyio
async def test_binding_after_an_update_writes_the_current_pod_with_its_node() -> None:
    cluster = InMemoryCluster()
    await cluster.add_pod(make_pod("p").req(cpu="1").obj())
    popped = cluster.get_pod("default/p")
    assert popped is not None
    assumed = assigned(popped, "n1")
    await cluster.add_pod(make_pod("p").req(cpu="1").label("tier", "db").obj())  # an update
    cluster.bind_now(assumed, "n1")
    bound = cluster.get_pod("default/p")
    assert bound is not None and bound is not assumed
    assert bound.spec.node_name == "n1" and bound.labels == {"tier": "db"}


@pytest.mark.anyio
async def test_binding_clears_the_nomination() -> None:
    cluster = InMemoryCluster()
    await cluster.add_pod(make_pod("p").req(cpu="1").obj())
    pod = cluster.get_pod("default/p")
    assert pod is not None
    await cluster.update_pod_status(pod, nominated_node_name="n2", condition=None)
    nominated = cluster.get_pod("default/p")
    assert nominated is not None and nominated.status.nominated_node_name == "n2"
    cluster.bind_now(assigned(nominated, "n1"), "n1")
    bound = cluster.get_pod("default/p")
    assert bound is not None
    assert (bound.spec.node_name, bound.status.nominated_node_name) == ("n1", None)
