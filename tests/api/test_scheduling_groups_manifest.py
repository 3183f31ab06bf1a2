"""The scheduling.k8s.io Workload API read from manifests and checked as the API server does.

Case names are upstream's (pkg/apis/scheduling/validation/validation_test.go
TestValidateWorkload), run against both shapes: v1alpha1's ``podGroups[].policy`` and
the newer ``podGroupTemplates[].schedulingPolicy``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from ksched import ManifestError, read_manifest, validate_object
from ksched.api import (
    GroupPolicy,
    Job,
    Pod,
    PodGroup,
    PodGroupTemplate,
    SchedulingGroupRef,
    SchedulingPodGroup,
    Workload,
    load_manifests,
    read_object,
)
from ksched.cluster import KINDS

T = TypeVar("T")

NEWEST = "scheduling.k8s.io/v1alpha2"
SHAPES = {
    # apiVersion -> (list field, policy field)
    "scheduling.k8s.io/v1alpha1": ("podGroups", "policy"),
    "scheduling.k8s.io/v1alpha2": ("podGroupTemplates", "schedulingPolicy"),
    "scheduling.k8s.io/v1alpha3": ("podGroupTemplates", "schedulingPolicy"),
    "scheduling.k8s.io/v1beta1": ("podGroupTemplates", "schedulingPolicy"),
}


def mk_workload(api_version: str = NEWEST) -> dict[str, Any]:
    """upstream mkWorkload: a Workload that passes validation, in ``api_version``'s shape."""
    groups, policy = SHAPES[api_version]
    return {
        "apiVersion": api_version,
        "kind": "Workload",
        "metadata": {"name": "workload", "namespace": "ns"},
        "spec": {
            "controllerRef": {"apiGroup": "group", "kind": "foo", "name": "baz"},
            groups: [
                {"name": "group1", policy: {"basic": {}}},
                {"name": "group2", policy: {"gang": {"minCount": 2}}},
            ],
        },
    }


def mk_pod_group(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "podGroupTemplateRef": {
            "workload": {"workloadName": "workload", "podGroupTemplateName": "group2"}
        },
        "schedulingPolicy": {"gang": {"minCount": 2}},
    }
    base.update(spec)
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "workload-group2", "namespace": "ns"},
        "spec": base,
    }


def pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "c"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": base}  # fmt: skip


def errors(data: dict[str, Any]) -> list[str]:
    return [str(p) for p in validate_object(data) if not p.warning]


# ---- reading -------------------------------------------------------------------------


def read_as(kind: type[T], data: object, read: Callable[[object], object] = read_manifest) -> T:
    """``read(data)``, which must be a ``kind``."""
    obj = read(data)
    assert isinstance(obj, kind), obj
    return obj


@pytest.mark.parametrize("api_version", list(SHAPES))
def test_workload_reads_every_field_in_each_version(api_version: str) -> None:
    w = read_as(Workload, mk_workload(api_version))
    assert w == Workload(
        metadata=w.metadata,
        pod_groups=(
            PodGroupTemplate(name="group1", policy=GroupPolicy()),
            PodGroupTemplate(name="group2", policy=GroupPolicy(min_count=2)),
        ),
        controller_kind="foo",
        controller_name="baz",
        controller_api_group="group",
    )
    assert (w.key, w.template("group2"), w.template("nope")) == (
        "ns/workload",
        PodGroupTemplate(name="group2", policy=GroupPolicy(min_count=2)),
        None,
    )
    assert not w.pod_groups[0].policy.is_gang and w.pod_groups[1].policy.is_gang
    assert KINDS[type(w)] == "Workload"


def test_workload_without_api_version_is_read_by_its_shape() -> None:
    for version in ("scheduling.k8s.io/v1alpha1", NEWEST):
        data = mk_workload(version)
        del data["apiVersion"]
        assert [g.name for g in read_as(Workload, data, read_object).pod_groups] == [
            "group1",
            "group2",
        ]


