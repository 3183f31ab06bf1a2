"""Reading resource.k8s.io/v1 manifests: DeviceClass, ResourceSlice, ResourceClaim(Template).

Errors name the object and the field, as the rest of ``_manifest`` does; a CEL selector
that does not compile, is longer than 10 KiB or is estimated to cost more than upstream's
limit is such an error, at the selector's field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._cel import CelError, compile_selector
from ._dra import (
    ALL,
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
    SemVer,
)
from ._fields import _Fields, _metadata, read_node_selector
from ._quantity import InvalidQuantityError, parse_quantity

__all__ = ["DRA_NAMESPACED", "DRA_READERS"]

_MODES = (EXACT_COUNT, ALL)
# pkg/apis/resource/validation/validation.go validateCELSelector.
ERR_TOO_COMPLEX = "too complex, exceeds cost limit"


def _selectors(f: _Fields) -> tuple[str, ...]:
    out: list[str] = []
    for i, sel in enumerate(f.items("selectors")):
        expression = sel.sub("cel").text("expression")
        where = f"selectors[{i}].cel.expression"
        if not expression:
            raise f.fail(where, "required")
        # validateCELSelector (pkg/apis/resource/validation): length, compile, then cost.
        if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            raise f.fail(
                where, f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
            )
        try:
            selector = compile_selector(expression)
        except CelError as exc:
            raise f.fail(where, str(exc)) from None
        if selector.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
            raise f.fail(where, ERR_TOO_COMPLEX)
        out.append(expression)
    return tuple(out)


def _count(f: _Fields, mode: str) -> int:
    count = f.integer("count", 1 if mode == EXACT_COUNT else None) or 0
    if mode == EXACT_COUNT and count <= 0:
        raise f.fail("count", f"must be greater than zero, got {count}")
    return count


def _sub_request(f: _Fields) -> DeviceSubRequest:
    mode = f.choice("allocationMode", _MODES, EXACT_COUNT) or EXACT_COUNT
    return DeviceSubRequest(
        name=f.text("name"),
        device_class_name=_class_name(f),
        selectors=_selectors(f),
        allocation_mode=mode,
        count=_count(f, mode),
    )


def _class_name(f: _Fields) -> str:
    name = f.text("deviceClassName")
    if not name:
        raise f.fail("deviceClassName", "required")
    return name


def _request(f: _Fields) -> DeviceRequest:
    name = f.text("name")
    if not name:
        raise f.fail("name", "required")
    alternatives = tuple(_sub_request(s) for s in f.items("firstAvailable"))
    if "exactly" in f.data:
        if alternatives:
            raise f.fail("firstAvailable", "exactly one of exactly, firstAvailable is allowed")
        e = f.sub("exactly")
        mode = e.choice("allocationMode", _MODES, EXACT_COUNT) or EXACT_COUNT
        return DeviceRequest(
            name=name,
            device_class_name=_class_name(e),
            selectors=_selectors(e),
            allocation_mode=mode,
            count=_count(e, mode),
            admin_access=e.flag("adminAccess"),
        )
    if not alternatives:
        raise f.fail("exactly", "exactly one of exactly, firstAvailable is required")
    return DeviceRequest(name=name, first_available=alternatives)


def _claim_spec(f: _Fields) -> ResourceClaimSpec:
    d = f.sub("devices")
    requests = tuple(_request(r) for r in d.items("requests"))
    names = {r.name for r in requests} | {
        f"{r.name}/{s.name}" for r in requests for s in r.first_available
    }
    constraints = []
    for i, c in enumerate(d.items("constraints")):
        wanted = c.strings("requests")
        for name in wanted:
            if name not in names:
                raise d.fail(f"constraints[{i}].requests", f"unknown request {name!r}")
        attribute = c.opt_str("matchAttribute")
        if attribute is not None and "/" not in attribute:
            raise c.fail("matchAttribute", "must be a fully qualified name (domain/id)")
        constraints.append(DeviceConstraint(requests=wanted, match_attribute=attribute))
    config = tuple(
        DeviceClaimConfiguration(requests=c.strings("requests"), opaque=dict(c.sub("opaque").data))
        for c in d.items("config")
    )
    return ResourceClaimSpec(requests=requests, constraints=tuple(constraints), config=config)


def _allocation(f: _Fields) -> AllocationResult | None:
    if not f.data:
        return None
    results = tuple(
        DeviceRequestAllocationResult(
            request=r.text("request"),
            driver=r.text("driver"),
            pool=r.text("pool"),
            device=r.text("device"),
            admin_access=r.flag("adminAccess"),
        )
        for r in f.sub("devices").items("results")
    )
    selector = read_node_selector(f.sub("nodeSelector")) if "nodeSelector" in f.data else None
    return AllocationResult(devices=results, node_selector=selector)


def _claim(f: _Fields) -> ResourceClaim:
    status = f.sub("status")
    reserved = tuple(
        ResourceClaimConsumerReference(
            resource=r.text("resource", "pods"), name=r.text("name"), uid=r.text("uid")
        )
        for r in status.items("reservedFor")
    )
    return ResourceClaim(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        spec=_claim_spec(f.sub("spec")),
        status=ResourceClaimStatus(
            allocation=_allocation(status.sub("allocation")), reserved_for=reserved
        ),
    )


def _template(f: _Fields) -> ResourceClaimTemplate:
    spec = f.sub("spec")
    return ResourceClaimTemplate(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        spec=_claim_spec(spec.sub("spec")),
        labels=spec.sub("metadata").string_map("labels"),
    )


def _device_class(f: _Fields) -> DeviceClass:
    spec = f.sub("spec")
    return DeviceClass(
        metadata=_metadata(f.sub("metadata"), namespaced=False),
        selectors=_selectors(spec),
        config=tuple(dict(c.data) for c in spec.items("config")),
    )


def _attribute(f: _Fields, name: str) -> DeviceAttribute:
    a = f.sub(name)
    kinds = [k for k in ("int", "bool", "string", "version") if k in a.data]
    if len(kinds) != 1:
        raise f.fail(name, "exactly one of int, bool, string, version is required")
    kind = kinds[0]
    if kind == "int":
        return DeviceAttribute(a.integer("int") or 0)
    if kind == "bool":
        return DeviceAttribute(a.flag("bool"))
    if kind == "string":
        return DeviceAttribute(a.text("string"))
    return DeviceAttribute(SemVer(a.text("version")))


def _device(f: _Fields) -> Device:
    name = f.text("name")
    if not name:
        raise f.fail("name", "required")
    attributes = {str(k): _attribute(f.sub("attributes"), str(k)) for k in _keys(f, "attributes")}
    capacity: dict[str, Any] = {}
    for key in _keys(f, "capacity"):
        c = f.sub("capacity").sub(str(key))
        raw: Any = c.data.get("value")
        try:
            capacity[str(key)] = parse_quantity(raw).to_fraction()
        except InvalidQuantityError:
            raise c.fail("value", f"invalid quantity {raw!r}") from None
    return Device(name=name, attributes=attributes, capacity=capacity)


def _keys(f: _Fields, field: str) -> list[Any]:
    return list(f.sub(field).data)


def _slice(f: _Fields) -> ResourceSlice:
    spec = f.sub("spec")
    driver = spec.text("driver")
    if not driver:
        raise spec.fail("driver", "required")
    pool = spec.sub("pool")
    if not pool.text("name"):
        raise pool.fail("name", "required")
    node_name = spec.opt_str("nodeName") or None
    node_selector = (
        read_node_selector(spec.sub("nodeSelector")) if "nodeSelector" in spec.data else None
    )
    all_nodes = spec.flag("allNodes")
    if sum((node_name is not None, node_selector is not None, all_nodes)) != 1:
        raise spec.fail("nodeName", "exactly one of nodeName, nodeSelector, allNodes is required")
    return ResourceSlice(
        metadata=_metadata(f.sub("metadata"), namespaced=False),
        driver=driver,
        pool=ResourcePool(
            name=pool.text("name"),
            generation=pool.integer("generation", 0) or 0,
            resource_slice_count=pool.integer("resourceSliceCount", 1) or 1,
        ),
        node_name=node_name,
        node_selector=node_selector,
        all_nodes=all_nodes,
        devices=tuple(_device(d) for d in spec.items("devices")),
    )


DRA_READERS: dict[str, Callable[[_Fields], Any]] = {
    "DeviceClass": _device_class,
    "ResourceSlice": _slice,
    "ResourceClaim": _claim,
    "ResourceClaimTemplate": _template,
}
DRA_NAMESPACED: set[str] = {"ResourceClaim", "ResourceClaimTemplate"}
