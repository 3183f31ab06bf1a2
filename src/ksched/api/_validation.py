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

from collections.abc import Iterable, Iterator, Mapping, MutableSequence
from typing import Any

from .._errors import ManifestError
from ._manifest import KubeObject, describe, read_object, spec_key
from ._names import (
    FieldProblem,
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    not_supported,
    required,
)
from ._pod_validation import (
    HIGHEST_USER_PRIORITY,
    NOT_NEGATIVE,
    TAINT_EFFECTS,
    as_int,
    as_list,
    as_map,
    as_str,
    label_name_problems,
    label_selector_problems,
    labels_problems,
    non_negative_problems,
    pod_spec_problems,
)
from ._scheduling_groups_manifest import pod_group_problems, store_kind, workload_problems
from ._strict import API_VERSIONS, SCHEMAS, unknown_fields

__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "missing_priority_class",
    "read_manifest",
    "validate_object",
]

SYSTEM_PRIORITY_CLASSES: Mapping[str, int] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
"""The PriorityClasses every cluster has (pkg/apis/scheduling/types.go)."""


def _meta(
    meta: Mapping[str, Any], *, namespaced: bool, label_name: bool, names: bool
) -> Iterator[FieldProblem]:
    name = as_str(meta.get("name"))
    if not name:
        yield required("metadata.name", "name or generateName is required")
    elif names:
        check = is_dns1123_label if label_name else is_dns1123_subdomain
        for msg in check(name):
            yield invalid("metadata.name", name, msg)
    namespace = as_str(meta.get("namespace"))
    if namespaced and namespace:
        for msg in is_dns1123_label(namespace):
            yield invalid("metadata.namespace", namespace, msg)
    yield from labels_problems(as_map(meta.get("labels")), "metadata.labels")
    for key in as_map(meta.get("annotations")):
        for msg in is_qualified_name(str(key).lower()):
            yield invalid("metadata.annotations", key, msg)


# ---- quantities --------------------------------------------------------------------


