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
from ._duration import parse_duration as parse_duration
from ._loading import load_manifests as load_manifests
from ._manifest import KubeObject as KubeObject
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
from ._model import PodTemplate as PodTemplate
from ._model import PreferredSchedulingTerm as PreferredSchedulingTerm
from ._model import PriorityClass as PriorityClass
from ._model import ReplicaSet as ReplicaSet
from ._model import ReplicationController as ReplicationController
from ._model import ResourceList as ResourceList
from ._model import SchedulingGroupRef as SchedulingGroupRef
from ._model import Service as Service
from ._model import StatefulSet as StatefulSet
from ._model import Taint as Taint
from ._model import Toleration as Toleration
from ._model import TopologySpreadConstraint as TopologySpreadConstraint
from ._model import WeightedPodAffinityTerm as WeightedPodAffinityTerm
from ._names import FieldProblem as FieldProblem
from ._quantity import InvalidQuantityError as InvalidQuantityError
from ._quantity import Quantity as Quantity
from ._quantity import parse_quantity as parse_quantity
from ._quantity import quantity_value as quantity_value
from ._resources import DEFAULT_MEMORY_REQUEST as DEFAULT_MEMORY_REQUEST
from ._resources import DEFAULT_MILLI_CPU_REQUEST as DEFAULT_MILLI_CPU_REQUEST
from ._resources import pod_requests as pod_requests
from ._scheduling_groups import WORKLOAD_MAX_POD_GROUPS as WORKLOAD_MAX_POD_GROUPS
from ._scheduling_groups import GroupPolicy as GroupPolicy
from ._scheduling_groups import PodGroupTemplate as PodGroupTemplate
from ._scheduling_groups import SchedulingPodGroup as SchedulingPodGroup
from ._scheduling_groups import Workload as Workload
from ._scheduling_groups_manifest import store_kind as store_kind
from ._selectors import LabelMatcher as LabelMatcher
from ._selectors import LabelSelector as LabelSelector
from ._selectors import LabelSelectorRequirement as LabelSelectorRequirement
from ._selectors import NodeSelector as NodeSelector
from ._selectors import NodeSelectorRequirement as NodeSelectorRequirement
from ._selectors import NodeSelectorTerm as NodeSelectorTerm
from ._selectors import compile_requirements as compile_requirements
from ._storage import ANN_BIND_COMPLETED as ANN_BIND_COMPLETED
from ._storage import ANN_BOUND_BY_CONTROLLER as ANN_BOUND_BY_CONTROLLER
from ._storage import ANN_MIGRATED_PLUGINS as ANN_MIGRATED_PLUGINS
from ._storage import ANN_SELECTED_NODE as ANN_SELECTED_NODE
from ._storage import ANN_STORAGE_CLASS as ANN_STORAGE_CLASS
from ._storage import ClaimRef as ClaimRef
from ._storage import CSIDriver as CSIDriver
from ._storage import CSINode as CSINode
from ._storage import CSINodeDriver as CSINodeDriver
from ._storage import CSIStorageCapacity as CSIStorageCapacity
from ._storage import PersistentVolume as PersistentVolume
from ._storage import PersistentVolumeClaim as PersistentVolumeClaim
from ._storage import StorageClass as StorageClass
from ._storage import TopologySelectorTerm as TopologySelectorTerm
from ._storage import claim_class as claim_class
from ._storage import csi_attach_limit_key as csi_attach_limit_key
from ._storage import ephemeral_claim_name as ephemeral_claim_name
from ._storage import ephemeral_claim_owner_error as ephemeral_claim_owner_error
from ._storage import pod_claim_names as pod_claim_names
from ._storage import stateful_set_claim_name as stateful_set_claim_name
from ._storage import volume_class as volume_class
from ._validation import SYSTEM_PRIORITY_CLASSES as SYSTEM_PRIORITY_CLASSES
from ._validation import missing_priority_class as missing_priority_class
from ._validation import read_manifest as read_manifest
from ._validation import validate_and_read as validate_and_read
from ._validation import validate_object as validate_object
from ._volume import AWSElasticBlockStoreVolumeSource as AWSElasticBlockStoreVolumeSource
from ._volume import AzureDiskVolumeSource as AzureDiskVolumeSource
from ._volume import CinderVolumeSource as CinderVolumeSource
from ._volume import CSIVolumeSource as CSIVolumeSource
from ._volume import EphemeralVolumeSource as EphemeralVolumeSource
from ._volume import GCEPersistentDiskVolumeSource as GCEPersistentDiskVolumeSource
from ._volume import ISCSIVolumeSource as ISCSIVolumeSource
from ._volume import PersistentVolumeClaimVolumeSource as PersistentVolumeClaimVolumeSource
from ._volume import RBDVolumeSource as RBDVolumeSource
from ._volume import Volume as Volume
from ._workloads import POD_TEMPLATE_HASH_LABEL as POD_TEMPLATE_HASH_LABEL
from ._workloads import DaemonSet as DaemonSet
from ._workloads import Deployment as Deployment
from ._workloads import Job as Job
from ._workloads import compute_hash as compute_hash

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_MIGRATED_PLUGINS",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_CLASS",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "POD_TEMPLATE_HASH_LABEL",
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "SYSTEM_PRIORITY_CLASSES",
    "WORKLOAD_MAX_POD_GROUPS",
    "AWSElasticBlockStoreVolumeSource",
    "Affinity",
    "AllocationResult",
    "AzureDiskVolumeSource",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "CSIVolumeSource",
    "CelError",
    "CinderVolumeSource",
    "ClaimRef",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "DaemonSet",
    "Deployment",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "EphemeralVolumeSource",
    "FieldProblem",
    "GCEPersistentDiskVolumeSource",
    "GroupPolicy",
    "ISCSIVolumeSource",
    "InvalidQuantityError",
    "Job",
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
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimVolumeSource",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodDisruptionBudget",
    "PodGroup",
    "PodGroupTemplate",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSpec",
    "PodStatus",
    "PodTemplate",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "Quantity",
    "RBDVolumeSource",
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
    "SchedulingGroupRef",
    "SchedulingPodGroup",
    "SemVer",
    "Service",
    "StatefulSet",
    "StorageClass",
    "Taint",
    "Toleration",
    "TopologySelectorTerm",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
    "Workload",
    "claim_class",
    "compile_requirements",
    "compile_selector",
    "compute_hash",
    "csi_attach_limit_key",
    "ephemeral_claim_name",
    "ephemeral_claim_owner_error",
    "load_manifests",
    "missing_priority_class",
    "parse_duration",
    "parse_quantity",
    "parse_time",
    "pod_claim_names",
    "pod_requests",
    "quantity_value",
    "read_manifest",
    "read_object",
    "stateful_set_claim_name",
    "store_kind",
    "validate_and_read",
    "validate_object",
    "volume_class",
]
