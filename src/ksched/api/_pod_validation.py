"""Pod spec checks, as the API server makes them, for the fields ksched reads.

# pkg/apis/core/validation/validation.go (ValidatePodSpec, validateContainers,
# validateContainerPorts, ValidateResourceRequirements, ValidateTolerations,
# ValidateNodeSelector(Requirement), validateNodeFieldSelectorRequirement,
# validatePodAffinityTerm, ValidateTopologySpreadConstraints) and
# apimachinery's ValidateLabelSelector / ValidateLabels.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from ._names import (
    FieldProblem,
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    is_valid_port_num,
    not_supported,
    required,
)
from ._quantity import InvalidQuantityError, Quantity, parse_quantity
from ._scheduling_groups_manifest import scheduling_group_ref_problems

__all__ = [
    "HIGHEST_USER_PRIORITY",
    "NOT_NEGATIVE",
    "TAINT_EFFECTS",
    "as_int",
    "as_list",
    "as_map",
    "as_str",
    "label_name_problems",
    "label_selector_problems",
    "labels_problems",
    "non_negative_problems",
    "pod_spec_problems",
]

NOT_NEGATIVE = "must be greater than or equal to 0"
_NOT_POSITIVE = "must be greater than zero"
_NO_VALUES = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
_SECONDS_NEED_NO_EXECUTE = "effect must be 'NoExecute' when `tolerationSeconds` is set"
HIGHEST_USER_PRIORITY = 1_000_000_000
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def as_map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # what YAML gives; the ABC check below is slower
        return value
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ---- metadata ----------------------------------------------------------------------


def label_name_problems(key: str, path: str) -> Iterator[FieldProblem]:
    for msg in is_qualified_name(key):
        yield invalid(path, key, msg)


def labels_problems(labels: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    for key, value in labels.items():
        yield from label_name_problems(str(key), path)
        for msg in is_label_value(str(value) if value is not None else ""):
            yield invalid(path, value, msg)


def _parsed(text: str | int | float) -> Quantity | None:
    try:
        return parse_quantity(text)
    except InvalidQuantityError:
        return None  # the reader names the malformed quantity


def _quantities(raw: Mapping[str, Any]) -> dict[str, tuple[Quantity, Any]]:
    """Parsed quantities by resource (the malformed left out)."""
    out = {}
    for name, text in raw.items():
        value = _parsed(text) if isinstance(text, str | int | float) else None
        if value is not None:
            out[str(name)] = (value, text)
    return out


def _negative(quantities: Mapping[str, tuple[Quantity, Any]], path: str) -> Iterator[FieldProblem]:
    for name, (value, text) in quantities.items():
        if value.sign < 0:
            yield invalid(f"{path}[{name}]", text, NOT_NEGATIVE)


def non_negative_problems(raw: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    yield from _negative(_quantities(raw), path)


_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = _STANDARD_CONTAINER_RESOURCES | {
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "services.nodeports",
    "services.loadbalancers",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "requests.storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
}
"""pkg/apis/core/helper standardResources and standardContainerResources."""


@functools.lru_cache(maxsize=1024)
def _resource_name_errors(name: str) -> tuple[str, ...]:
    """validateContainerResourceName (after validateResourceName): a pure function of the
    name, and a pod names the same few resources in every container."""
    msgs = is_qualified_name(name)
    if msgs or "/" in name:
        return tuple(msgs)
    huge_pages = name.startswith("hugepages-")
    if name not in _STANDARD_RESOURCES and not huge_pages:
        msgs.append("must be a standard resource type or fully qualified")
    if name not in _STANDARD_CONTAINER_RESOURCES and not huge_pages:
        msgs.append("must be a standard resource for containers")
    return tuple(msgs)


def _resource_names(quantities: Mapping[str, Any], path: str, field: str) -> Iterator[FieldProblem]:
    for name in quantities:
        for msg in _resource_name_errors(name):
            yield invalid(f"{path}.{field}[{name}]", name, msg)


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources but huge pages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def _resources(res: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    if not res:
        return
    limits = _quantities(as_map(res.get("limits")))
    requests = _quantities(as_map(res.get("requests")))
    yield from _resource_names(limits, path, "limits")
    yield from _negative(limits, f"{path}.limits")
    yield from _resource_names(requests, path, "requests")
    yield from _negative(requests, f"{path}.requests")
    for name, (value, text) in requests.items():
        if name not in limits:
            continue
        limit, limit_text = limits[name]
        if value != limit and not _overcommit_allowed(name):
            yield invalid(
                f"{path}.requests", text, f"must be equal to {name} limit of {limit_text}"
            )
        elif value > limit:
            yield invalid(
                f"{path}.requests",
                text,
                f"must be less than or equal to {name} limit of {limit_text}",
            )


# ---- pod spec ----------------------------------------------------------------------


def _port_name_errors(name: str) -> list[str]:
    # IsValidPortName
    errs = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not all(c.islower() or c.isdigit() or c == "-" for c in name) or not name.isascii():
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= c <= "z" for c in name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _ports(ports: list[Any], path: str) -> Iterator[FieldProblem]:
    names: set[str] = set()
    for i, port in enumerate(ports):
        port = as_map(port)
        name = as_str(port.get("name"))
        if name:
            msgs = _port_name_errors(name)
            for msg in msgs:
                yield invalid(f"{path}[{i}].name", name, msg)
            if not msgs and name in names:
                yield duplicate(f"{path}[{i}].name", name)
            names.add(name)
        container_port = as_int(port.get("containerPort"))
        if not container_port:
            if port.get("containerPort") in (None, 0):
                yield required(f"{path}[{i}].containerPort")
        elif not 0 < container_port < 65536:
            for msg in is_valid_port_num(container_port):
                yield invalid(f"{path}[{i}].containerPort", container_port, msg)
        host_port = as_int(port.get("hostPort"))
        if host_port and not 0 < host_port < 65536:
            for msg in is_valid_port_num(host_port):
                yield invalid(f"{path}[{i}].hostPort", host_port, msg)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            yield not_supported(f"{path}[{i}].protocol", protocol, _PROTOCOLS)


def _containers(
    containers: list[Any], path: str, seen: set[str], *, need_one: bool
) -> Iterator[FieldProblem]:
    if need_one and not containers:
        yield required(path)
    for i, container in enumerate(containers):
        container = as_map(container)
        here = f"{path}[{i}]"
        name = as_str(container.get("name"))
        if not name:
            yield required(f"{here}.name")
        else:
            for msg in is_dns1123_label(name):
                yield invalid(f"{here}.name", name, msg)
            if name in seen:
                yield duplicate(f"{here}.name", name)
            seen.add(name)
        yield from _ports(as_list(container.get("ports")), f"{here}.ports")
        yield from _resources(as_map(container.get("resources")), f"{here}.resources")


def _tolerations(tolerations: list[Any], path: str) -> Iterator[FieldProblem]:
    for i, tol in enumerate(tolerations):
        tol = as_map(tol)
        here = f"{path}[{i}]"
        key, operator = as_str(tol.get("key")), tol.get("operator") or ""
        value, effect = as_str(tol.get("value")), as_str(tol.get("effect"))
        if key:
            yield from label_name_problems(key, f"{here}.key")
        if not key and operator != "Exists":
            yield invalid(
                f"{here}.operator",
                operator,
                'operator must be Exists when `key` is empty, which means "match all values '
                'and all keys"',
            )
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            yield invalid(
                f"{here}.effect",
                effect,
                _SECONDS_NEED_NO_EXECUTE,
            )
        if operator in ("Equal", ""):
            msgs = is_label_value(value)
            if msgs:
                yield invalid(f"{here}.operator", value, ";".join(msgs))
        elif operator == "Exists":
            if value:
                yield invalid(
                    f"{here}.operator", value, "value must be empty when `operator` is 'Exists'"
                )
        else:
            yield not_supported(f"{here}.operator", operator, ("Equal", "Exists"))
        if effect and effect not in TAINT_EFFECTS:
            yield not_supported(f"{here}.effect", effect, TAINT_EFFECTS)


def _node_requirement(req: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    operator, values = req.get("operator"), as_list(req.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            yield required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            yield forbidden(
                f"{path}.values",
                _NO_VALUES,
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            yield required(
                f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
    else:
        yield invalid(f"{path}.operator", operator or "", "not a valid selector operator")
    yield from label_name_problems(as_str(req.get("key")), f"{path}.key")


def _field_requirement(req: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    # validateNodeFieldSelectorRequirement: only metadata.name, In/NotIn one value
    operator = req.get("operator")
    if operator in ("In", "NotIn"):
        if len(as_list(req.get("values"))) != 1:
            yield required(
                f"{path}.values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    else:
        yield invalid(f"{path}.operator", operator or "", "not a valid selector operator")
    if req.get("key") != "metadata.name":
        yield invalid(f"{path}.key", req.get("key") or "", "not a valid field selector key")


def _node_selector_term(term: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        yield from _node_requirement(as_map(req), f"{path}.matchExpressions[{j}]")
    for j, req in enumerate(as_list(term.get("matchFields"))):
        yield from _field_requirement(as_map(req), f"{path}.matchFields[{j}]")


def label_selector_problems(sel: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    yield from labels_problems(as_map(sel.get("matchLabels")), f"{path}.matchLabels")
    for j, req in enumerate(as_list(sel.get("matchExpressions"))):
        req = as_map(req)
        here = f"{path}.matchExpressions[{j}]"
        operator, values = req.get("operator"), as_list(req.get("values"))
        if operator in ("In", "NotIn") and not values:
            yield required(f"{here}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif operator in ("Exists", "DoesNotExist") and values:
            yield forbidden(
                f"{here}.values",
                _NO_VALUES,
            )
        elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            yield invalid(f"{here}.operator", operator or "", "not a valid selector operator")
        yield from label_name_problems(as_str(req.get("key")), f"{here}.key")


def _weight(weight: Any, path: str) -> Iterator[FieldProblem]:
    value = as_int(weight)
    if value is not None and not 1 <= value <= 100:
        yield invalid(path, value, "must be in the range 1-100")


def _pod_affinity_term(term: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    topology_key = as_str(term.get("topologyKey"))
    if not topology_key:
        yield required(f"{path}.topologyKey", "can not be empty")
    else:
        yield from label_name_problems(topology_key, f"{path}.topologyKey")
    for field in ("labelSelector", "namespaceSelector"):
        if term.get(field) is not None:
            yield from label_selector_problems(as_map(term[field]), f"{path}.{field}")
    for namespace in as_list(term.get("namespaces")):
        for msg in is_dns1123_label(str(namespace)):
            yield invalid(f"{path}.namespace", namespace, msg)  # upstream's path


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _affinity(aff: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    node = as_map(aff.get("nodeAffinity"))
    if node.get(_REQUIRED) is not None:
        terms_path = f"{path}.nodeAffinity.{_REQUIRED}.nodeSelectorTerms"
        terms = as_list(as_map(node[_REQUIRED]).get("nodeSelectorTerms"))
        if not terms:
            yield required(terms_path, "must have at least one node selector term")
        for i, term in enumerate(terms):
            yield from _node_selector_term(as_map(term), f"{terms_path}[{i}]")
    for i, pref in enumerate(as_list(node.get(_PREFERRED))):
        here = f"{path}.nodeAffinity.{_PREFERRED}[{i}]"
        yield from _weight(as_map(pref).get("weight"), f"{here}.weight")
        yield from _node_selector_term(as_map(as_map(pref).get("preference")), f"{here}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        section = as_map(aff.get(kind))
        for i, term in enumerate(as_list(section.get(_REQUIRED))):
            yield from _pod_affinity_term(as_map(term), f"{path}.{kind}.{_REQUIRED}[{i}]")
        for i, weighted in enumerate(as_list(section.get(_PREFERRED))):
            here = f"{path}.{kind}.{_PREFERRED}[{i}]"
            yield from _weight(as_map(weighted).get("weight"), f"{here}.weight")
            yield from _pod_affinity_term(
                as_map(as_map(weighted).get("podAffinityTerm")), f"{here}.podAffinityTerm"
            )


def _spread(constraints: list[Any], path: str) -> Iterator[FieldProblem]:
    pairs = [
        (as_map(c).get("topologyKey"), as_map(c).get("whenUnsatisfiable")) for c in constraints
    ]
    for i, constraint in enumerate(constraints):
        c = as_map(constraint)
        here = f"{path}[{i}]"
        skew = as_int(c.get("maxSkew"))
        if skew is None or skew <= 0:
            yield invalid(f"{here}.maxSkew", c.get("maxSkew", 0), _NOT_POSITIVE)
        if not as_str(c.get("topologyKey")):
            yield required(f"{here}.topologyKey", "can not be empty")
        action = c.get("whenUnsatisfiable")
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            yield not_supported(
                f"{here}.whenUnsatisfiable", action or "", ("DoNotSchedule", "ScheduleAnyway")
            )
        if pairs[i] in pairs[i + 1 :]:
            yield duplicate(
                f"{here}.{{topologyKey, whenUnsatisfiable}}", f"{{{pairs[i][0]}, {pairs[i][1]}}}"
            )
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if (as_int(min_domains) or 0) <= 0:
                yield invalid(f"{here}.minDomains", min_domains, _NOT_POSITIVE)
            if action != "DoNotSchedule":
                yield invalid(
                    f"{here}.minDomains",
                    min_domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                )
        if c.get("labelSelector") is not None:
            yield from label_selector_problems(as_map(c["labelSelector"]), f"{here}.labelSelector")


def pod_spec_problems(
    spec: Mapping[str, Any], path: str, *, names: bool = True
) -> Iterator[FieldProblem]:
    """ValidatePodSpec, for the fields ksched reads (``path`` leads to the spec)."""
    seen: set[str] = set()
    yield from _containers(
        as_list(spec.get("containers")), f"{path}.containers", seen, need_one=True
    )
    yield from _containers(
        as_list(spec.get("initContainers")), f"{path}.initContainers", seen, need_one=False
    )
    yield from labels_problems(as_map(spec.get("nodeSelector")), f"{path}.nodeSelector")
    yield from _tolerations(as_list(spec.get("tolerations")), f"{path}.tolerations")
    yield from _affinity(as_map(spec.get("affinity")), f"{path}.affinity")
    yield from _spread(
        as_list(spec.get("topologySpreadConstraints")), f"{path}.topologySpreadConstraints"
    )
    yield from non_negative_problems(as_map(spec.get("overhead")), f"{path}.overhead")
    for field in ("nodeName", "schedulerName") if names else ("schedulerName",):
        value = as_str(spec.get(field))
        for msg in is_dns1123_subdomain(value) if value else ():
            yield invalid(f"{path}.{field}", value, msg)
    gates = [as_str(as_map(g).get("name")) for g in as_list(spec.get("schedulingGates"))]
    for i, gate in enumerate(gates):
        if not gate:
            yield required(f"{path}.schedulingGates[{i}].name")
        else:
            yield from label_name_problems(gate, f"{path}.schedulingGates[{i}].name")
            if gate in gates[:i]:
                yield duplicate(f"{path}.schedulingGates[{i}].name", gate)
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        yield not_supported(f"{path}.preemptionPolicy", policy, ("Never", "PreemptLowerPriority"))
    yield from scheduling_group_ref_problems(spec, path)


# ---- kinds -------------------------------------------------------------------------
