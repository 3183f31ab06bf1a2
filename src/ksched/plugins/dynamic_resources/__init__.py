"""DynamicResources: the in-tree plugin that allocates devices for ResourceClaims.

# pkg/scheduler/framework/plugins/dynamicresources;
# staging/src/k8s.io/dynamic-resource-allocation/structured (the allocator)
"""

from ._allocator import AllocationError as AllocationError
from ._allocator import Allocator as Allocator
from ._allocator import gather_pools as gather_pools
from ._plugin import ERR_CANNOT_ALLOCATE as ERR_CANNOT_ALLOCATE
from ._plugin import ERR_CLAIM_IN_USE as ERR_CLAIM_IN_USE
from ._plugin import ERR_NOT_AVAILABLE as ERR_NOT_AVAILABLE
from ._plugin import DynamicResources as DynamicResources

__all__ = [
    "ERR_CANNOT_ALLOCATE",
    "ERR_CLAIM_IN_USE",
    "ERR_NOT_AVAILABLE",
    "AllocationError",
    "Allocator",
    "DynamicResources",
    "gather_pools",
]
