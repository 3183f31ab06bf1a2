"""The Kubernetes object model the scheduler reads."""

from ._cel import CelError as CelError
from ._cel import DeviceSelector as DeviceSelector
from ._cel import compile_selector as compile_selector
from ._dra import ALLOCATION_RESULTS_MAX_SIZE as ALLOCATION_RESULTS_MAX_SIZE
from ._dra import RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE as RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE
from ._dra import AllocationResult as AllocationResult
from ._dra import Device as Device
from ._dra import DeviceAttribute as DeviceAttribute
from ._dra import DeviceClass as DeviceClass
from ._dra import DeviceConstraint as DeviceConstraint
from ._dra import DeviceRequest as DeviceRequest
from ._dra import DeviceRequestAllocationResult as DeviceRequestAllocationResult
from ._dra import DeviceSubRequest as DeviceSubRequest
from ._dra import ResourceClaim as ResourceClaim
from ._dra import ResourceClaimConsumerReference as ResourceClaimConsumerReference
from ._dra import ResourceClaimSpec as ResourceClaimSpec
from ._dra import ResourceClaimStatus as ResourceClaimStatus
from ._dra import ResourceClaimTemplate as ResourceClaimTemplate
from ._dra import ResourcePool as ResourcePool
from ._dra import ResourceSlice as ResourceSlice
from ._dra import SemVer as SemVer
from ._manifest import KubeObject as KubeObject
from ._manifest import load_manifests as load_manifests
from ._manifest import parse_time as parse_time
from ._manifest import read_object as read_object
from ._model import Affinity as Affinity
from ._model import Container as Container
from ._model import ContainerImage as ContainerImage
from ._model import ContainerPort as ContainerPort
from ._model import Namespace as Namespace
from ._model import Node as Node
from ._model import NodeAffinity as NodeAffinity
from ._model import NodeSpec as NodeSpec
from ._model import NodeStatus as NodeStatus
from ._model import ObjectMeta as ObjectMeta
from ._model import OwnerReference as OwnerReference
from ._model import Pod as Pod
from ._model import PodAffinity as PodAffinity
from ._model import PodAffinityTerm as PodAffinityTerm
from ._model import PodAntiAffinity as PodAntiAffinity
from ._model import PodDisruptionBudget as PodDisruptionBudget
from ._model import PodGroup as PodGroup
from ._model import PodResourceClaim as PodResourceClaim
from ._model import PodResourceClaimStatus as PodResourceClaimStatus
from ._model import PodSpec as PodSpec
from ._model import PodStatus as PodStatus
from ._model import PreferredSchedulingTerm as PreferredSchedulingTerm
from ._model import PriorityClass as PriorityClass
from ._model import ReplicaSet as ReplicaSet
from ._model import ReplicationController as ReplicationController
from ._model import ResourceList as ResourceList
from ._model import Service as Service
from ._model import StatefulSet as StatefulSet
from ._model import Taint as Taint
from ._model import Toleration as Toleration
from ._model import TopologySpreadConstraint as TopologySpreadConstraint
from ._model import WeightedPodAffinityTerm as WeightedPodAffinityTerm
from ._quantity import InvalidQuantityError as InvalidQuantityError
from ._quantity import parse_quantity as parse_quantity
from ._quantity import quantity_value as quantity_value
from ._resources import DEFAULT_MEMORY_REQUEST as DEFAULT_MEMORY_REQUEST
from ._resources import DEFAULT_MILLI_CPU_REQUEST as DEFAULT_MILLI_CPU_REQUEST
from ._resources import pod_requests as pod_requests
from ._selectors import LabelMatcher as LabelMatcher
from ._selectors import LabelSelector as LabelSelector
from ._selectors import LabelSelectorRequirement as LabelSelectorRequirement
from ._selectors import NodeSelector as NodeSelector
from ._selectors import NodeSelectorRequirement as NodeSelectorRequirement
from ._selectors import NodeSelectorTerm as NodeSelectorTerm
from ._selectors import compile_requirements as compile_requirements

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "Affinity",
    "AllocationResult",
    "CelError",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "InvalidQuantityError",
    "KubeObject",
    "LabelMatcher",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodDisruptionBudget",
    "PodGroup",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourceList",
    "ResourcePool",
    "ResourceSlice",
    "SemVer",
    "Service",
    "StatefulSet",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "compile_requirements",
    "compile_selector",
    "load_manifests",
    "parse_quantity",
    "parse_time",
    "pod_requests",
    "quantity_value",
    "read_object",
]
