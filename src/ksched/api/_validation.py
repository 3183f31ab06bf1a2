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
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableSequence
from typing import Any

from .._errors import ManifestError
from ._manifest import (
    BODY_FIELDS,
    NO_POD_STATUS,
    BodyKey,
    KubeObject,
    body_key,
    describe,
    forget_read_specs,
    plain_map,
    read_with_key,
)
from ._model import Node, NodeSpec, NodeStatus, ObjectMeta, Pod, PodSpec
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
from ._strict import API_VERSIONS, LIST, MAP, OBJECT_META, OPAQUE, SCHEMAS, schema_problems

__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "forget_read_bodies",
    "missing_priority_class",
    "read_manifest",
    "validate_and_read",
    "validate_object",
]

SYSTEM_PRIORITY_CLASSES: Mapping[str, int] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
"""The PriorityClasses every cluster has (pkg/apis/scheduling/types.go)."""


def _meta(
    meta: Mapping[str, Any], *, namespaced: bool, label_name: bool, names: bool
) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    name = as_str(meta.get("name"))
    if not name:
        problems.append(required("metadata.name", "name or generateName is required"))
    elif names:
        check = is_dns1123_label if label_name else is_dns1123_subdomain
        problems.extend(invalid("metadata.name", name, msg) for msg in check(name))
    namespace = as_str(meta.get("namespace"))
    if namespaced and namespace:
        problems.extend(_namespace_problems(namespace))
    labels, annotations = meta.get("labels"), meta.get("annotations")
    if labels:  # anything empty reads as no labels
        problems.extend(_map_problems_of(labels_problems, labels, "metadata.labels"))
    if annotations:
        problems.extend(
            _map_problems_of(
                _annotations_problems, annotations, "metadata.annotations", keys_only=True
            )
        )
    return problems


@functools.lru_cache(maxsize=256)
def _namespace_problems(namespace: str) -> tuple[FieldProblem, ...]:
    return tuple(
        invalid("metadata.namespace", namespace, msg) for msg in is_dns1123_label(namespace)
    )


