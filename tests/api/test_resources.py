"""Effective pod requests: component-helpers resource PodRequests and the scheduler's
non-zero defaults (100m cpu, 200Mi memory)."""

from __future__ import annotations

import pytest

from ksched.api import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, Pod, pod_requests
from ksched.testing import make_pod

MI = 2**20


def test_defaults_are_upstream() -> None:
    assert DEFAULT_MILLI_CPU_REQUEST == 100
    assert DEFAULT_MEMORY_REQUEST == 200 * MI


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(make_pod("p").obj(), {}, id="no containers"),
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").req(cpu="500m").obj(),
            {"cpu": 1500, "memory": 1024 * MI},
            id="containers summed",
        ),
        pytest.param(
            make_pod("p").req(cpu="1").init_req(cpu="2").init_req(cpu="3", memory="1").obj(),
            {"cpu": 3000, "memory": 1},
            id="init containers by maximum",
        ),
        pytest.param(
            make_pod("p").req(cpu="2").init_req(cpu="1").obj(),
            {"cpu": 2000},
            id="init smaller than containers",
        ),
        pytest.param(
            make_pod("p").req(cpu="1").init_req(sidecar=True, cpu="500m").obj(),
            {"cpu": 1500},
            id="restartable sidecar added",
        ),
        pytest.param(
            # sidecar 1 runs through the later init container: 1 + 2 = 3 > 1 + 1 = 2
            make_pod("p").req(cpu="1").init_req(sidecar=True, cpu="1").init_req(cpu="2").obj(),
            {"cpu": 3000},
            id="init after sidecar includes sidecar",
        ),
        pytest.param(
            # init (2) before the sidecar does not add it: max(2, 1 + 1) = 2
            make_pod("p").req(cpu="1").init_req(cpu="2").init_req(sidecar=True, cpu="1").obj(),
            {"cpu": 2000},
            id="init before sidecar excludes sidecar",
        ),
        pytest.param(
            make_pod("p").req(cpu="1").overhead(cpu="250m", memory="10Mi").obj(),
            {"cpu": 1250, "memory": 10 * MI},
            id="overhead added",
        ),
        pytest.param(
            make_pod("p").req(cpu="1").init_req(cpu="4").overhead(cpu="1").obj(),
            {"cpu": 5000},
            id="overhead added after init maximum",
        ),
    ],
)
def test_pod_requests(pod: Pod, expected: dict[str, int]) -> None:
    assert pod_requests(pod) == expected


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            make_pod("p").req().obj(),
            {"cpu": 100, "memory": 200 * MI},
            id="empty container gets both defaults",
        ),
        pytest.param(
            make_pod("p").req(cpu="1").obj(),
            {"cpu": 1000, "memory": 200 * MI},
            id="memory default only",
        ),
        pytest.param(
            make_pod("p").req(memory="1Gi").req().obj(),
            {"cpu": 200, "memory": 1224 * MI},
            id="per container defaults summed",
        ),
        pytest.param(
            make_pod("p").req(cpu="0", memory="0").obj(),
            {"cpu": 0, "memory": 0},
            id="explicit zero kept",
        ),
        pytest.param(make_pod("p").obj(), {}, id="no containers"),
    ],
)
def test_non_zero_requests(pod: Pod, expected: dict[str, int]) -> None:
    assert pod_requests(pod, non_zero=True) == expected
