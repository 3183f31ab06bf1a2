"""Logs: one key=value (or JSON) line per scheduling failure, binds only with -v."""

from __future__ import annotations

import io
import json
import logging

import pytest

from ksched import InMemoryCluster, Scheduler
from ksched.observability import configure_logging
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _restore_logging() -> object:
    root = logging.getLogger("ksched")
    saved = root.handlers[:], root.level, root.propagate
    yield
    root.handlers[:], root.level, root.propagate = saved
    logging.getLogger("ksched.scheduler.binding").setLevel(logging.NOTSET)


async def _run() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(cluster=cluster):
        await cluster.add_node(make_node("n1").capacity(cpu="1", pods=10).obj())
        for i in range(3):
            await cluster.add_node(make_node(f"x{i}").capacity(cpu="1", pods=10).obj())
        await cluster.add_pod(make_pod("web").req(cpu="500m").obj())
        await cluster.add_pod(make_pod("huge").req(cpu="8").obj())
        await cluster.wait_bound("default/web", timeout=5)
        import anyio

        with anyio.fail_after(5):
            while "default/huge" not in cluster.conditions:
                await anyio.sleep(0.01)


async def test_default_verbosity_logs_one_line_per_failure() -> None:
    out = io.StringIO()
    configure_logging(0, "text", out)
    await _run()
    lines = out.getvalue().splitlines()
    failures = [line for line in lines if "Unable to schedule pod" in line]
    assert len(failures) == 1, lines
    assert "pod=default/huge" in failures[0] and "level=info" in failures[0]
    assert 'err="0/4 nodes are available: 4 Insufficient cpu.' in failures[0]
    assert not any("Successfully bound" in line for line in lines)


async def test_json_lines_and_binds_with_v() -> None:
    out = io.StringIO()
    configure_logging(1, "json", out)
    await _run()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    bound = [r for r in records if r["msg"] == "Successfully bound pod to node"]
    assert (
        bound and bound[0]["pod"] == "default/web" and bound[0]["node"] in {"n1", "x0", "x1", "x2"}
    )
    assert any(r["msg"].startswith("Unable to schedule pod") for r in records)