def test_native_pod_group_reads_every_field() -> None:
    pg = read_manifest(mk_pod_group())
    assert isinstance(pg, SchedulingPodGroup)
    assert (pg.key, pg.policy, pg.workload_name, pg.template_name) == (
        "ns/workload-group2",
        GroupPolicy(min_count=2),
        "workload",
        "group2",
    )
    assert KINDS[type(pg)] == "SchedulingPodGroup"
    bare = read_as(
        SchedulingPodGroup,
        mk_pod_group(podGroupTemplateRef=None, schedulingPolicy={"basic": {}}),
    )
    assert (bare.policy, bare.workload_name, bare.template_name) == (GroupPolicy(), "", "")


@pytest.mark.parametrize(
    "api_version", ["scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1"]
)
def test_coscheduling_pod_group_is_still_read_as_before(api_version: str) -> None:
    data = {"apiVersion": api_version, "kind": "PodGroup",
            "metadata": {"name": "gang", "namespace": "ns"},
            "spec": {"minMember": 3, "scheduleTimeoutSeconds": 10}}  # fmt: skip
    pg = read_manifest(data)
    assert isinstance(pg, PodGroup)
    assert (pg.min_member, pg.schedule_timeout_seconds) == (3, 10)
    # scheduler-plugins' spec is not the native one, and the other way round
    with pytest.raises(ManifestError, match=r'unknown field "spec.minMember"'):
        read_manifest({**data, "apiVersion": "scheduling.k8s.io/v1beta1"})


def test_pod_scheduling_group_and_workload_ref() -> None:
    newest = read_manifest(pod(schedulingGroup={"podGroupName": "workload-group2"}))
    assert isinstance(newest, Pod)
    ref = newest.spec.scheduling_group
    assert ref == SchedulingGroupRef(pod_group_name="workload-group2")
    assert ref.group_key("ns") == "ns/workload-group2"
    first = read_as(
        Pod, pod(workloadRef={"name": "workload", "podGroup": "group2", "podGroupReplicaKey": "r1"})
    )
    ref = first.spec.scheduling_group
    assert ref == SchedulingGroupRef(workload="workload", pod_group="group2", replica_key="r1")
    assert ref.group_key("ns") == "ns/workload/group2/r1"
    assert read_as(Pod, pod()).spec.scheduling_group is None


def test_pod_template_of_a_job_carries_the_reference() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "train", "namespace": "ns"},
           "spec": {"parallelism": 4, "template": {"spec": {
               "restartPolicy": "Never", "containers": [{"name": "c"}],
               "schedulingGroup": {"podGroupName": "workload-group2"}}}}}  # fmt: skip
    obj = read_manifest(job)
    assert isinstance(obj, Job)
    assert obj.template.spec.scheduling_group == SchedulingGroupRef(
        pod_group_name="workload-group2"
    )


def test_load_manifests_reads_all_three_kinds_together() -> None:
    text = """
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: train, namespace: ml}
spec:
  podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 2}}}]
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train-workers, namespace: ml}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: {gang: {minCount: 2}}
---
apiVersion: v1
kind: Pod
metadata: {name: w0, namespace: ml}
spec: {containers: [{name: c}], schedulingGroup: {podGroupName: train-workers}}
"""
    kinds = [type(o) for o in load_manifests(text)]
    assert kinds == [Workload, SchedulingPodGroup, Pod]


# ---- validation: TestValidateWorkload, in both shapes ---------------------------------

Tweak = Callable[[dict[str, Any], str, str], None]


def _groups(w: dict[str, Any], field: str) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = w["spec"][field]
    return groups


def _too_many(w: dict[str, Any], field: str, policy: str) -> None:
    w["spec"][field] = [{"name": f"group-{i}", policy: {"basic": {}}} for i in range(9)]


