"""NodeResourcesFit: does the node have room for the pod's requests; how full would it be.

# pkg/scheduler/framework/plugins/noderesources (fit.go, resource_allocation.go,
# least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go)
``_fits`` holds the request and the Fits verdict, ``_args`` the arguments, ``_scorer``
the allocation scorer shared with NodeResourcesBalancedAllocation, ``_plugin`` the plugin.
"""

from ._args import DEFAULT_RESOURCES as DEFAULT_RESOURCES
from ._args import NodeResourcesFitArgs as NodeResourcesFitArgs
from ._args import ResourceSpec as ResourceSpec
from ._args import ScoringStrategy as ScoringStrategy
from ._args import UtilizationShapePoint as UtilizationShapePoint
from ._args import parse_resource_specs as parse_resource_specs
from ._args import validate_fit_args as validate_fit_args
from ._constants import LEAST_ALLOCATED as LEAST_ALLOCATED
from ._constants import MOST_ALLOCATED as MOST_ALLOCATED
from ._constants import NAME as NAME
from ._constants import PRE_FILTER_STATE_KEY as PRE_FILTER_STATE_KEY
from ._constants import PRE_SCORE_STATE_KEY as PRE_SCORE_STATE_KEY
from ._constants import REQUESTED_TO_CAPACITY_RATIO as REQUESTED_TO_CAPACITY_RATIO
from ._fits import InsufficientResource as InsufficientResource
from ._fits import PodResourceRequest as PodResourceRequest
from ._fits import compute_pod_resource_request as compute_pod_resource_request
from ._fits import fits as fits
from ._fits import fits_request as fits_request
from ._names import is_extended_resource_name as is_extended_resource_name
from ._names import is_scalar_resource_name as is_scalar_resource_name
from ._plugin import NodeResourcesFit as NodeResourcesFit
from ._scorer import ResourceAllocationScorer as ResourceAllocationScorer
from ._scorer import broken_linear_function as broken_linear_function

__all__ = [
    "DEFAULT_RESOURCES",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "REQUESTED_TO_CAPACITY_RATIO",
    "InsufficientResource",
    "NodeResourcesFit",
    "NodeResourcesFitArgs",
    "PodResourceRequest",
    "ResourceAllocationScorer",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "broken_linear_function",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "parse_resource_specs",
    "validate_fit_args",
]
