"""The expert's API: the node table, batch forms, pod signatures and fast-path promises.

# pkg/scheduler/framework/runtime/signature.go, staging/.../framework/signers.go
Batch forms (``filter_batch``, ``score_batch``, ...) judge every node at once over the
snapshot's columnar :class:`NodeTable` and must give exactly the per-node results.
``sign_pod`` fragments let opportunistic batching reuse an equal pod's ranking; a
plugin's :class:`Capabilities` tell the fast paths which of its answers they may keep
between cycles. ``run_chunked`` fans per-node work out across at most ``parallelism``
workers. See docs/plugins.md, "Batch forms".
"""

from ._batch_protocols import BatchFilterPlugin as BatchFilterPlugin
from ._batch_protocols import BatchFilterStatuses as BatchFilterStatuses
from ._batch_protocols import BatchFilterStatusGroups as BatchFilterStatusGroups
from ._batch_protocols import BatchScoreExtensions as BatchScoreExtensions
from ._batch_protocols import BatchScorePlugin as BatchScorePlugin
from ._batch_protocols import UniformScorePlugin as UniformScorePlugin
from ._capabilities import POD_HOST_PORTS as POD_HOST_PORTS
from ._capabilities import POD_NODE_AFFINITY as POD_NODE_AFFINITY
from ._capabilities import POD_NODE_NAME as POD_NODE_NAME
from ._capabilities import POD_NODE_SELECTOR as POD_NODE_SELECTOR
from ._capabilities import POD_RESOURCES as POD_RESOURCES
from ._capabilities import POD_TOLERATIONS as POD_TOLERATIONS
from ._capabilities import Capabilities as Capabilities
from ._capabilities import PodField as PodField
from ._parallel import run_chunked as run_chunked
from ._pod_index import PREFERRED_AFFINITY as PREFERRED_AFFINITY
from ._pod_index import PREFERRED_ANTI_AFFINITY as PREFERRED_ANTI_AFFINITY
from ._pod_index import REQUIRED_AFFINITY as REQUIRED_AFFINITY
from ._pod_index import REQUIRED_ANTI_AFFINITY as REQUIRED_ANTI_AFFINITY
from ._pod_index import Domains as Domains
from ._pod_index import PodIndex as PodIndex
from ._pod_index import Requirement as Requirement
from ._pod_index import SelectorView as SelectorView
from ._pod_index import TermGroup as TermGroup
from ._signature import HOST_PORTS as HOST_PORTS
from ._signature import IMAGE_NAMES as IMAGE_NAMES
from ._signature import LABELS as LABELS
from ._signature import NODE_AFFINITY as NODE_AFFINITY
from ._signature import NODE_NAME as NODE_NAME
from ._signature import NODE_SELECTOR as NODE_SELECTOR
from ._signature import RESOURCES as RESOURCES
from ._signature import TOLERATIONS as TOLERATIONS
from ._signature import VOLUMES as VOLUMES
from ._signature import PodSignature as PodSignature
from ._signature import SignFragment as SignFragment
from ._signature import SignPlugin as SignPlugin
from ._signature import host_ports_signer as host_ports_signer
from ._signature import node_selector_signer as node_selector_signer
from ._signature import resources_signer as resources_signer
from ._signature import tolerations_signer as tolerations_signer
from ._signature import volumes_signer as volumes_signer
from ._table import BoolArray as BoolArray
from ._table import IntArray as IntArray
from ._table import NodeRows as NodeRows
from ._table import NodeTable as NodeTable
from ._types import AffinityTerm as AffinityTerm
from ._types import HostPortInfo as HostPortInfo
from ._types import ImageStateSummary as ImageStateSummary
from ._types import WeightedAffinityTerm as WeightedAffinityTerm

__all__ = [
    "HOST_PORTS",
    "IMAGE_NAMES",
    "LABELS",
    "NODE_AFFINITY",
    "NODE_NAME",
    "NODE_SELECTOR",
    "POD_HOST_PORTS",
    "POD_NODE_AFFINITY",
    "POD_NODE_NAME",
    "POD_NODE_SELECTOR",
    "POD_RESOURCES",
    "POD_TOLERATIONS",
    "PREFERRED_AFFINITY",
    "PREFERRED_ANTI_AFFINITY",
    "REQUIRED_AFFINITY",
    "REQUIRED_ANTI_AFFINITY",
    "RESOURCES",
    "TOLERATIONS",
    "VOLUMES",
    "AffinityTerm",
    "BatchFilterPlugin",
    "BatchFilterStatusGroups",
    "BatchFilterStatuses",
    "BatchScoreExtensions",
    "BatchScorePlugin",
    "BoolArray",
    "Capabilities",
    "Domains",
    "HostPortInfo",
    "ImageStateSummary",
    "IntArray",
    "NodeRows",
    "NodeTable",
    "PodField",
    "PodIndex",
    "PodSignature",
    "Requirement",
    "SelectorView",
    "SignFragment",
    "SignPlugin",
    "TermGroup",
    "UniformScorePlugin",
    "WeightedAffinityTerm",
    "host_ports_signer",
    "node_selector_signer",
    "resources_signer",
    "run_chunked",
    "tolerations_signer",
    "volumes_signer",
]
