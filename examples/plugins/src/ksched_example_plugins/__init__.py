"""Example out-of-tree plugins for ksched, one per use case of the scheduling framework.

Installed with ``pip install -e examples/plugins``, they register themselves under the
entry-point group ``ksched.plugins``; a scheduler configuration then names them like
in-tree plugins.
"""

from .dynamic_resource_binding import AttachError as AttachError
from .dynamic_resource_binding import DynamicResourceBinding as DynamicResourceBinding
from .dynamic_resource_binding import DynamicResourceBindingArgs as DynamicResourceBindingArgs
from .dynamic_resource_binding import ResourcePool as ResourcePool
from .gpu_card_type import GpuCardType as GpuCardType
from .gpu_card_type import GpuCardTypeArgs as GpuCardTypeArgs
from .machine_group import MachineGroup as MachineGroup
from .machine_group import MachineGroupArgs as MachineGroupArgs
from .sticky_node import StickyNode as StickyNode
from .sticky_node import StickyNodeArgs as StickyNodeArgs

__all__ = [
    "AttachError",
    "DynamicResourceBinding",
    "DynamicResourceBindingArgs",
    "GpuCardType",
    "GpuCardTypeArgs",
    "MachineGroup",
    "MachineGroupArgs",
    "ResourcePool",
    "StickyNode",
    "StickyNodeArgs",
]
