"""What the API server rejects in the objects ksched reads, in its words.

# pkg/apis/core/validation/validation.go (ValidateObjectMeta, ValidatePodSpec,
# validateContainers, validateContainerPorts, ValidateResourceRequirements,
# ValidateTolerations, ValidateNodeSelector(Requirement), validatePodAffinityTerm,
# ValidateTopologySpreadConstraints, ValidateNode taints), pkg/apis/apps/validation
# (selector and template labels, replicas), pkg/apis/batch/validation (Job),
# pkg/apis/policy/validation (PodDisruptionBudget), pkg/apis/scheduling/validation
# (PriorityClass) and plugin/pkg/admission/priority (a missing PriorityClass).

``validate_object`` checks one object in its dict form and returns every problem;
it never raises on a malformed shape (the reader in ``_manifest`` reports those).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
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
from ._quantity import InvalidQuantityError, parse_quantity
from ._strict import API_VERSIONS, unknown_fields

__all__ = ["SYSTEM_PRIORITY_CLASSES", "missing_priority_class", "validate_object"]

SYSTEM_PRIORITY_CLASSES: Mapping[str, int] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
"""The PriorityClasses every cluster has (pkg/apis/scheduling/types.go)."""

_NOT_NEGATIVE = "must be greater than or equal to 0"
_NOT_POSITIVE = "must be greater than zero"
_NO_VALUES = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
_SECONDS_NEED_NO_EXECUTE = "effect must be 'NoExecute' when `tolerationSeconds` is set"
_HIGHEST_USER_PRIORITY = 1_000_000_000
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # what YAML gives; the ABC check below is slower
        return value
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ---- metadata ----------------------------------------------------------------------


def _label_name(key: str, path: str) -> Iterator[FieldProblem]:
    for msg in is_qualified_name(key):
        yield invalid(path, key, msg)


def _labels(labels: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    for key, value in labels.items():
        yield from _label_name(str(key), path)
        for msg in is_label_value(str(value) if value is not None else ""):
            yield invalid(path, value, msg)


def _meta(
    meta: Mapping[str, Any], *, namespaced: bool, label_name: bool, names: bool
) -> Iterator[FieldProblem]:
    name = _str(meta.get("name"))
    if not name:
        yield required("metadata.name", "name or generateName is required")
    elif names:
        check = is_dns1123_label if label_name else is_dns1123_subdomain
        for msg in check(name):
            yield invalid("metadata.name", name, msg)
    namespace = _str(meta.get("namespace"))
    if namespaced and namespace:
        for msg in is_dns1123_label(namespace):
            yield invalid("metadata.namespace", namespace, msg)
    yield from _labels(_map(meta.get("labels")), "metadata.labels")
    for key in _map(meta.get("annotations")):
        for msg in is_qualified_name(str(key).lower()):
            yield invalid("metadata.annotations", key, msg)


# ---- quantities --------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _parsed(text: str | int | float) -> Fraction | None:
    try:
        return parse_quantity(text)
    except InvalidQuantityError:
        return None  # the reader names the malformed quantity


def _quantities(raw: Mapping[str, Any]) -> dict[str, tuple[Fraction, Any]]:
    """Parsed quantities by resource (the malformed left out)."""
    out = {}
    for name, text in raw.items():
        value = _parsed(text) if isinstance(text, str | int | float) else None
        if value is not None:
            out[str(name)] = (value, text)
    return out


def _negative(quantities: Mapping[str, tuple[Fraction, Any]], path: str) -> Iterator[FieldProblem]:
    for name, (value, text) in quantities.items():
        if value < 0:
            yield invalid(f"{path}[{name}]", text, _NOT_NEGATIVE)


def _non_negative(raw: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    yield from _negative(_quantities(raw), path)


def _resources(res: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    if not res:
        return
    limits = _quantities(_map(res.get("limits")))
    requests = _quantities(_map(res.get("requests")))
    yield from _negative(limits, f"{path}.limits")
    yield from _negative(requests, f"{path}.requests")
    for name, (value, text) in requests.items():
        if name in limits and value > limits[name][0]:
            limit_text = limits[name][1]
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
        port = _map(port)
        here = f"{path}[{i}]"
        name = _str(port.get("name"))
        if name:
            msgs = _port_name_errors(name)
            for msg in msgs:
                yield invalid(f"{here}.name", name, msg)
            if not msgs and name in names:
                yield duplicate(f"{here}.name", name)
            names.add(name)
        container_port = _int(port.get("containerPort"))
        if not container_port:
            if port.get("containerPort") in (None, 0):
                yield required(f"{here}.containerPort")
        else:
            for msg in is_valid_port_num(container_port):
                yield invalid(f"{here}.containerPort", container_port, msg)
        host_port = _int(port.get("hostPort"))
        if host_port:
            for msg in is_valid_port_num(host_port):
                yield invalid(f"{here}.hostPort", host_port, msg)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            yield not_supported(f"{here}.protocol", protocol, _PROTOCOLS)


def _containers(
    containers: list[Any], path: str, seen: set[str], *, need_one: bool
) -> Iterator[FieldProblem]:
    if need_one and not containers:
        yield required(path)
    for i, container in enumerate(containers):
        container = _map(container)
        here = f"{path}[{i}]"
        name = _str(container.get("name"))
        if not name:
            yield required(f"{here}.name")
        else:
            for msg in is_dns1123_label(name):
                yield invalid(f"{here}.name", name, msg)
            if name in seen:
                yield duplicate(f"{here}.name", name)
            seen.add(name)
        yield from _ports(_list(container.get("ports")), f"{here}.ports")
        yield from _resources(_map(container.get("resources")), f"{here}.resources")


def _tolerations(tolerations: list[Any], path: str) -> Iterator[FieldProblem]:
    for i, tol in enumerate(tolerations):
        tol = _map(tol)
        here = f"{path}[{i}]"
        key, operator = _str(tol.get("key")), tol.get("operator") or ""
        value, effect = _str(tol.get("value")), _str(tol.get("effect"))
        if key:
            yield from _label_name(key, f"{here}.key")
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
        if effect and effect not in _TAINT_EFFECTS:
            yield not_supported(f"{here}.effect", effect, _TAINT_EFFECTS)


def _node_requirement(req: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    operator, values = req.get("operator"), _list(req.get("values"))
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
    yield from _label_name(_str(req.get("key")), f"{path}.key")


def _field_requirement(req: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    # validateNodeFieldSelectorRequirement: only metadata.name, In/NotIn one value
    operator = req.get("operator")
    if operator in ("In", "NotIn"):
        if len(_list(req.get("values"))) != 1:
            yield required(
                f"{path}.values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    else:
        yield invalid(f"{path}.operator", operator or "", "not a valid selector operator")
    if req.get("key") != "metadata.name":
        yield invalid(f"{path}.key", req.get("key") or "", "not a valid field selector key")


def _node_selector_term(term: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    for j, req in enumerate(_list(term.get("matchExpressions"))):
        yield from _node_requirement(_map(req), f"{path}.matchExpressions[{j}]")
    for j, req in enumerate(_list(term.get("matchFields"))):
        yield from _field_requirement(_map(req), f"{path}.matchFields[{j}]")


def _label_selector(sel: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    yield from _labels(_map(sel.get("matchLabels")), f"{path}.matchLabels")
    for j, req in enumerate(_list(sel.get("matchExpressions"))):
        req = _map(req)
        here = f"{path}.matchExpressions[{j}]"
        operator, values = req.get("operator"), _list(req.get("values"))
        if operator in ("In", "NotIn") and not values:
            yield required(f"{here}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif operator in ("Exists", "DoesNotExist") and values:
            yield forbidden(
                f"{here}.values",
                _NO_VALUES,
            )
        elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            yield invalid(f"{here}.operator", operator or "", "not a valid selector operator")
        yield from _label_name(_str(req.get("key")), f"{here}.key")


def _weight(weight: Any, path: str) -> Iterator[FieldProblem]:
    value = _int(weight)
    if value is not None and not 1 <= value <= 100:
        yield invalid(path, value, "must be in the range 1-100")


def _pod_affinity_term(term: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    topology_key = _str(term.get("topologyKey"))
    if not topology_key:
        yield required(f"{path}.topologyKey", "can not be empty")
    else:
        yield from _label_name(topology_key, f"{path}.topologyKey")
    for field in ("labelSelector", "namespaceSelector"):
        if term.get(field) is not None:
            yield from _label_selector(_map(term[field]), f"{path}.{field}")
    for namespace in _list(term.get("namespaces")):
        for msg in is_dns1123_label(str(namespace)):
            yield invalid(f"{path}.namespace", namespace, msg)  # upstream's path


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _affinity(aff: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    node = _map(aff.get("nodeAffinity"))
    if node.get(_REQUIRED) is not None:
        terms_path = f"{path}.nodeAffinity.{_REQUIRED}.nodeSelectorTerms"
        terms = _list(_map(node[_REQUIRED]).get("nodeSelectorTerms"))
        if not terms:
            yield required(terms_path, "must have at least one node selector term")
        for i, term in enumerate(terms):
            yield from _node_selector_term(_map(term), f"{terms_path}[{i}]")
    for i, pref in enumerate(_list(node.get(_PREFERRED))):
        here = f"{path}.nodeAffinity.{_PREFERRED}[{i}]"
        yield from _weight(_map(pref).get("weight"), f"{here}.weight")
        yield from _node_selector_term(_map(_map(pref).get("preference")), f"{here}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        section = _map(aff.get(kind))
        for i, term in enumerate(_list(section.get(_REQUIRED))):
            yield from _pod_affinity_term(_map(term), f"{path}.{kind}.{_REQUIRED}[{i}]")
        for i, weighted in enumerate(_list(section.get(_PREFERRED))):
            here = f"{path}.{kind}.{_PREFERRED}[{i}]"
            yield from _weight(_map(weighted).get("weight"), f"{here}.weight")
            yield from _pod_affinity_term(
                _map(_map(weighted).get("podAffinityTerm")), f"{here}.podAffinityTerm"
            )


def _spread(constraints: list[Any], path: str) -> Iterator[FieldProblem]:
    pairs = [(_map(c).get("topologyKey"), _map(c).get("whenUnsatisfiable")) for c in constraints]
    for i, constraint in enumerate(constraints):
        c = _map(constraint)
        here = f"{path}[{i}]"
        skew = _int(c.get("maxSkew"))
        if skew is None or skew <= 0:
            yield invalid(f"{here}.maxSkew", c.get("maxSkew", 0), _NOT_POSITIVE)
        if not _str(c.get("topologyKey")):
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
            if (_int(min_domains) or 0) <= 0:
                yield invalid(f"{here}.minDomains", min_domains, _NOT_POSITIVE)
            if action != "DoNotSchedule":
                yield invalid(
                    f"{here}.minDomains",
                    min_domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                )
        if c.get("labelSelector") is not None:
            yield from _label_selector(_map(c["labelSelector"]), f"{here}.labelSelector")


def pod_spec_problems(
    spec: Mapping[str, Any], path: str, *, names: bool = True
) -> Iterator[FieldProblem]:
    """ValidatePodSpec, for the fields ksched reads (``path`` leads to the spec)."""
    seen: set[str] = set()
    yield from _containers(_list(spec.get("containers")), f"{path}.containers", seen, need_one=True)
    yield from _containers(
        _list(spec.get("initContainers")), f"{path}.initContainers", seen, need_one=False
    )
    yield from _labels(_map(spec.get("nodeSelector")), f"{path}.nodeSelector")
    yield from _tolerations(_list(spec.get("tolerations")), f"{path}.tolerations")
    yield from _affinity(_map(spec.get("affinity")), f"{path}.affinity")
    yield from _spread(
        _list(spec.get("topologySpreadConstraints")), f"{path}.topologySpreadConstraints"
    )
    yield from _non_negative(_map(spec.get("overhead")), f"{path}.overhead")
    for field in ("nodeName", "schedulerName") if names else ("schedulerName",):
        value = _str(spec.get(field))
        for msg in is_dns1123_subdomain(value) if value else ():
            yield invalid(f"{path}.{field}", value, msg)
    gates = [_str(_map(g).get("name")) for g in _list(spec.get("schedulingGates"))]
    for i, gate in enumerate(gates):
        if not gate:
            yield required(f"{path}.schedulingGates[{i}].name")
        else:
            yield from _label_name(gate, f"{path}.schedulingGates[{i}].name")
            if gate in gates[:i]:
                yield duplicate(f"{path}.schedulingGates[{i}].name", gate)
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        yield not_supported(f"{path}.preemptionPolicy", policy, ("Never", "PreemptLowerPriority"))


# ---- kinds -------------------------------------------------------------------------


def _node(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    spec, status = _map(data.get("spec")), _map(data.get("status"))
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(_list(spec.get("taints"))):
        taint = _map(taint)
        here = f"spec.taints[{i}]"
        key, effect = _str(taint.get("key")), _str(taint.get("effect"))
        if not key:
            yield required(f"{here}.key")
        else:
            yield from _label_name(key, f"{here}.key")
        for msg in is_label_value(_str(taint.get("value"))):
            yield invalid(f"{here}.value", taint.get("value"), msg)
        if not effect:
            yield required(f"{here}.effect")
        elif effect not in _TAINT_EFFECTS:
            yield not_supported(f"{here}.effect", effect, _TAINT_EFFECTS)
        if (key, effect) in seen:
            yield duplicate(f"{here}", f"{key}:{effect}")
        seen.add((key, effect))
    for field in ("capacity", "allocatable"):
        yield from _non_negative(_map(status.get(field)), f"status.{field}")


def _pod(data: Mapping[str, Any], names: bool) -> Iterator[FieldProblem]:
    yield from pod_spec_problems(_map(data.get("spec")), "spec", names=names)


def _priority_class(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    value = _int(data.get("value"))
    name = _str(_map(data.get("metadata")).get("name"))
    if value is not None and value > _HIGHEST_USER_PRIORITY and not name.startswith("system-"):
        yield forbidden(
            "value",
            f"maximum allowed value of a user defined priority is {_HIGHEST_USER_PRIORITY}",
        )
    policy = data.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        yield not_supported("preemptionPolicy", policy, ("Never", "PreemptLowerPriority"))


def _pdb(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    spec = _map(data.get("spec"))
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        yield invalid("spec", "", "minAvailable and maxUnavailable cannot be both set")
    if spec.get("selector") is not None:
        yield from _label_selector(_map(spec["selector"]), "spec.selector")


def _non_negative_field(spec: Mapping[str, Any], field: str) -> Iterator[FieldProblem]:
    value = _int(spec.get(field))
    if value is not None and value < 0:
        yield invalid(f"spec.{field}", value, _NOT_NEGATIVE)


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    for key, value in _map(selector.get("matchLabels")).items():
        if str(labels.get(key)) != str(value) or key not in labels:
            return False
    for raw in _list(selector.get("matchExpressions")):
        req = _map(raw)
        label, op, values = _str(req.get("key")), req.get("operator"), _list(req.get("values"))
        present = label in labels
        if op == "In" and not (present and labels[label] in values):
            return False
        if op == "NotIn" and present and labels[label] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _workload(data: Mapping[str, Any], kind: str) -> Iterator[FieldProblem]:
    """apps/v1 and batch/v1 workloads: selector, template labels, counts, pod template."""
    spec = _map(data.get("spec"))
    for field in ("replicas", "parallelism", "completions"):
        yield from _non_negative_field(spec, field)
    template = _map(spec.get("template"))
    labels = _map(_map(template.get("metadata")).get("labels"))
    selector = spec.get("selector")
    if kind == "ReplicationController":
        selector = {"matchLabels": selector} if isinstance(selector, Mapping) else None
    if selector is None and kind not in ("Job", "ReplicationController"):
        yield required("spec.selector")
    elif selector is not None:
        sel = _map(selector)
        if not sel.get("matchLabels") and not sel.get("matchExpressions") and kind != "Job":
            yield invalid("spec.selector", "", f"empty selector is invalid for {kind.lower()}")
        elif kind != "ReplicationController":
            yield from _label_selector(sel, "spec.selector")
        if template and not _selector_matches(sel, labels):
            yield invalid(
                "spec.template.metadata.labels",
                ",".join(f"{k}={v}" for k, v in sorted(labels.items())),
                "`selector` does not match template `labels`",
            )
    if not template:
        if kind in ("Deployment", "DaemonSet", "Job"):
            yield required("spec.template")
        return  # a ReplicaSet or StatefulSet given for its selector only
    yield from _labels(labels, "spec.template.metadata.labels")
    pod_spec = _map(template.get("spec"))
    yield from pod_spec_problems(pod_spec, "spec.template.spec")
    restart = pod_spec.get("restartPolicy")
    if kind == "Job":
        if restart not in ("OnFailure", "Never"):
            yield (
                required("spec.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"')
                if restart is None
                else not_supported(
                    "spec.template.spec.restartPolicy", restart, ("OnFailure", "Never")
                )
            )
    elif restart not in (None, "Always"):
        yield not_supported("spec.template.spec.restartPolicy", restart, ("Always",))
    if kind == "StatefulSet":
        policy = spec.get("podManagementPolicy")
        if policy is not None and policy not in ("OrderedReady", "Parallel"):
            yield not_supported("spec.podManagementPolicy", policy, ("OrderedReady", "Parallel"))


_NAMESPACED = frozenset(
    {
        "Pod",
        "PodDisruptionBudget",
        "PodGroup",
        "Service",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
        "Deployment",
        "DaemonSet",
        "Job",
    }
)


def validate_object(
    data: Mapping[str, Any], *, strict: bool = True, names: bool = True
) -> list[FieldProblem]:
    """Every problem the API server would find in the object ``data`` (a dict).

    Unknown fields are errors, or warnings (``FieldProblem.warning``) when not
    ``strict``. With ``names`` False, object and node names are not held to DNS-1123
    (Scenario files keep upstream unit tests' names such as ``nodeA``). The cluster
    connector logs and skips an object with any error.
    """
    kind = _str(data.get("kind"))
    problems = [
        FieldProblem(path, "UnknownField", warning=not strict)
        for path in unknown_fields(kind, data)
    ]
    api_version = data.get("apiVersion")
    allowed = API_VERSIONS.get(kind)
    if api_version is not None and allowed is not None and api_version not in allowed:
        problems.append(not_supported("apiVersion", api_version, allowed))
    meta = _map(data.get("metadata"))
    problems.extend(
        _meta(
            meta,
            namespaced=kind in _NAMESPACED,
            label_name=kind in ("Namespace", "Service"),
            names=names,
        )
    )
    if kind == "Node":
        problems.extend(_node(data))
    elif kind == "Pod":
        problems.extend(_pod(data, names))
    elif kind == "PriorityClass":
        problems.extend(_priority_class(data))
    elif kind == "PodDisruptionBudget":
        problems.extend(_pdb(data))
    elif kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job") or (
        kind == "ReplicationController" and _map(data.get("spec")).get("template") is not None
    ):
        problems.extend(_workload(data, kind))
    return problems


def missing_priority_class(
    resource: str, name: str, class_name: str, defined: Iterable[str]
) -> str | None:
    """The Priority admission's refusal of a pod naming an unknown class (None: admitted)."""
    if not class_name or class_name in SYSTEM_PRIORITY_CLASSES or class_name in set(defined):
        return None
    return f'{resource} "{name}" is forbidden: no PriorityClass with name {class_name} was found'
