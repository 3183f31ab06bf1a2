"""The runner stores objects as the API server would: a creation time and a pod's uid."""

from __future__ import annotations

import attrs
import pytest
import trio
import trio.testing

from ksched.api import KubeObject, Node, ObjectMeta, Pod, PriorityClass
from ksched.config import SchedulerConfig
from ksched.simulate import Scenario
from ksched.simulate._runner import _Run, _stamped_meta
from ksched.testing import make_node, make_pod


def test_stamping_keeps_every_other_metadata_field() -> None:
    # Every field, present and future, holds its own marker: none may be dropped.
    values = {f.name: object() for f in attrs.fields(ObjectMeta)}
    meta = ObjectMeta(**values)  # type: ignore[arg-type]  # markers, not real values
    stamped = _stamped_meta(meta, "uid-1", 5.0)
    assert stamped == attrs.evolve(meta, uid="uid-1", creation_timestamp=5.0)


def _scenario() -> Scenario:
    return Scenario(name="s", source="", config=SchedulerConfig(), objects=(), steps=(), expect={})


def test_created_objects_get_the_creation_time_and_pods_a_uid() -> None:
    # As a manifest reads them: no uid, no creation time (but for one pod).
    given_node = attrs.evolve(make_node("n1").obj(), metadata=ObjectMeta(name="n1", namespace=""))
    given_web = attrs.evolve(make_pod("web").obj(), metadata=ObjectMeta(name="web"))
    stamped_pod = attrs.evolve(
        given_web, metadata=ObjectMeta(name="given", uid="u-9", creation_timestamp=1.0)
    )
    objects: list[KubeObject] = [
        given_node,
        given_web,
        stamped_pod,
        PriorityClass(name="high", value=10),
    ]

    async def main() -> None:
        run = _Run(_scenario(), 0, None)
        run.t0 = trio.current_time()
        await trio.sleep(7)
        run.create(objects)
        node = run.cluster.get_node("n1")
        web, given = run.cluster.get_pod("default/web"), run.cluster.get_pod("default/given")
        assert isinstance(node, Node) and isinstance(web, Pod) and isinstance(given, Pod)
        assert node.metadata.creation_timestamp == pytest.approx(7.0)
        assert node.metadata.uid == "" and node.status is given_node.status
        assert web.metadata.creation_timestamp == pytest.approx(7.0)
        assert web.metadata.uid == "default/web#1" and web.spec is given_web.spec
        assert given.metadata == stamped_pod.metadata  # kept as given
        assert run.created == {"default/web": "default/web#1", "default/given": "u-9"}

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
