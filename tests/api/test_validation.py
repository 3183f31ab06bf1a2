"""Objects the API server rejects are rejected, with its field path and words.

Case names are upstream's (pkg/apis/core/validation/validation_test.go TestValidatePod
error cases, apps/batch validation tests) where a case comes from there.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ksched import ManifestError, read_manifest, validate_object
from ksched.api import Deployment, Pod

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "ctr", "image": "image"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": base}  # fmt: skip


def with_meta(**meta: Any) -> dict[str, Any]:
    obj = pod()
    obj["metadata"].update(meta)
    return obj


def tol(**t: Any) -> dict[str, Any]:
    return pod(tolerations=[t])


def node_affinity(**na: Any) -> dict[str, Any]:
    return pod(affinity={"nodeAffinity": na})


def terms(*t: Any) -> dict[str, Any]:
    return node_affinity(**{REQ: {"nodeSelectorTerms": list(t)}})


# (upstream case name, object, field path, message fragment)
POD_CASES = [
    ("bad label", with_meta(labels={"NoUppercaseOrSpecialCharsLike=Equals": "bar"}),
     "metadata.labels", 'Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": name part '
     "must consist of alphanumeric characters"),
    ("bad name", with_meta(name="Web_1"), "metadata.name",
     'Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of'),
    ("bad namespace", with_meta(namespace="Team.A"), "metadata.namespace",
     "a lowercase RFC 1123 label must consist of"),
    ("bad annotation key", with_meta(annotations={"a/b/c": "x"}), "metadata.annotations",
     "a valid label key must consist of"),
    ("invalid node selector requirement in node affinity, operator can't be null",
     terms({"matchExpressions": [{"key": "key1"}]}),
     f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator",
     'Invalid value: "": not a valid selector operator'),
    ("invalid node selector requirement in node affinity, key is invalid",
     terms({"matchExpressions": [{"key": "invalid key ___@#", "operator": "Exists"}]}),
     f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].key",
     'Invalid value: "invalid key ___@#"'),
    ("invalid node field selector requirement in node affinity, more values for field selector",
     terms({"matchFields": [{"key": "metadata.name", "operator": "In",
                             "values": ["host1", "host2"]}]}),
     f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].values",
     "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node "
     "field selector"),
    ("invalid node field selector requirement in node affinity, invalid operator",
     terms({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}),
     f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].operator",
     'Invalid value: "Exists": not a valid selector operator'),
    ("invalid node field selector requirement in node affinity, invalid key",
     terms({"matchFields": [{"key": "metadata.namespace", "operator": "In", "values": ["ns1"]}]}),
     f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].key",
     'Invalid value: "metadata.namespace": not a valid field selector key'),
    ("invalid preferredSchedulingTerm in node affinity, weight should be in range 1-100",
     node_affinity(**{PREF: [{"weight": 199, "preference": {"matchExpressions": [
         {"key": "foo", "operator": "In", "values": ["bar"]}]}}]}),
     f"spec.affinity.nodeAffinity.{PREF}[0].weight",
     "Invalid value: 199: must be in the range 1-100"),
    ("invalid requiredDuringSchedulingIgnoredDuringExecution node selector, nodeSelectorTerms "
     "must have at least one term", terms(),
     f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms",
     "Required value: must have at least one node selector term"),
    ("invalid weight in preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
     "annotations, weight should be in range 1-100",
     pod(affinity={"podAffinity": {PREF: [{"weight": 109, "podAffinityTerm": {
         "topologyKey": "region"}}]}}),
     f"spec.affinity.podAffinity.{PREF}[0].weight", "must be in the range 1-100"),
    ("invalid labelSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity "
     "annotations, values should be empty if the operator is Exists",
     pod(affinity={"podAntiAffinity": {PREF: [{"weight": 10, "podAffinityTerm": {
         "topologyKey": "region", "labelSelector": {"matchExpressions": [
             {"key": "key2", "operator": "Exists", "values": ["value1", "value2"]}]}}}]}}),
     f"spec.affinity.podAntiAffinity.{PREF}[0].podAffinityTerm.labelSelector"
     ".matchExpressions[0].values",
     "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    ("invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in "
     "podaffinity, In operator must include Values",
     pod(affinity={"podAntiAffinity": {PREF: [{"weight": 10, "podAffinityTerm": {
         "topologyKey": "region", "namespaceSelector": {"matchExpressions": [
             {"key": "key2", "operator": "In"}]}}}]}}),
     f"spec.affinity.podAntiAffinity.{PREF}[0].podAffinityTerm.namespaceSelector"
     ".matchExpressions[0].values",
     "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
    ("invalid name space in preferredDuringSchedulingIgnoredDuringExecution in podaffinity "
     "annotations, namespace should be valid",
     pod(affinity={"podAffinity": {PREF: [{"weight": 10, "podAffinityTerm": {
         "topologyKey": "region", "namespaces": ["INVALID_NAMESPACE"]}}]}}),
     f"spec.affinity.podAffinity.{PREF}[0].podAffinityTerm.namespace",
     'Invalid value: "INVALID_NAMESPACE": a lowercase RFC 1123 label'),
    ("invalid hard pod affinity, empty topologyKey is not allowed for hard pod affinity",
     pod(affinity={"podAffinity": {REQ: [{"labelSelector": {"matchLabels": {"a": "b"}}}]}}),
     f"spec.affinity.podAffinity.{REQ}[0].topologyKey", "Required value: can not be empty"),
    ("invalid toleration key", tol(key="nospecialchars^=@", operator="Equal", value="bar",
                                   effect="NoSchedule"),
     "spec.tolerations[0].key", "name part must consist of alphanumeric characters"),
    ("invalid toleration operator", tol(key="foo", operator="In", value="bar",
                                        effect="NoSchedule"),
     "spec.tolerations[0].operator",
     'Unsupported value: "In": supported values: "Equal", "Exists"'),
    ("value must be empty when `operator` is 'Exists'",
     tol(key="foo", operator="Exists", value="bar", effect="NoSchedule"),
     "spec.tolerations[0].operator", "value must be empty when `operator` is 'Exists'"),
    ("operator must be 'Exists' when `key` is empty",
     tol(operator="Equal", value="bar", effect="NoSchedule"), "spec.tolerations[0].operator",
     'operator must be Exists when `key` is empty, which means "match all values and all keys"'),
    ("effect must be 'NoExecute' when `TolerationSeconds` is set",
     tol(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoSchedule",
         tolerationSeconds=20),
     "spec.tolerations[0].effect",
     "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"),
    ("no containers", pod(containers=[]), "spec.containers", "Required value"),
    ("duplicate container names",
     pod(containers=[{"name": "ctr"}, {"name": "ctr"}]), "spec.containers[1].name",
     'Duplicate value: "ctr"'),
    ("invalid container name", pod(containers=[{"name": "Web_1"}]), "spec.containers[0].name",
     "a lowercase RFC 1123 label must consist of"),
    ("requests over limits", pod(containers=[{"name": "ctr", "resources": {
        "requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]),
     "spec.containers[0].resources.requests",
     'Invalid value: "2": must be less than or equal to cpu limit of 1'),
    ("negative request", pod(containers=[{"name": "ctr", "resources": {
        "requests": {"memory": "-1Gi"}}}]),
     "spec.containers[0].resources.requests[memory]",
     'Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("resource name typo", pod(containers=[{"name": "ctr", "resources": {
        "requests": {"cpus": "1"}}}]),
     "spec.containers[0].resources.requests[cpus]",
     'Invalid value: "cpus": must be a standard resource for containers'),
    ("extended resource request below limit", pod(containers=[{"name": "ctr", "resources": {
        "requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}}]),
     "spec.containers[0].resources.requests",
     'Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'),
    ("container port out of range", pod(containers=[{"name": "ctr", "ports": [
        {"containerPort": 65536}]}]),
     "spec.containers[0].ports[0].containerPort",
     "Invalid value: 65536: must be between 1 and 65535, inclusive"),
    ("host port out of range", pod(containers=[{"name": "ctr", "ports": [
        {"containerPort": 80, "hostPort": 70000}]}]),
     "spec.containers[0].ports[0].hostPort", "must be between 1 and 65535, inclusive"),
    ("missing container port", pod(containers=[{"name": "ctr", "ports": [{"hostPort": 80}]}]),
     "spec.containers[0].ports[0].containerPort", "Required value"),
    ("unsupported protocol", pod(containers=[{"name": "ctr", "ports": [
        {"containerPort": 80, "protocol": "HTTP"}]}]),
     "spec.containers[0].ports[0].protocol",
     'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'),
    ("bad node selector", pod(nodeSelector={"disk type": "ssd"}), "spec.nodeSelector",
     'Invalid value: "disk type"'),
    ("spread: maxSkew", pod(topologySpreadConstraints=[{
        "maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].maxSkew", "Invalid value: 0: must be greater than zero"),
    ("spread: duplicate", pod(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
     'Duplicate value: "{zone, DoNotSchedule}"'),
    ("spread: minDomains with ScheduleAnyway", pod(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
         "minDomains": 2}]),
     "spec.topologySpreadConstraints[0].minDomains",
     "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
    ("unknown field", pod(containers=[{"name": "ctr", "resoures": {}}]),
     "", 'unknown field "spec.containers[0].resoures"'),
    ("wrong apiVersion", {**pod(), "apiVersion": "apps/v1"}, "apiVersion",
     'Unsupported value: "apps/v1": supported values: "v1"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "path", "message"),
    [case[1:] for case in POD_CASES],
    ids=[case[0] for case in POD_CASES],
)
def test_pod_error_cases(obj: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        read_manifest(obj)
    label = f"Pod {obj['metadata'].get('namespace', 'default')}/{obj['metadata']['name']}: "
    _assert_reported(str(info.value), label, path, message)


def _assert_reported(text: str, label: str, path: str, message: str) -> None:
    """One line of ``text`` is ``LABEL: PATH: ...MESSAGE...`` (or ``LABEL: MESSAGE``)."""
    head = f"{label}{path}: " if path else label
    lines = [line for line in text.splitlines() if line.startswith(head)]
    assert any(message in line[len(head) :] for line in lines), text


def test_a_valid_pod_has_no_problem() -> None:
    obj = pod(
        tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute",
                      "tolerationSeconds": 30}],
        affinity={"nodeAffinity": {REQ: {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    )  # fmt: skip
    obj["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "500m"},
        "limits": {"cpu": "1"},
    }
    assert validate_object(obj) == []
    assert isinstance(read_manifest(obj), Pod)


def test_unknown_fields_are_warnings_when_not_strict() -> None:
    obj = pod(containers=[{"name": "ctr", "resoures": {}}])
    warnings: list[str] = []
    read_manifest(obj, strict=False, warnings=warnings)
    assert warnings == ['Pod ns/p: unknown field "spec.containers[0].resoures"']
    problems = validate_object(obj, strict=False)
    assert [(p.path, p.warning) for p in problems] == [("spec.containers[0].resoures", True)]


def test_every_problem_is_reported_one_per_line() -> None:
    obj = pod(containers=[], tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])
    with pytest.raises(ManifestError) as info:
        read_manifest(obj)
    assert str(info.value).splitlines() == [
        "Pod ns/p: spec.containers: Required value",
        'Pod ns/p: spec.tolerations[0].operator: Invalid value: "v": value must be empty '
        "when `operator` is 'Exists'",
    ]


def test_scenario_names_may_keep_upstream_unit_test_names() -> None:
    obj = pod(nodeName="nodeA")
    assert validate_object(obj, names=False) == []
    assert [p.path for p in validate_object(obj)] == ["spec.nodeName"]


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    },
}


def _deployment(**changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(DEPLOYMENT)
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = obj
        for part in parents:
            target = target[part]
        target[last] = value
    return obj


WORKLOAD_CASES = [
    ("invalid selector, does not match template labels",
     _deployment(spec__selector={"matchLabels": {"app": "other"}}),
     "spec.template.metadata.labels", "`selector` does not match template `labels`"),
    ("missing selector", _deployment(spec__selector=None), "spec.selector", "Required value"),
    ("empty selector", _deployment(spec__selector={}), "spec.selector",
     "empty selector is invalid for deployment"),
    ("negative replicas", _deployment(spec__replicas=-1), "spec.replicas",
     "Invalid value: -1: must be greater than or equal to 0"),
    ("template without containers",
     _deployment(spec__template__spec={"containers": []}), "spec.template.spec.containers",
     "Required value"),
    ("invalid restart policy", _deployment(spec__template__spec={
        "containers": [{"name": "c"}], "restartPolicy": "Never"}),
     "spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"'),
    ("unknown field in template", _deployment(spec__template__spec={
        "containers": [{"name": "c", "resources": {"request": {"cpu": "1"}}}]}),
     "", 'unknown field "spec.template.spec.containers[0].resources.request"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "path", "message"),
    [case[1:] for case in WORKLOAD_CASES],
    ids=[case[0] for case in WORKLOAD_CASES],
)
def test_deployment_error_cases(obj: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        read_manifest(obj)
    _assert_reported(str(info.value), "Deployment default/web: ", path, message)


def test_job_needs_a_restart_policy_that_ends() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    with pytest.raises(ManifestError, match=r"spec\.template\.spec\.restartPolicy: Required"):
        read_manifest(job)


def test_a_valid_deployment_is_read_with_its_template_hash() -> None:
    obj = read_manifest(DEPLOYMENT)
    assert isinstance(obj, Deployment)
    assert obj.replicas == 2
    assert obj.template.metadata.labels == {"app": "web"}
    assert obj.template.hash and set(obj.template.hash) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_cronjob_is_out_of_scope_with_a_clear_error() -> None:
    with pytest.raises(ManifestError, match="CronJob is not simulated"):
        read_manifest({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}})


def test_requests_default_to_limits_as_the_api_server_defaults_them() -> None:
    obj = pod(containers=[{"name": "ctr", "resources": {
        "requests": {"cpu": "250m"}, "limits": {"cpu": "1", "nvidia.com/gpu": "2"}}}])  # fmt: skip
    parsed = read_manifest(obj)
    assert isinstance(parsed, Pod)
    assert parsed.spec.containers[0].requests == {"cpu": 250, "nvidia.com/gpu": 2}
