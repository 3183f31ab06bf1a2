"""What every fault test ends with: every pod bound, bound once, no node over its cpu,
memory or pod count, ksched still serving."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ksched.api import quantity_value

__all__ = ["assert_drained", "scheduled_total"]


def _requests(pod: dict[str, Any]) -> Counter[str]:
    used: Counter[str] = Counter()
    for c in pod["spec"]["containers"]:
        for resource, value in (c.get("resources", {}).get("requests") or {}).items():
            used[resource] += quantity_value(resource, value)
    return used


def assert_drained(pods: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> None:
    """Every pod bound, to a node that exists, none over its allocatable cpu, memory or
    pod count."""
    unbound = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
    assert not unbound, f"{len(unbound)} pods unbound: {unbound[:5]}"
    allocatable = {n["metadata"]["name"]: n["status"]["allocatable"] for n in nodes}
    used: dict[str, Counter[str]] = {}
    for pod in pods:
        node = pod["spec"]["nodeName"]
        assert node in allocatable, f"{pod['metadata']['name']} bound to missing {node}"
        usage = used.setdefault(node, Counter())
        usage.update(_requests(pod))
        usage["pods"] += 1
    for node, usage in used.items():
        for resource in ("cpu", "memory"):
            limit = quantity_value(resource, allocatable[node][resource])
            assert usage[resource] <= limit, f"{node} over its {resource}: {usage[resource]}"
        assert usage["pods"] <= int(allocatable[node]["pods"]), f"{node} over its pod count"


def scheduled_total(metrics_text: str) -> int:
    """scheduler_schedule_attempts_total{result="scheduled"} over every profile: each pod
    is counted once when its binding succeeds, so more than the pods means a double bind."""
    found = re.findall(
        r'scheduler_schedule_attempts_total\{profile="[^"]+",result="scheduled"\} (\d+)\.0',
        metrics_text,
    )
    return sum(int(n) for n in found)
