"""Dynamic Resource Allocation objects (resource.k8s.io/v1), as the scheduler reads them.

# staging/src/k8s.io/api/resource/v1/types.go: DeviceClass, ResourceSlice, ResourceClaim,
# ResourceClaimTemplate; core/v1 PodResourceClaim and PodResourceClaimStatus
Field names follow the API in snake_case; capacities are exact quantities (``Fraction``).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import attrs

from ._model import ObjectMeta
from ._selectors import NodeSelector

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "AllocationResult",
    "Device",
    "DeviceAttribute",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourcePool",
    "ResourceSlice",
    "SemVer",
]

# Limits from resource/v1 types.go.
ALLOCATION_RESULTS_MAX_SIZE = 32
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000

EXACT_COUNT = "ExactCount"
ALL = "All"


def _empty_attrs() -> dict[str, DeviceAttribute]:
    return {}


def _empty_capacity() -> dict[str, Fraction]:
    return {}


@attrs.frozen
class SemVer:
    """A semantic version attribute value (``versionValue``), kept as written."""

    text: str


AttributeValue = int | bool | str | SemVer


@attrs.frozen
class DeviceAttribute:
    """One attribute value: exactly one of int, bool, string or version."""

    value: AttributeValue


# ---- DeviceClass -------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class DeviceClass:
    """Cluster-scoped: CEL ``selectors`` every device of the class must match."""

    metadata: ObjectMeta
    selectors: tuple[str, ...] = ()
    config: tuple[Mapping[str, object], ...] = attrs.field(default=(), hash=False)

    @property
    def name(self) -> str:
        return self.metadata.name


# ---- ResourceSlice -----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ResourcePool:
    name: str
    generation: int = 0
    resource_slice_count: int = 1


@attrs.frozen(kw_only=True)
class Device:
    """A device a driver advertises: its name, attributes and capacity by qualified name."""

    name: str
    attributes: Mapping[str, DeviceAttribute] = attrs.field(factory=_empty_attrs, hash=False)
    capacity: Mapping[str, Fraction] = attrs.field(factory=_empty_capacity, hash=False)


@attrs.frozen(kw_only=True)
class ResourceSlice:
    """Devices of one pool of one driver, reachable from ``node_name``, the nodes
    ``node_selector`` selects, or ``all_nodes``."""

    metadata: ObjectMeta
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    devices: tuple[Device, ...] = ()

    @property
    def name(self) -> str:
        return self.metadata.name


# ---- ResourceClaim -----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class DeviceSubRequest:
    """One alternative of a ``firstAvailable`` request."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1


@attrs.frozen(kw_only=True)
class DeviceRequest:
    """A request: ``exactly`` (class, selectors, mode, count) or ``first_available``."""

    name: str
    device_class_name: str = ""
    selectors: tuple[str, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    first_available: tuple[DeviceSubRequest, ...] = ()


@attrs.frozen(kw_only=True)
class DeviceConstraint:
    """``matchAttribute``: the devices of ``requests`` (all when empty) share its value."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None


@attrs.frozen(kw_only=True)
class DeviceClaimConfiguration:
    requests: tuple[str, ...] = ()
    opaque: Mapping[str, object] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class ResourceClaimSpec:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()


@attrs.frozen(kw_only=True)
class DeviceRequestAllocationResult:
    """One allocated device: the request (``req`` or ``req/sub``) and the device's id."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False


@attrs.frozen(kw_only=True)
class AllocationResult:
    devices: tuple[DeviceRequestAllocationResult, ...] = ()
    node_selector: NodeSelector | None = None
    """Where the devices are reachable (None: everywhere)."""


@attrs.frozen(kw_only=True)
class ResourceClaimConsumerReference:
    resource: str = "pods"
    name: str = ""
    uid: str = ""


@attrs.frozen(kw_only=True)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()


@attrs.frozen(kw_only=True)
class ResourceClaim:
    """A claim for devices; allocated by the scheduler, reserved for the pods using it."""

    metadata: ObjectMeta
    spec: ResourceClaimSpec = ResourceClaimSpec()
    status: ResourceClaimStatus = ResourceClaimStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def uid(self) -> str:
        return self.metadata.uid or self.key


@attrs.frozen(kw_only=True)
class ResourceClaimTemplate:
    """A claim spec from which the resourceclaim controller makes one claim per pod."""

    metadata: ObjectMeta
    spec: ResourceClaimSpec = ResourceClaimSpec()
    labels: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    """Labels for the claims made from it (``spec.metadata.labels``)."""

    @property
    def name(self) -> str:
        return self.metadata.name