def _annotations_problems(annotations: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    for key in annotations:
        for msg in is_qualified_name(str(key).lower()):
            yield invalid(path, key, msg)


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


_MEMO_LIMIT = 4096
_body_unknown: dict[tuple[str, BodyKey], dict[str, list[str | FieldProblem]]] = {}
"""Unknown fields (and fields of the wrong shape) under each body field of an object, by
kind and ``body_key``."""
_body_problems: dict[tuple[str, BodyKey, bool], tuple[FieldProblem, ...]] = {}
"""The kind's own problems (spec, status) of an object, by kind, ``body_key`` and ``names``:
a pure function of the body."""
_map_problems: dict[tuple[str, str], tuple[FieldProblem, ...]] = {}
"""Problems of label and annotation maps, by path and their dict's ``repr``."""
_OBJECT_META_PLAIN = frozenset(k for k, v in OBJECT_META.items() if v is OPAQUE)
"""Metadata fields whose values are not walked for unknown fields."""
_OBJECT_META_MAPS = frozenset(k for k, v in OBJECT_META.items() if v is MAP)
_OBJECT_META_LISTS = frozenset(k for k, v in OBJECT_META.items() if v is LIST)


def _plain_meta(meta: dict[Any, Any]) -> bool:
    """Metadata with nothing to walk: plain fields, and maps and lists of the right shape."""
    for key, value in meta.items():
        if key in _OBJECT_META_PLAIN or value is None:
            continue
        if key in _OBJECT_META_MAPS:
            if type(value) is not dict:
                return False
        elif key not in _OBJECT_META_LISTS or type(value) is not list:
            return False
    return True


def forget_read_bodies() -> None:
    """Empty the memos of checked and read bodies (each next object is read in full, as
    one never seen before is: what a benchmark of the worst case wants)."""
    for memo in (_body_unknown, _body_problems, _map_problems, _usual_bodies):
        memo.clear()
    forget_read_specs()


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value


def _unknown_fields(
    kind: str, data: Mapping[str, Any], key: BodyKey | None
) -> list[str | FieldProblem]:
    """``schema_problems(kind, data)``, each top-level field walked in turn (so the paths
    come in the same order); the body fields once per distinct body, the usual
    metadata and plain fields not at all (nothing under them can be unknown)."""
    schema = SCHEMAS.get(kind)
    if schema is None:
        return []
    body: dict[str, list[str | FieldProblem]] | None = None
    if key is not None:
        body = _body_unknown.get((kind, key))
        if body is None:
            body = {f: schema_problems(kind, {f: data.get(f)}) for f in BODY_FIELDS[kind]}
            _remember(_body_unknown, (kind, key), body)
    paths: list[str | FieldProblem] = []
    for field, value in data.items():
        sub = schema.get(field) if isinstance(field, str) else None
        if sub is OPAQUE or (sub is not None and value is None):
            continue
        if body is not None and field in body:
            paths.extend(body[field])
        elif sub is OBJECT_META and type(value) is dict and _plain_meta(value):
            continue
        else:
            paths.extend(schema_problems(kind, {field: value}))
    return paths


def _pod(data: Mapping[str, Any], names: bool) -> Iterator[FieldProblem]:
    yield from pod_spec_problems(as_map(data.get("spec")), "spec", names=names)


def _map_problems_of(
    check: Callable[[Mapping[str, Any], str], Iterator[FieldProblem]],
    value: Any,
    path: str,
    *,
    keys_only: bool = False,
) -> Iterable[FieldProblem]:
    """``check(as_map(value), path)``, once per distinct dict (or, ``keys_only``, per
    distinct keys: the check reads no value)."""
    if type(value) is not dict:
        return check(as_map(value), path)
    if not value:
        return ()
    key = (path, repr(tuple(value)) if keys_only else repr(value))
    problems = _map_problems.get(key)
    if problems is None:
        problems = tuple(check(value, path))
        _remember(_map_problems, key, problems)
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
    return _problems(data, kind, body_key(kind, data), strict=strict, names=names)


def validate_and_read(
    data: Mapping[str, Any], *, strict: bool = True, from_json: bool = False
) -> tuple[list[FieldProblem], KubeObject | None]:
    """``validate_object(data)``, then ``read_object(data)`` when no problem is an error:
    the problems and the object (None if any is an error). The object's body is keyed
    once for both; with ``from_json`` (``data`` is a JSON decoder's output, as the
    connector's watch events are) by a cheaper key (see ``body_key``).

    Raises:
        ManifestError: as ``read_object`` (an unknown kind, a malformed field).
    """
    kind = store_kind(data)
    key = body_key(kind, data, from_json=from_json)
    problems = _problems(data, kind, key, strict=strict, names=True)
    if any(not p.warning for p in problems):
        return problems, None
    return problems, read_with_key(data, key)


def _problems(
    data: Mapping[str, Any], kind: str, key: BodyKey | None, *, strict: bool, names: bool
) -> list[FieldProblem]:
    """``validate_object`` given the object's kind and ``body_key``: the problems of
    equal bodies (a workload's pods, a node pool's nodes) are found once."""
    problems = [
        FieldProblem(p, "UnknownField", warning=not strict) if isinstance(p, str) else p
        for p in _unknown_fields(kind, data, key)
    ]
    if any(p.kind == "TypeInvalid" for p in problems):
        return problems  # not decodable: the API server validates nothing further
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
    if key is not None:
        found = _body_problems.get((kind, key, names))
        if found is None:
            found = tuple(_kind_problems(data, kind, names))
            _remember(_body_problems, (kind, key, names), found)
        problems.extend(found)
    else:
        problems.extend(_kind_problems(data, kind, names))
    return problems


def _kind_problems(data: Mapping[str, Any], kind: str, names: bool) -> Iterable[FieldProblem]:
    if kind == "Node":
        return _node(data)
    if kind == "Pod":
        return _pod(data, names)
    if kind == "PriorityClass":
        return _priority_class(data)
    if kind == "PodDisruptionBudget":
        return _pdb(data)
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job") or (
        kind == "ReplicationController" and as_map(data.get("spec")).get("template") is not None
    ):
        return _workload(data, kind)
    if kind == "Workload":
        return workload_problems(data)
    if kind == "SchedulingPodGroup":
        return pod_group_problems(data)
    return ()


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
    from_json: bool = False,
) -> KubeObject:
    """One object from a user's manifest: checked as the API server checks it, then read.

    Args:
        data: the object as a dict (from YAML or JSON).
        strict: unknown fields are errors (as ``kubectl apply`` with strict field
            validation); with False they are warnings.
        warnings: where the warnings go, one line each (``Kind ns/name: message``).
        names: hold object names to DNS-1123 (False for Scenario files, whose cases
            keep upstream unit tests' names such as ``nodeA``).
        from_json: ``data`` is a JSON decoder's output: its body is keyed by the
            cheaper key (see ``body_key``).

    Raises:
        ManifestError: unknown kind, missing name, a malformed field or a value the API
            server rejects; the message names the object and the field path, one line
            per problem.
    """
    try:
        return _read_manifest(data, strict, warnings, names, from_json)
    except RecursionError:  # a dict from JSON nested thousands deep
        raise ManifestError("object nested too deeply to read") from None


