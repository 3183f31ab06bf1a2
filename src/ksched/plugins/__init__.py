"""The in-tree plugins, by their upstream names.

Each plugin class has ``name`` and a classmethod ``new(args, handle)``; the registry
imports a plugin's module only when a profile uses it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ..framework import PluginFactory

__all__ = ["IN_TREE", "in_tree_factory"]

IN_TREE: Mapping[str, str] = {
    "PrioritySort": "priority_sort:PrioritySort",
    "SchedulingGates": "scheduling_gates:SchedulingGates",
    "DefaultBinder": "default_binder:DefaultBinder",
    "NodeName": "node_name:NodeName",
    "NodeUnschedulable": "node_unschedulable:NodeUnschedulable",
    "NodePorts": "node_ports:NodePorts",
    "NodeResourcesFit": "node_resources_fit:NodeResourcesFit",
    "NodeResourcesBalancedAllocation": (
        "node_resources_balanced_allocation:NodeResourcesBalancedAllocation"
    ),
    "NodeAffinity": "node_affinity:NodeAffinity",
    "TaintToleration": "taint_toleration:TaintToleration",
    "ImageLocality": "image_locality:ImageLocality",
    "InterPodAffinity": "inter_pod_affinity:InterPodAffinity",
    "PodTopologySpread": "pod_topology_spread:PodTopologySpread",
    "DefaultPreemption": "default_preemption:DefaultPreemption",
    "Coscheduling": "coscheduling:Coscheduling",
    "GangScheduling": "gang_scheduling:GangScheduling",
    "VolumeRestrictions": "volume_restrictions:VolumeRestrictions",
    "NodeVolumeLimits": "node_volume_limits:NodeVolumeLimits",
    "VolumeBinding": "volume_binding:VolumeBinding",
    "VolumeZone": "volume_zone:VolumeZone",
    "DynamicResources": "dynamic_resources:DynamicResources",
    # GPU sharing and the FGD study's policies, under the artifact's names (gpu_share/)
    "Open-Gpu-Share": "gpu_share:OpenGpuShare",
    "RandomScore": "gpu_share:RandomScore",
    "DotProductScore": "gpu_share:DotProductScore",
    "GpuClusteringScore": "gpu_share:GpuClusteringScore",
    "GpuPackingScore": "gpu_share:GpuPackingScore",
    "BestFitScore": "gpu_share:BestFitScore",
    "FGDScore": "gpu_share:FGDScore",
}


def in_tree_factory(name: str) -> PluginFactory | None:
    """The factory of the in-tree plugin ``name`` (None when there is none)."""
    target = IN_TREE.get(name)
    if target is None:
        return None
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(f"{__name__}.{module_name}")
    factory: PluginFactory = getattr(module, attr).new
    return factory