LONG = "w" * 254
WORKLOAD_CASES: list[tuple[str, Tweak, str]] = [
    ("invalid name", lambda w, f, p: w["metadata"].update(name=".workload"),
     'metadata.name: Invalid value: ".workload": a lowercase RFC 1123 subdomain'),
    ("too long name", lambda w, f, p: w["metadata"].update(name=LONG),
     "metadata.name: Invalid value: \"" + LONG + '": must be no more than 253 characters'),
    ("invalid namespace", lambda w, f, p: w["metadata"].update(namespace=".ns"),
     'metadata.namespace: Invalid value: ".ns": a lowercase RFC 1123 label'),
    ("invalid controllerRef apiGroup",
     lambda w, f, p: w["spec"]["controllerRef"].update(apiGroup=".group"),
     'spec.controllerRef.apiGroup: Invalid value: ".group": a lowercase RFC 1123 subdomain'),
    ("no controllerRef kind", lambda w, f, p: w["spec"]["controllerRef"].update(kind=""),
     "spec.controllerRef.kind: Required value"),
    ("invalid controllerRef kind", lambda w, f, p: w["spec"]["controllerRef"].update(kind="/foo"),
     "spec.controllerRef.kind: Invalid value: \"/foo\": may not contain '/'"),
    ("no controllerRef name", lambda w, f, p: w["spec"]["controllerRef"].update(name=""),
     "spec.controllerRef.name: Required value"),
    ("invalid controllerRef name", lambda w, f, p: w["spec"]["controllerRef"].update(name="/baz"),
     "spec.controllerRef.name: Invalid value: \"/baz\": may not contain '/'"),
    ("no pod groups", lambda w, f, p: w["spec"].pop(f),
     "spec.{groups}: Required value: must have at least one item"),
    ("too many pod groups", _too_many,
     "spec.{groups}: Too many: 9: must have at most 8 items"),
    ("no pod group name", lambda w, f, p: _groups(w, f)[0].update(name=""),
     "spec.{groups}[0].name: Required value"),
    ("invalid pod group name", lambda w, f, p: _groups(w, f)[0].update(name=".group1"),
     'spec.{groups}[0].name: Invalid value: ".group1": a lowercase RFC 1123 label'),
    ("too long pod group name", lambda w, f, p: _groups(w, f)[0].update(name="g" * 64),
     "spec.{groups}[0].name: Invalid value: \"" + "g" * 64
     + '": must be no more than 63 characters'),
    ("no policy set", lambda w, f, p: _groups(w, f)[0].update({p: {}}),
     'spec.{groups}[0].{policy}: Invalid value: "": must specify one of: `basic`, `gang`'),
    ("two policies", lambda w, f, p: _groups(w, f)[0][p].update(gang={"minCount": 2}),
     'spec.{groups}[0].{policy}: Invalid value: "{{`basic`, `gang`}}": exactly one of `basic`, '
     "`gang` is required, but multiple fields are set"),
    ("zero min count in gang", lambda w, f, p: _groups(w, f)[1][p]["gang"].update(minCount=0),
     "spec.{groups}[1].{policy}.gang.minCount: Required value"),
    ("negative min count in gang",
     lambda w, f, p: _groups(w, f)[1][p]["gang"].update(minCount=-1),
     "spec.{groups}[1].{policy}.gang.minCount: Invalid value: -1: must be greater than zero"),
    ("two pod groups with the same name",
     lambda w, f, p: _groups(w, f)[1].update(name="group1"),
     'spec.{groups}[1]: Duplicate value: "group1"'),
]  # fmt: skip


@pytest.mark.parametrize("api_version", ["scheduling.k8s.io/v1alpha1", NEWEST])
@pytest.mark.parametrize(
    ("tweak", "message"), [c[1:] for c in WORKLOAD_CASES], ids=[c[0] for c in WORKLOAD_CASES]
)
def test_validate_workload_failure_cases(api_version: str, tweak: Tweak, message: str) -> None:
    groups, policy = SHAPES[api_version]
    data = mk_workload(api_version)
    tweak(data, groups, policy)
    want = message.format(groups=groups, policy=policy)
    found = errors(data)
    assert any(e.startswith(want) for e in found), found
    namespace = data["metadata"]["namespace"]
    with pytest.raises(ManifestError) as err:
        read_manifest(copy.deepcopy(data))
    assert f"Workload {namespace}/{data['metadata']['name']}: {want}" in str(err.value)


