"""Reading and checking the scheduling.k8s.io Workload API: Workload, PodGroup, pod refs.

# pkg/apis/scheduling/validation/validation.go (ValidateWorkload, ValidatePodGroup: the
# 1.35 ``podGroups`` and the 1.36 ``podGroupTemplates`` versions),
# staging/src/k8s.io/api/scheduling/{v1alpha1,v1alpha2,v1alpha3}/types.go (field names,
# WorkloadMaxPodGroupTemplates), staging/src/k8s.io/api/core/v1/types.go (a pod's
# ``workloadRef`` in 1.35, ``schedulingGroup`` from 1.36), KEP-5832 (a PodGroup's name
# and a pod's ``podGroupName`` are DNS subdomains) and apimachinery's
# content.IsPathSegmentName and field.TooMany.

The native ``PodGroup`` shares its kind with scheduler-plugins' (Coscheduling) PodGroup;
:func:`store_kind` tells them apart by the API group and names the native one
``SchedulingPodGroup``, the kind the cluster store keeps it under. Messages still say
``PodGroup ns/name``, as the user wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._fields import _Fields, _metadata
from ._names import (
    FieldProblem,
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    required,
)
from ._scheduling_groups import (
    BASIC,
    WORKLOAD_MAX_POD_GROUPS,
    GroupPolicy,
    PodGroupTemplate,
    SchedulingGroupRef,
    SchedulingPodGroup,
    Workload,
)

__all__ = [
    "FIRST_ALPHA",
    "POD_GROUP_VERSIONS",
    "SCHEDULING_GROUP",
    "SCHEDULING_NAMESPACED",
    "SCHEDULING_READERS",
    "WORKLOAD_VERSIONS",
    "pod_group_problems",
    "read_scheduling_group",
    "scheduling_group_ref_problems",
    "store_kind",
    "workload_problems",
]

SCHEDULING_GROUP = "scheduling.k8s.io"
FIRST_ALPHA = "scheduling.k8s.io/v1alpha1"
"""Kubernetes 1.35: ``spec.podGroups`` and a pod's ``spec.workloadRef``."""
POD_GROUP_VERSIONS = (
    "scheduling.k8s.io/v1alpha2",
    "scheduling.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1beta1",
)
"""The versions with ``spec.podGroupTemplates`` and a PodGroup object (1.36 onwards)."""
WORKLOAD_VERSIONS = (FIRST_ALPHA, *POD_GROUP_VERSIONS)

_GANG, _BASIC = "gang", "basic"
_NO_POLICY = "must specify one of: `basic`, `gang`"
_TWO_POLICIES = "exactly one of `basic`, `gang` is required, but multiple fields are set"
_NOT_POSITIVE = "must be greater than zero"
_BOTH_REFS = "may not be set together with `schedulingGroup` (one group reference per pod)"


def _group(api_version: object) -> str:
    text = api_version if isinstance(api_version, str) else ""
    return text.rpartition("/")[0]


def store_kind(data: Mapping[str, Any]) -> str:
    """The kind ksched reads ``data`` as: ``SchedulingPodGroup`` for a scheduling.k8s.io
    PodGroup, otherwise ``data["kind"]`` ("" when missing)."""
    kind = data.get("kind")
    if not isinstance(kind, str):
        return ""
    if kind == "PodGroup" and _group(data.get("apiVersion")) == SCHEDULING_GROUP:
        return "SchedulingPodGroup"
    return kind


