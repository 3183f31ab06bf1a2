"""examples/gang_training.py runs to completion: every job lands, whole, and the log tells it;
on its virtual clock it tells the same story every run.

The runs in the test's own event loop are trio-specific and use pytest-trio's
``autojump_clock`` (a ``MockClock(autojump_threshold=0)``); ``run_on_virtual_clock`` makes
its own."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from trio.testing import MockClock

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gang_training.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gang_training", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # attrs resolves the module's annotations through it
    spec.loader.exec_module(module)
    return module


@pytest.mark.trio
async def test_gang_training_runs_every_job_to_completion(autojump_clock: MockClock) -> None:
    example = load_example()
    lines: list[str] = []
    records = await example.main(print_line=lines.append)
    log = "\n".join(lines)
    nodes = set(example.NODES)
    assert set(records) == {job.name for job in example.JOBS}
    for job in example.JOBS:
        record = records[job.name]
        # Landed whole: every worker bound, within the GPUs of the nodes it got.
        assert len(record.nodes) == job.workers, job.name
        assert set(record.nodes.values()) <= nodes
        per_node = {n: list(record.nodes.values()).count(n) for n in record.nodes.values()}
        assert all(count * job.gpus <= example.GPUS_PER_NODE for count in per_node.values())
        assert record.landed_at is not None and record.landed_at >= job.submit_at
        assert record.finished_at is not None
        assert record.finished_at == record.landed_at + job.runs_for  # virtual minutes
        assert re.search(rf"submit +{job.name}: {job.workers} workers x {job.gpus} GPU", log)
        assert re.search(rf"landed +{job.name}: all {job.workers} workers bound on gpu-", log)
        assert re.search(rf"finished {job.name}: {job.workers * job.gpus} GPUs free again", log)
    # The big jobs could not start at once: their members waited, were released, and the
    # reason was logged; the 16-GPU job ran only after every earlier GPU holder finished.
    assert re.search(r"wait +llm-pretrain: worker \d reserved gpu-\w, waits at Permit", log)
    assert re.search(r"release +llm-pretrain: worker \d gives back gpu-\w \(", log)
    assert re.search(r"blocked +llm-pretrain: 0/4 nodes are available: .*nvidia.com/gpu", log)
    assert re.search(r"blocked +vit-train: .*failed recently", log)
    assert records["vit-train"].releases > 0
    llm = records["llm-pretrain"]
    assert llm.landed_at is not None
    assert all(
        (records[name].finished_at or 0) <= llm.landed_at + 1
        for name in ("bert-finetune", "vit-train")
    )
    assert sorted(llm.nodes.values()) == sorted(nodes)  # 4 GPUs each: one worker per node
    # Gangs never landed partly: no job's "landed" line before its last worker's bind.
    assert log.index("landed   bert-finetune") < log.index("landed   llm-pretrain")
    assert "job            prio" in log


@pytest.mark.trio
async def test_gang_training_native_places_each_job_in_one_group_cycle(
    autojump_clock: MockClock,
) -> None:
    """--native: scheduling.k8s.io PodGroups. Each job lands whole with no Permit wait (the
    pod-group cycle places it in one pass or not at all) and a blocked job logs the group
    verdict; the 16-GPU job lands only after every earlier GPU holder finished."""
    example = load_example()
    lines: list[str] = []
    records = await example.main(print_line=lines.append, native=True)
    log = "\n".join(lines)
    for job in example.JOBS:
        record = records[job.name]
        assert len(record.nodes) == job.workers, job.name
        assert record.waits == 0 and record.releases == 0
        assert record.finished_at is not None
        assert record.finished_at == (record.landed_at or 0) + job.runs_for
    assert re.search(r"blocked +llm-pretrain: minCount \(4\) cannot be satisfied", log)
    llm = records["llm-pretrain"]
    assert llm.landed_at is not None
    assert all(
        (records[name].finished_at or 0) <= llm.landed_at + 1
        for name in ("bert-finetune", "vit-train")
    )
    assert sorted(llm.nodes.values()) == sorted(example.NODES)


def _run_as_a_user_does() -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def _minutes(log: str, verb: str, job: str) -> int:
    (found,) = re.findall(rf"^\[ *(\d+)m\] {verb} +{job}:", log, flags=re.MULTILINE)
    return int(found)


def test_the_virtual_clock_tells_the_same_story_every_run() -> None:
    example = load_example()
    first, second = _run_as_a_user_does(), _run_as_a_user_does()
    assert first == second
    for job in example.JOBS:
        # "runs 30m" means it: finished exactly runs_for minutes after it landed
        submitted = (
            f"{job.name}: {job.workers} workers x {job.gpus} GPU, priority {job.priority}, "
            f"runs {job.runs_for}m"
        )
        assert submitted in first
        assert _minutes(first, "submit", job.name) == job.submit_at
        landed = _minutes(first, "landed", job.name)
        assert _minutes(first, "finished", job.name) == landed + job.runs_for
    assert first.splitlines()[-6] == (
        "job            prio     gang  submit  landed  waited   done  Permit waits/releases"
    )