@pytest.mark.parametrize(
    "tweak",
    [
        pytest.param(lambda w: None, id="basic and gang policies"),
        pytest.param(lambda w: w["spec"].pop("controllerRef"), id="no controllerRef"),
        pytest.param(lambda w: w["spec"]["controllerRef"].pop("apiGroup"),
                     id="no controllerRef apiGroup"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("api_version", list(SHAPES))
def test_validate_workload_success_cases(
    api_version: str, tweak: Callable[[dict[str, Any]], None]
) -> None:
    data = mk_workload(api_version)
    tweak(data)
    assert errors(data) == []


@pytest.mark.parametrize(
    ("api_version", "wrong", "right"),
    [
        ("scheduling.k8s.io/v1alpha1", "podGroupTemplates", "podGroups"),
        ("scheduling.k8s.io/v1beta1", "podGroups", "podGroupTemplates"),
    ],
)
def test_the_other_versions_list_is_an_error_naming_the_field(
    api_version: str, wrong: str, right: str
) -> None:
    data = mk_workload(api_version)
    data["spec"][wrong] = data["spec"].pop(right)
    with pytest.raises(ManifestError) as err:
        read_manifest(data)
    assert (
        f"Workload ns/workload: spec.{wrong}: Forbidden: not a field of Workload in "
        f"{api_version} (its pod groups are spec.{right})"
    ) in str(err.value)
    # the reader alone (the connector's path after validation) says so too
    with pytest.raises(ManifestError, match=rf"spec\.{wrong}: not a field of Workload"):
        read_object(data)


def test_composite_templates_are_refused_clearly() -> None:
    data = mk_workload("scheduling.k8s.io/v1alpha3")
    data["spec"]["compositePodGroupTemplates"] = [{"name": "c"}]
    del data["spec"]["podGroupTemplates"]
    with pytest.raises(ManifestError, match="compositePodGroupTemplates: composite pod group"):
        read_manifest(data)


def test_unsupported_api_version_and_unknown_field() -> None:
    data = mk_workload()
    data["apiVersion"] = "scheduling.k8s.io/v2"
    assert errors(data)[0].startswith('apiVersion: Unsupported value: "scheduling.k8s.io/v2"')
    pg = mk_pod_group()
    pg["apiVersion"] = "scheduling.k8s.io/v1alpha1"  # v1alpha1 had no PodGroup object
    assert errors(pg) == [
        'apiVersion: Unsupported value: "scheduling.k8s.io/v1alpha1": supported values: '
        '"scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha3", "scheduling.k8s.io/v1beta1"'
    ]
    typo = mk_workload()
    typo["spec"]["podGroupTemplates"][1]["schedulingPolicy"]["gang"]["minCuont"] = 2
    with pytest.raises(ManifestError, match=r'Workload ns/workload: unknown field "spec'):
        read_manifest(typo)


# ---- validation: the PodGroup object and a pod's reference -----------------------------

POD_GROUP_CASES = [
    ("invalid name", {"metadata": {"name": "Workload-Group2", "namespace": "ns"}},
     'PodGroup ns/Workload-Group2: metadata.name: Invalid value: "Workload-Group2": a lowercase '
     "RFC 1123 subdomain"),
    ("no workloadName", {"spec": {"podGroupTemplateRef": {"workload": {
        "podGroupTemplateName": "group2"}}, "schedulingPolicy": {"basic": {}}}},
     "PodGroup ns/workload-group2: spec.podGroupTemplateRef.workload.workloadName: "
     "Required value"),
    ("invalid podGroupTemplateName", {"spec": {"podGroupTemplateRef": {"workload": {
        "workloadName": "workload", "podGroupTemplateName": "Group2"}},
        "schedulingPolicy": {"basic": {}}}},
     "PodGroup ns/workload-group2: spec.podGroupTemplateRef.workload.podGroupTemplateName: "
     'Invalid value: "Group2": a lowercase RFC 1123 label'),
    ("no policy set", {"spec": {}},
     'PodGroup ns/workload-group2: spec.schedulingPolicy: Invalid value: "": must specify one '
     "of: `basic`, `gang`"),
    ("zero min count in gang", {"spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}},
     "PodGroup ns/workload-group2: spec.schedulingPolicy.gang.minCount: Required value"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"), [c[1:] for c in POD_GROUP_CASES], ids=[c[0] for c in POD_GROUP_CASES]
)
def test_validate_pod_group(change: dict[str, Any], message: str) -> None:
    data = {**mk_pod_group(), **change}
    with pytest.raises(ManifestError) as err:
        read_manifest(data)
    assert message in str(err.value)


POD_REF_CASES = [
    ("empty podGroupName", {"schedulingGroup": {"podGroupName": ""}},
     "spec.schedulingGroup.podGroupName: Required value"),
    ("invalid podGroupName", {"schedulingGroup": {"podGroupName": "Group"}},
     'spec.schedulingGroup.podGroupName: Invalid value: "Group": a lowercase RFC 1123 subdomain'),
    ("both references", {"schedulingGroup": {"podGroupName": "g"},
                         "workloadRef": {"name": "w", "podGroup": "g"}},
     "spec.workloadRef: Forbidden: may not be set together with `schedulingGroup`"),
    ("workloadRef without name", {"workloadRef": {"podGroup": "g"}},
     "spec.workloadRef.name: Required value"),
    ("workloadRef without podGroup", {"workloadRef": {"name": "w"}},
     "spec.workloadRef.podGroup: Required value"),
    ("workloadRef invalid name", {"workloadRef": {"name": ".w", "podGroup": "g"}},
     'spec.workloadRef.name: Invalid value: ".w": a lowercase RFC 1123 subdomain'),
    ("workloadRef invalid podGroup", {"workloadRef": {"name": "w", "podGroup": "a.b"}},
     'spec.workloadRef.podGroup: Invalid value: "a.b": must not contain dots'),
    ("workloadRef invalid replica key",
     {"workloadRef": {"name": "w", "podGroup": "g", "podGroupReplicaKey": "R_1"}},
     'spec.workloadRef.podGroupReplicaKey: Invalid value: "R_1": a lowercase RFC 1123 label'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "message"), [c[1:] for c in POD_REF_CASES], ids=[c[0] for c in POD_REF_CASES]
)
def test_validate_pod_reference(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as err:
        read_manifest(pod(**spec))
    assert f"Pod ns/p: {message}" in str(err.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"schedulingGroup": {}}, "spec.schedulingGroup.podGroupName: Required value"),
        ({"schedulingGroup": {"podGroupName": "a"}, "workloadRef": {"name": "w"}},
         "spec.workloadRef: may not be set together with `schedulingGroup`"),
        ({"workloadRef": {"name": "w"}}, "spec.workloadRef.podGroup: Required value"),
    ],
)  # fmt: skip
def test_the_reader_alone_refuses_a_broken_reference(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError, match=f"Pod ns/p: {message}"):
        read_object(pod(**spec))


def test_reader_alone_refuses_a_broken_policy() -> None:
    with pytest.raises(ManifestError, match=r"spec.schedulingPolicy: must specify one of"):
        read_object(mk_pod_group(schedulingPolicy={}))
    with pytest.raises(ManifestError, match=r"spec.schedulingPolicy.gang.minCount: must be"):
        read_object(mk_pod_group(schedulingPolicy={"gang": {"minCount": -2}}))


def test_a_scenario_loads_the_workload_api_through_the_same_reader() -> None:
    from ksched.simulate import parse_scenario

    data: dict[str, Any] = {
        "apiVersion": "ksched/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "gang"},
        "objects": [
            mk_workload("scheduling.k8s.io/v1alpha1"),
            mk_workload(),
            mk_pod_group(),
            pod(schedulingGroup={"podGroupName": "workload-group2"}),
        ],
    }
    data["objects"][1]["metadata"]["name"] = "newer"
    objects = parse_scenario(data).objects
    assert [type(o) for o in objects] == [Workload, Workload, SchedulingPodGroup, Pod]
    scheduled = objects[3]
    assert isinstance(scheduled, Pod)
    assert scheduled.spec.scheduling_group == SchedulingGroupRef(pod_group_name="workload-group2")


def test_a_scenario_deletes_the_native_pod_group_by_its_api_version() -> None:
    from ksched.simulate import parse_scenario

    data: dict[str, Any] = {
        "apiVersion": "ksched/v1alpha1",
        "kind": "Scenario",
        "objects": [mk_pod_group()],
        "steps": [
            {"delete": [
                {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                 "name": "workload-group2", "namespace": "ns"},
                {"kind": "PodGroup", "name": "cos", "namespace": "ns"},
            ]}
        ],
    }  # fmt: skip
    steps = parse_scenario(data).steps
    assert steps[0].deletes == (
        ("SchedulingPodGroup", "ns/workload-group2"),
        ("PodGroup", "ns/cos"),
    )
