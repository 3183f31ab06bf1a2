"""NodeResourcesFit's names: plugin and state keys, reasons, scoring strategies."""

from __future__ import annotations

from typing import Final

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""Shape scores are given on 0..10 and scaled to 0..MAX_NODE_SCORE."""
MAX_UTILIZATION: Final = 100

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