def _read_manifest(
    data: object,
    strict: bool,
    warnings: MutableSequence[str] | None,
    names: bool,
    from_json: bool,
) -> KubeObject:
    key = None
    if type(data) is dict or isinstance(data, Mapping):
        kind = store_kind(data)
        # One key for the short way, the checks and the reading.
        key = body_key(kind, data, from_json=from_json)
        if key is not None and type(data) is dict:
            usual = _read_usual(data, key, names)
            if usual is not None:
                return usual
        if kind in SCHEMAS:
            meta = data.get("metadata")
            if (type(meta) is dict or isinstance(meta, Mapping)) and meta.get("name"):
                problems = _problems(data, kind, key, strict=strict, names=names)
                if problems:
                    label = describe(data)
                    errors = [f"{label}: {p}" for p in problems if not p.warning]
                    if errors:
                        raise ManifestError("\n".join(errors))
                    if warnings is not None:
                        warnings.extend(f"{label}: {p}" for p in problems if p.warning)
    obj = read_with_key(data, key)  # an unknown kind, a missing name, a malformed field
    if key is not None and (type(obj) is Pod or type(obj) is Node):
        _remember_usual(obj, key, names)
    return obj


# ---- the usual shape -----------------------------------------------------------------
# A large input is mostly Pods and Nodes made from a few templates: apiVersion v1, plain
# metadata, and a body (spec, a node's status) seen before. Once a body was checked and
# read with nothing to report, an object carrying it needs only its metadata checked.

_USUAL_TOP: Mapping[str, frozenset[str]] = {
    "Pod": frozenset({"apiVersion", "kind", "metadata", "spec"}),
    "Node": frozenset({"apiVersion", "kind", "metadata", "spec", "status"}),
}
_USUAL_META = frozenset({"name", "namespace", "uid", "labels", "annotations"})
_usual_bodies: dict[tuple[str, BodyKey, bool], PodSpec | tuple[NodeSpec, NodeStatus]] = {}
"""Bodies checked and read without a problem or an unknown field, by kind, ``body_key``
and ``names``: a Pod's spec, a Node's spec and status."""


def _remember_usual(obj: Pod | Node, key: BodyKey, names: bool) -> None:
    """Remember ``obj``'s body for :func:`_read_usual` if it was found clean."""
    kind = type(obj).__name__
    if _body_problems.get((kind, key, names)) != ():
        return
    unknown = _body_unknown.get((kind, key))
    if unknown is None or any(unknown.values()):
        return
    if type(obj) is Pod:
        if obj.status is not NO_POD_STATUS:
            return
        _remember(_usual_bodies, (kind, key, names), obj.spec)
    else:
        _remember(_usual_bodies, (kind, key, names), (obj.spec, obj.status))


def _read_usual(data: dict[Any, Any], key: BodyKey, names: bool) -> KubeObject | None:
    """``read_manifest(data)`` for a Pod or Node of the usual shape whose body (of
    ``body_key`` ``key``) was read before; None for anything else, and for any problem
    (the full path then reports it)."""
    kind = data.get("kind")
    if type(kind) is not str:
        return None
    top = _USUAL_TOP.get(kind)
    if top is None or data.get("apiVersion") != "v1" or not data.keys() <= top:
        return None
    meta = data.get("metadata")
    if type(meta) is not dict or not meta.keys() <= _USUAL_META:
        return None
    name, namespace, uid = meta.get("name"), meta.get("namespace"), meta.get("uid")
    labels, annotations = meta.get("labels"), meta.get("annotations")
    if (
        type(name) is not str
        or not (namespace is None or type(namespace) is str)
        or not (uid is None or type(uid) is str)
        or not plain_map(labels)
        or not plain_map(annotations)
    ):
        return None
    body = _usual_bodies.get((kind, key, names))
    if body is None:
        return None
    is_pod = kind == "Pod"
    if _meta(meta, namespaced=is_pod, label_name=False, names=names):
        return None
    metadata = ObjectMeta(
        name=name,
        namespace=(namespace or "default") if is_pod else "",
        uid=uid or "",
        labels=dict(labels) if labels else {},
        annotations=dict(annotations) if annotations else {},
    )
    if type(body) is tuple:
        return Node(metadata=metadata, spec=body[0], status=body[1])
    assert isinstance(body, PodSpec)
    return Pod(metadata=metadata, spec=body, status=NO_POD_STATUS)
