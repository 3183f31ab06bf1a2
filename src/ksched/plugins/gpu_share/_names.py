"""The names the GPU-sharing plugins read and write, spelled as the FGD artifact spells them.

# hkust-adsl/kubernetes-scheduler-simulator pkg/type/open-gpu-share/utils/const.go,
# pkg/type/const.go (plugin names), pkg/type/config.go (GPU selection methods)
"""

from __future__ import annotations

from typing import Final

GPU_MILLI: Final = "alibabacloud.com/gpu-milli"
"""Pod annotation: milli of each GPU the pod asks for (1000 = a whole GPU); on a node, its
capacity (the GPUs times 1000)."""
GPU_COUNT: Final = "alibabacloud.com/gpu-count"
"""Pod annotation: how many GPUs the pod asks for; on a node, its capacity (the GPUs)."""
GPU_INDEX: Final = "alibabacloud.com/gpu-index"
"""Pod annotation: the GPUs the pod was given (``"2"``, ``"0-1-2-3"``)."""
GPU_MODEL: Final = "alibabacloud.com/gpu-card-model"
"""Node label: the GPU model; pod annotation: the models it accepts (``"V100M16|V100M32"``)."""

MILLI: Final = 1000
"""Milli in one GPU."""
MAX_SPEC_CPU: Final = 128_000
"""CPU milli of the largest machine: the scale of DotProd's and BestFit's CPU dimension."""
MAX_SPEC_GPU: Final = 8_000
"""GPU milli of the largest machine: the scale of the GPU dimension."""
DEVICE_SEPARATOR: Final = "-"
MODEL_SEPARATOR: Final = "|"

MAX_GPUS_PER_NODE: Final = 64
"""A node reporting more GPUs than this is taken to have none (a bound on per-node work;
the artifact's machines have at most 8)."""
MAX_GPU_MILLI: Final = 1_000_000_000
"""A pod's gpu-milli is read as at most this (a bound that keeps every sum exact)."""

OPEN_GPU_SHARE: Final = "Open-Gpu-Share"
RANDOM_SCORE: Final = "RandomScore"
DOT_PRODUCT_SCORE: Final = "DotProductScore"
GPU_CLUSTERING_SCORE: Final = "GpuClusteringScore"
GPU_PACKING_SCORE: Final = "GpuPackingScore"
BEST_FIT_SCORE: Final = "BestFitScore"
FGD_SCORE: Final = "FGDScore"

SHARE_GPU: Final = "share-gpu"
"""The GPU affinity class of a pod that takes part of one GPU (GpuClustering)."""


def reject_reason(node_name: str) -> str:
    """Open-Gpu-Share's Filter reason for every node it rejects (``Node:<name>``)."""
    return "Node:" + node_name