def _first_alpha(data: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    """v1alpha1's shape: said by apiVersion, or (none given) by ``spec.podGroups``."""
    api_version = data.get("apiVersion")
    if isinstance(api_version, str) and _group(api_version) == SCHEDULING_GROUP:
        return api_version == FIRST_ALPHA
    return "podGroups" in spec


def _lists(first_alpha: bool) -> tuple[str, str, str]:
    """(the list this version has, its policy field, the list it does not have)."""
    if first_alpha:
        return "podGroups", "policy", "podGroupTemplates"
    return "podGroupTemplates", "schedulingPolicy", "podGroups"


def _wrong_list(data: Mapping[str, Any], first_alpha: bool) -> str:
    version = data.get("apiVersion") or ("the first alpha" if first_alpha else "the newest shape")
    has = _lists(first_alpha)[0]
    return f"not a field of Workload in {version} (its pod groups are spec.{has})"


# ---- reading -----------------------------------------------------------------------


def _policy(parent: _Fields, field: str) -> GroupPolicy:
    f = parent.sub(field)
    has_gang = f.data.get(_GANG) is not None
    if has_gang == (f.data.get(_BASIC) is not None):
        raise parent.fail(field, _TWO_POLICIES if has_gang else _NO_POLICY)
    if not has_gang:
        return BASIC
    gang = f.sub(_GANG)
    min_count = gang.integer("minCount")
    if not min_count:
        raise gang.fail("minCount", "Required value")
    if min_count < 0:
        raise gang.fail("minCount", _NOT_POSITIVE)
    return GroupPolicy(min_count=min_count)


def _workload(f: _Fields) -> Workload:
    spec = f.sub("spec")
    first_alpha = _first_alpha(f.data, spec.data)
    field, policy_field, other = _lists(first_alpha)
    if spec.data.get(other) is not None:
        raise spec.fail(other, _wrong_list(f.data, first_alpha))
    if spec.data.get("compositePodGroupTemplates") is not None:
        raise spec.fail(
            "compositePodGroupTemplates",
            "composite pod group templates are not simulated; give podGroupTemplates",
        )
    groups = tuple(
        PodGroupTemplate(name=g.text("name"), policy=_policy(g, policy_field))
        for g in spec.items(field)
    )
    ref = spec.sub("controllerRef")
    return Workload(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        pod_groups=groups,
        controller_kind=ref.text("kind"),
        controller_name=ref.text("name"),
        controller_api_group=ref.text("apiGroup"),
    )


def _pod_group(f: _Fields) -> SchedulingPodGroup:
    spec = f.sub("spec")
    ref = spec.sub("podGroupTemplateRef").sub("workload")
    return SchedulingPodGroup(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        policy=_policy(spec, "schedulingPolicy"),
        workload_name=ref.text("workloadName"),
        template_name=ref.text("podGroupTemplateName"),
    )


def read_scheduling_group(spec: _Fields) -> SchedulingGroupRef | None:
    """A pod's ``spec.schedulingGroup`` or ``spec.workloadRef`` (None: neither)."""
    group, ref = spec.data.get("schedulingGroup"), spec.data.get("workloadRef")
    if group is not None and ref is not None:
        raise spec.fail("workloadRef", _BOTH_REFS)
    if group is not None:
        g = spec.sub("schedulingGroup")
        name = g.text("podGroupName")
        if not name:
            raise g.fail("podGroupName", "Required value")
        return SchedulingGroupRef(pod_group_name=name)
    if ref is None:
        return None
    r = spec.sub("workloadRef")
    for field in ("name", "podGroup"):
        if not r.text(field):
            raise r.fail(field, "Required value")
    return SchedulingGroupRef(
        workload=r.text("name"),
        pod_group=r.text("podGroup"),
        replica_key=r.text("podGroupReplicaKey"),
    )


SCHEDULING_READERS: dict[str, Callable[[_Fields], Any]] = {
    "Workload": _workload,
    "SchedulingPodGroup": _pod_group,
}
SCHEDULING_NAMESPACED = frozenset({"Workload", "SchedulingPodGroup"})


# ---- validation --------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _path_segment_name(name: str) -> list[str]:
    """content.IsPathSegmentName."""
    errs = [f"may not be '{bad}'" for bad in (".", "..") if name == bad]
    return errs + [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def _name_problems(
    value: Any, path: str, check: Callable[[str], list[str]]
) -> Iterator[FieldProblem]:
    """Required when empty, else every problem ``check`` finds."""
    name = _text(value)
    if not name:
        yield required(path)
        return
    for msg in check(name):
        yield invalid(path, name, msg)


def _policy_problems(raw: Any, path: str) -> Iterator[FieldProblem]:
    """validatePodGroupSchedulingPolicy: a union of ``basic`` and ``gang``."""
    policy = _map(raw)
    set_fields = [f"`{k}`" for k in (_BASIC, _GANG) if policy.get(k) is not None]
    if not set_fields:
        yield invalid(path, "", _NO_POLICY)
    elif len(set_fields) > 1:
        yield invalid(path, "{" + ", ".join(set_fields) + "}", _TWO_POLICIES)
    elif policy.get(_GANG) is not None:
        count = _map(policy[_GANG]).get("minCount")
        here = f"{path}.gang.minCount"
        if count is None or count == 0:
            yield required(here)
        elif isinstance(count, int) and not isinstance(count, bool) and count < 0:
            yield invalid(here, count, _NOT_POSITIVE)


def _controller_ref_problems(raw: Any, path: str) -> Iterator[FieldProblem]:
    ref = _map(raw)
    group = _text(ref.get("apiGroup"))
    for msg in is_dns1123_subdomain(group) if group else ():
        yield invalid(f"{path}.apiGroup", group, msg)
    yield from _name_problems(ref.get("kind"), f"{path}.kind", _path_segment_name)
    yield from _name_problems(ref.get("name"), f"{path}.name", _path_segment_name)


def workload_problems(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    """ValidateWorkload's spec checks, in the list the object's version has."""
    spec = _map(data.get("spec"))
    first_alpha = _first_alpha(data, spec)
    field, policy_field, other = _lists(first_alpha)
    if spec.get(other) is not None:
        yield forbidden(f"spec.{other}", _wrong_list(data, first_alpha))
    if spec.get("controllerRef") is not None:
        yield from _controller_ref_problems(spec["controllerRef"], "spec.controllerRef")
    groups = spec.get(field)
    path = f"spec.{field}"
    if not isinstance(groups, list) or not groups:
        if spec.get("compositePodGroupTemplates") is None:
            yield required(path, "must have at least one item")
        return
    if len(groups) > WORKLOAD_MAX_POD_GROUPS:
        most = f"must have at most {WORKLOAD_MAX_POD_GROUPS} items"
        yield FieldProblem(path, "TooMany", f"Too many: {len(groups)}: {most}", len(groups))
        return
    seen: set[str] = set()
    for i, raw in enumerate(groups):
        group, here = _map(raw), f"{path}[{i}]"
        name = _text(group.get("name"))
        yield from _name_problems(name, f"{here}.name", is_dns1123_label)
        if name in seen:
            yield duplicate(here, name)
        seen.add(name)
        yield from _policy_problems(group.get(policy_field), f"{here}.{policy_field}")


def pod_group_problems(data: Mapping[str, Any]) -> Iterator[FieldProblem]:
    """ValidatePodGroup's spec checks (scheduling.k8s.io PodGroup)."""
    spec = _map(data.get("spec"))
    ref = spec.get("podGroupTemplateRef")
    if ref is not None:
        workload = _map(ref).get("workload") if isinstance(ref, Mapping) else None
        path = "spec.podGroupTemplateRef"
        if workload is None:
            yield invalid(path, "", "must specify one of: `workload`")
        else:
            for field in ("workloadName", "podGroupTemplateName"):
                yield from _name_problems(
                    _map(workload).get(field), f"{path}.workload.{field}", is_dns1123_label
                )
    yield from _policy_problems(spec.get("schedulingPolicy"), "spec.schedulingPolicy")


def scheduling_group_ref_problems(spec: Mapping[str, Any], path: str) -> Iterator[FieldProblem]:
    """A pod's reference to its group: ``schedulingGroup`` or (1.35) ``workloadRef``."""
    group, ref = spec.get("schedulingGroup"), spec.get("workloadRef")
    if group is not None and ref is not None:
        yield forbidden(f"{path}.workloadRef", _BOTH_REFS)
    if group is not None:
        yield from _name_problems(  # a PodGroup's name is a DNS subdomain (KEP-5832)
            _map(group).get("podGroupName"),
            f"{path}.schedulingGroup.podGroupName",
            is_dns1123_subdomain,
        )
    if ref is not None:
        r, here = _map(ref), f"{path}.workloadRef"
        yield from _name_problems(r.get("name"), f"{here}.name", is_dns1123_subdomain)
        yield from _name_problems(r.get("podGroup"), f"{here}.podGroup", is_dns1123_label)
        key = _text(r.get("podGroupReplicaKey"))
        for msg in is_dns1123_label(key) if key else ():
            yield invalid(f"{here}.podGroupReplicaKey", key, msg)