def _node(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    spec, status = as_map(data.get("spec")), as_map(data.get("status"))
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(as_list(spec.get("taints"))):
        taint = as_map(taint)
        here = f"spec.taints[{i}]"
        key, effect = as_str(taint.get("key")), as_str(taint.get("effect"))
        if not key:
            yield required(f"{here}.key")
        else:
            yield from label_name_problems(key, f"{here}.key")
        for msg in is_label_value(as_str(taint.get("value"))):
            yield invalid(f"{here}.value", taint.get("value"), msg)
        if not effect:
            yield required(f"{here}.effect")
        elif effect not in TAINT_EFFECTS:
            yield not_supported(f"{here}.effect", effect, TAINT_EFFECTS)
        if (key, effect) in seen:
            yield duplicate(f"{here}", f"{key}:{effect}")
        seen.add((key, effect))
    for field in ("capacity", "allocatable"):
        yield from non_negative_problems(as_map(status.get(field)), f"status.{field}")


_spec_unknown: dict[str, list[str]] = {}
"""Unknown fields under a pod's ``spec``, by its dict's ``spec_key``."""


def _pod_unknown_fields(data: Mapping[str, Any]) -> list[str]:
    """``unknown_fields("Pod", data)``, the part under ``spec`` looked at once per
    distinct spec dict (paths in the same order: each top-level field walked in turn)."""
    key = spec_key(data.get("spec"))
    if key is None:
        return unknown_fields("Pod", data)
    paths: list[str] = []
    for field, value in data.items():
        if field != "spec":
            paths.extend(unknown_fields("Pod", {field: value}))
            continue
        under = _spec_unknown.get(key)
        if under is None:
            under = unknown_fields("Pod", {field: value})
            if len(_spec_unknown) >= _SPEC_PROBLEMS_LIMIT:
                _spec_unknown.clear()
            _spec_unknown[key] = under
        paths.extend(under)
    return paths


_SPEC_PROBLEMS_LIMIT = 4096
_spec_problems: dict[tuple[str, bool], tuple[FieldProblem, ...]] = {}
"""Problems of pod specs checked, by their dict's ``spec_key`` (a pure function of it)."""


def _pod(data: Mapping[str, Any], names: bool) -> Iterable[FieldProblem]:
    spec = as_map(data.get("spec"))
    key = spec_key(spec)
    if key is None:
        return pod_spec_problems(spec, "spec", names=names)
    problems = _spec_problems.get((key, names))
    if problems is None:
        problems = tuple(pod_spec_problems(spec, "spec", names=names))
        if len(_spec_problems) >= _SPEC_PROBLEMS_LIMIT:
            _spec_problems.clear()
        _spec_problems[key, names] = problems
    return problems


def _priority_class(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    value = as_int(data.get("value"))
    name = as_str(as_map(data.get("metadata")).get("name"))
    if value is not None and value > HIGHEST_USER_PRIORITY and not name.startswith("system-"):
        yield forbidden(
            "value",
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
        )
    policy = data.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        yield not_supported("preemptionPolicy", policy, ("Never", "PreemptLowerPriority"))


def _pdb(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    spec = as_map(data.get("spec"))
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        yield invalid("spec", "", "minAvailable and maxUnavailable cannot be both set")
    if spec.get("selector") is not None:
        yield from label_selector_problems(as_map(spec["selector"]), "spec.selector")


def _non_negative_field(spec: Mapping[str, Any], field: str) -> Iterator[FieldProblem]:
    value = as_int(spec.get(field))
    if value is not None and value < 0:
        yield invalid(f"spec.{field}", value, NOT_NEGATIVE)


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    for key, value in as_map(selector.get("matchLabels")).items():
        if str(labels.get(key)) != str(value) or key not in labels:
            return False
    for raw in as_list(selector.get("matchExpressions")):
        req = as_map(raw)
        label, op, values = as_str(req.get("key")), req.get("operator"), as_list(req.get("values"))
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
    spec = as_map(data.get("spec"))
    for field in ("replicas", "parallelism", "completions"):
        yield from _non_negative_field(spec, field)
    template = as_map(spec.get("template"))
    labels = as_map(as_map(template.get("metadata")).get("labels"))
    selector = spec.get("selector")
    if kind == "ReplicationController":
        selector = {"matchLabels": selector} if isinstance(selector, Mapping) else None
    if selector is None and kind not in ("Job", "ReplicationController"):
        yield required("spec.selector")
    elif selector is not None:
        sel = as_map(selector)
        if not sel.get("matchLabels") and not sel.get("matchExpressions") and kind != "Job":
            yield invalid("spec.selector", "", f"empty selector is invalid for {kind.lower()}")
        elif kind != "ReplicationController":
            yield from label_selector_problems(sel, "spec.selector")
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
    yield from labels_problems(labels, "spec.template.metadata.labels")
    pod_spec = as_map(template.get("spec"))
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
        "Workload",
        "SchedulingPodGroup",
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
    kind = store_kind(data)  # a scheduling.k8s.io PodGroup is a SchedulingPodGroup
    problems = [
        FieldProblem(path, "UnknownField", warning=not strict)
        for path in (_pod_unknown_fields(data) if kind == "Pod" else unknown_fields(kind, data))
    ]
    api_version = data.get("apiVersion")
    allowed = API_VERSIONS.get(kind)
    if api_version is not None and allowed is not None and api_version not in allowed:
        problems.append(not_supported("apiVersion", api_version, allowed))
    meta = as_map(data.get("metadata"))
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
        kind == "ReplicationController" and as_map(data.get("spec")).get("template") is not None
    ):
        problems.extend(_workload(data, kind))
    elif kind == "Workload":
        problems.extend(workload_problems(data))
    elif kind == "SchedulingPodGroup":
        problems.extend(pod_group_problems(data))
    return problems


def missing_priority_class(
    resource: str, name: str, class_name: str, defined: Iterable[str]
) -> str | None:
    """The Priority admission's refusal of a pod naming an unknown class (None: admitted)."""
    if not class_name or class_name in SYSTEM_PRIORITY_CLASSES or class_name in set(defined):
        return None
    return f'{resource} "{name}" is forbidden: no PriorityClass with name {class_name} was found'


def read_manifest(
    data: object,
    *,
    strict: bool = True,
    warnings: MutableSequence[str] | None = None,
    names: bool = True,
) -> KubeObject:
    """One object from a user's manifest: checked as the API server checks it, then read.

    Args:
        data: the object as a dict (from YAML or JSON).
        strict: unknown fields are errors (as ``kubectl apply`` with strict field
            validation); with False they are warnings.
        warnings: where the warnings go, one line each (``Kind ns/name: message``).
        names: hold object names to DNS-1123 (False for Scenario files, whose cases
            keep upstream unit tests' names such as ``nodeA``).

    Raises:
        ManifestError: unknown kind, missing name, a malformed field or a value the API
            server rejects; the message names the object and the field path, one line
            per problem.
    """
    if isinstance(data, Mapping) and store_kind(data) in SCHEMAS:
        meta = data.get("metadata")
        if isinstance(meta, Mapping) and meta.get("name"):
            label = describe(data)
            problems = validate_object(data, strict=strict, names=names)
            errors = [f"{label}: {p}" for p in problems if not p.warning]
            if errors:
                raise ManifestError("\n".join(errors))
            if warnings is not None:
                warnings.extend(f"{label}: {p}" for p in problems if p.warning)
    return read_object(data)  # an unknown kind, a missing name, a malformed field
