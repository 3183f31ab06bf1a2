"""GPU sharing (Open-Gpu-Share) and the six GPU Score policies of the FGD study.

# hkust-adsl/kubernetes-scheduler-simulator (USENIX ATC '23, "Beware of Fragmentation:
# Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent"):
# pkg/simulator/plugin/*.go, pkg/type/open-gpu-share/, pkg/utils/frag.go
A node has ``alibabacloud.com/gpu-count`` GPUs (capacity) of the model its
``alibabacloud.com/gpu-card-model`` label names, 1000 milli each; a pod asks, in
annotations, for ``alibabacloud.com/gpu-milli`` of each of ``alibabacloud.com/gpu-count``
GPUs, optionally of the models ``alibabacloud.com/gpu-card-model`` lists (``|``-separated),
and gets them in ``alibabacloud.com/gpu-index``: the artifact's files work unchanged.

| plugin | points | what |
| --- | --- | --- |
| ``Open-Gpu-Share`` | PreFilter, Filter, Reserve, PreBind | GPU fit, GPU choice, gpu-index |
| ``RandomScore`` | PreScore, Score | 01-Random |
| ``DotProductScore`` | Score | 02-DotProd |
| ``GpuClusteringScore`` | Score | 03-GpuClustering |
| ``GpuPackingScore`` | Score | 04-GpuPacking |
| ``BestFitScore`` | Score, NormalizeScore | 05-BestFit |
| ``FGDScore`` | Score | 06-FGD (typical pods as args) |

numpy serves the batch forms (see ``_columns`` and ``_frag``); nothing else is needed.
"""

from ._dot_product import DotProductScore as DotProductScore
from ._dot_product import DotProductScoreArgs as DotProductScoreArgs
from ._fgd import FGDScore as FGDScore
from ._fgd import FGDScoreArgs as FGDScoreArgs
from ._frag import NodeFrag as NodeFrag
from ._frag import TypicalPod as TypicalPod
from ._ledger import GpuLedger as GpuLedger
from ._ledger import NodeGpus as NodeGpus
from ._names import GPU_COUNT as GPU_COUNT
from ._names import GPU_INDEX as GPU_INDEX
from ._names import GPU_MILLI as GPU_MILLI
from ._names import GPU_MODEL as GPU_MODEL
from ._plugin import GpuSelector as GpuSelector
from ._plugin import OpenGpuShare as OpenGpuShare
from ._plugin import OpenGpuShareArgs as OpenGpuShareArgs
from ._plugin import PodAnnotator as PodAnnotator
from ._policies import BestFitScore as BestFitScore
from ._policies import GpuClusteringScore as GpuClusteringScore
from ._policies import GpuPackingScore as GpuPackingScore
from ._policies import GpuScoreError as GpuScoreError
from ._policies import RandomScore as RandomScore
from ._request import GpuRequest as GpuRequest
from ._request import gpu_request as gpu_request

__all__ = [
    "GPU_COUNT",
    "GPU_INDEX",
    "GPU_MILLI",
    "GPU_MODEL",
    "BestFitScore",
    "DotProductScore",
    "DotProductScoreArgs",
    "FGDScore",
    "FGDScoreArgs",
    "GpuClusteringScore",
    "GpuLedger",
    "GpuPackingScore",
    "GpuRequest",
    "GpuScoreError",
    "GpuSelector",
    "NodeFrag",
    "NodeGpus",
    "OpenGpuShare",
    "OpenGpuShareArgs",
    "PodAnnotator",
    "RandomScore",
    "TypicalPod",
    "gpu_request",
]
