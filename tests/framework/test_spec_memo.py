"""Values worked out from a pod's spec, kept for the pods that share the spec."""

from __future__ import annotations

import attrs

from ksched import Pod, Scheduler
from ksched.framework import SpecMemo
from ksched.testing import make_pod


def test_pods_sharing_a_spec_share_the_value() -> None:
    made: list[str] = []

    def cpu(pod: Pod) -> int:
        made.append(pod.name)
        return len(pod.spec.containers)

    memo = SpecMemo(cpu)
    base = make_pod("a").req(cpu="1").obj()
    twin = attrs.evolve(base, metadata=attrs.evolve(base.metadata, name="b"))
    assert memo(base) == memo(twin) == 1
    assert made == ["a"]
    # An equal spec that is another object is worked out again (identity, not equality).
    other = make_pod("c").req(cpu="1").obj()
    assert memo(other) == 1
    assert made == ["a", "c"]


def test_the_row_key_follows_the_spec() -> None:
    pod_row_key = Scheduler().frameworks["default-scheduler"].row_key
    base = make_pod("a").req(cpu="1").obj()
    twin = attrs.evolve(base, metadata=attrs.evolve(base.metadata, name="b"))
    bigger = make_pod("a").req(cpu="2").obj()
    assert pod_row_key(twin) is pod_row_key(base)
    assert pod_row_key(bigger) != pod_row_key(base)
