"""examples/evict_one.py: a PostFilter plugin on the typed Handle evicts the one pod that
frees the node, nominates it, and the preemptor lands there."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "evict_one.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evict_one", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_evict_one_frees_the_node_for_the_higher_priority_pod() -> None:
    lines = await load_example().main()
    assert lines[:2] == ["evicted: default/batch", "web -> n1"]
    assert "event: Preempted default/batch: Preempted by pod default/web on node n1" in lines
    assert lines[-1] == "event: Scheduled default/web: Successfully assigned default/web to n1"
