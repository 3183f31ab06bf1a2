"""Workload controllers in a simulation: the pods each controller would make, when.

# pkg/controller/deployment, replicaset, statefulset, job, daemon (and
# daemon/util/daemonset_util.go), pkg/controller/controller_utils.go ComputeHash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from ksched.api import POD_TEMPLATE_HASH_LABEL, Pod, compute_hash, read_manifest
from ksched.cluster import InMemoryCluster
from ksched.simulate import ScenarioError, parse_scenario, run_scenario
from ksched.simulate._controllers import DAEMON_POD_TOLERATIONS, Controllers

NODE = (
    "{{apiVersion: v1, kind: Node, metadata: {{name: {name}, labels: {{zone: {zone}}}}}, "
    'status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "20"}}}}}}'
)


def node(name: str, *, zone: str = "a", cpu: str = "4") -> str:
    return NODE.format(name=name, zone=zone, cpu=cpu)


def workload(kind: str, name: str, spec: str, *, cpu: str = "500m", extra: str = "") -> str:
    api = {"Job": "batch/v1"}.get(kind, "apps/v1")
    policy = "restartPolicy: Never, " if kind == "Job" else ""
    selector = "" if kind == "Job" else f"selector: {{matchLabels: {{app: {name}}}}}, "
    return (
        f"{{apiVersion: {api}, kind: {kind}, metadata: {{name: {name}}}, spec: {{{spec}"
        f"{selector}template: {{metadata: {{labels: {{app: {name}}}}}, spec: {{{policy}{extra}"
        f'containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}}}}}}}'
    )


def scenario(objects: list[str], steps: str = "", *, explain: bool = False) -> dict[str, Any]:
    text = "apiVersion: ksched/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nobjects:\n"
    text += "".join(f"  - {o}\n" for o in objects)
    if steps:
        text += "steps:\n" + steps
    parsed: dict[str, Any] = run_scenario(parse_scenario(yaml.safe_load(text)), explain=explain)
    return parsed


def _cluster() -> tuple[InMemoryCluster, Controllers]:
    cluster = InMemoryCluster()

    def create_pods(pods: Sequence[Pod]) -> None:
        for p in pods:
            cluster.apply(p)

    controllers = Controllers(cluster, create_pods=create_pods, delete_pod=print)
    cluster.subscribe(controllers.on_change)
    return cluster, controllers


def pods_of(report: dict[str, Any], owner: str) -> dict[str, Any]:
    return {k: v for k, v in report["pods"].items() if v.get("owner") == owner}


def test_deployment_makes_a_replica_set_named_by_its_template_hash() -> None:
    report = scenario([node("n1"), workload("Deployment", "web", "replicas: 3, ")])
    [rs_key] = [k for k in report["workloads"] if k.startswith("ReplicaSet ")]
    rs_name = rs_key.split("/")[1]
    assert rs_name.startswith("web-")
    assert report["workloads"][rs_key]["owner"] == "Deployment default/web"
    pods = pods_of(report, rs_key)
    assert len(pods) == 3
    assert all(k.startswith(f"default/{rs_name}-") and len(k) == len(rs_name) + 14 for k in pods)
    assert {v["phase"] for v in pods.values()} == {"Bound"}
    assert report["workloads"]["Deployment default/web"] == {
        "pods": 3,
        "bound": 3,
        "replicas": 3,
    }


def test_pod_template_hash_label_and_owner_reach_the_pods() -> None:
    cluster, controllers = _cluster()
    created: list[Any] = []
    cluster.subscribe(lambda kind, old, new: created.append(new) if kind == "Pod" else None)
    deployment = read_manifest(yaml.safe_load(workload("Deployment", "web", "replicas: 2, ")))
    cluster.apply(deployment)
    controllers.reconcile_pending()
    [rs] = cluster.objects("ReplicaSet")
    template_hash = rs.metadata.labels[POD_TEMPLATE_HASH_LABEL]
    assert rs.metadata.name == f"web-{template_hash}"
    assert rs.selector.match_labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: template_hash}
    assert [(o.kind, o.name, o.controller) for o in rs.metadata.owner_references] == [
        ("Deployment", "web", True)
    ]
    assert len(created) == 2
    for pod in created:
        assert pod.labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: template_hash}
        [owner] = pod.metadata.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("ReplicaSet", rs.metadata.name, True)


def test_compute_hash_is_stable_and_follows_the_template() -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    same = {"spec": {"containers": [{"name": "c"}]}, "metadata": {"labels": {"app": "web"}}}
    changed = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "d"}]}}
    assert compute_hash(template) == compute_hash(same)
    assert compute_hash(template) != compute_hash(changed)
    assert compute_hash(template, 1) != compute_hash(template)
    assert set(compute_hash(template)) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_default_spreading_selector_comes_from_the_replica_set() -> None:
    # helper.DefaultSelector finds the pod's controlling ReplicaSet in the cluster: the
    # system default constraints then count only that ReplicaSet's pods.
    from ksched.plugins.pod_topology_spread._common import default_selector

    cluster, controllers = _cluster()
    cluster.apply(read_manifest(yaml.safe_load(workload("Deployment", "web", "replicas: 1, "))))
    controllers.reconcile_pending()
    [pod] = cluster.pods()
    selector = default_selector(pod, cluster)
    assert selector.matches(pod.labels)
    other_hash = {**pod.labels, POD_TEMPLATE_HASH_LABEL: "other"}
    assert not selector.matches(other_hash)
    assert not selector.matches({"app": "web"})


def test_ordered_ready_stateful_set_waits_for_each_pod_to_be_bound() -> None:
    # Room for one pod only: db-0 binds, db-1 cannot, so db-2 is never created.
    report = scenario(
        [node("n1", cpu="1"), workload("StatefulSet", "db", "replicas: 3, ", cpu="600m")]
    )
    assert sorted(pods_of(report, "StatefulSet default/db")) == ["default/db-0", "default/db-1"]
    assert report["pods"]["default/db-0"]["phase"] == "Bound"
    assert report["pods"]["default/db-1"]["phase"] == "Unschedulable"


def test_parallel_stateful_set_creates_all_pods_at_once() -> None:
    spec = "replicas: 3, podManagementPolicy: Parallel, "
    report = scenario([node("n1", cpu="1"), workload("StatefulSet", "db", spec, cpu="600m")])
    assert sorted(pods_of(report, "StatefulSet default/db")) == [
        "default/db-0",
        "default/db-1",
        "default/db-2",
    ]


def test_job_runs_min_of_parallelism_and_completions() -> None:
    report = scenario([node("n1"), workload("Job", "batch", "parallelism: 3, completions: 2, ")])
    assert len(pods_of(report, "Job default/batch")) == 2
    report = scenario([node("n1"), workload("Job", "batch", "parallelism: 3, ")])
    assert len(pods_of(report, "Job default/batch")) == 3


def test_daemon_set_follows_nodes_and_skips_untolerated_taints() -> None:
    tainted = (
        "{apiVersion: v1, kind: Node, metadata: {name: gpu}, spec: {taints: [{key: gpu, "
        'effect: NoSchedule}]}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}}}'
    )
    cordoned = (
        "{apiVersion: v1, kind: Node, metadata: {name: cordoned}, spec: {taints: [{key: "
        "node.kubernetes.io/unschedulable, effect: NoSchedule}]}, "
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}}}'
    )
    steps = (
        f"  - settle: {{}}\n  - create: [{node('n3')}]\n  - settle: {{}}\n"
        "  - delete: [{kind: Node, name: n1}]\n  - settle: {}\n"
    )
    report = scenario(
        [node("n1"), node("n2"), tainted, cordoned, workload("DaemonSet", "agent", "")], steps
    )
    first = {
        v["node"]
        for k, v in report["timeline"][0]["pods"].items()
        if k.startswith("default/agent-")
    }
    assert first == {"n1", "n2", "cordoned"}  # unschedulable is tolerated by default
    after_add = {
        v["node"]
        for k, v in report["timeline"][2]["pods"].items()
        if k.startswith("default/agent-")
    }
    assert after_add == {"n1", "n2", "n3", "cordoned"}
    final = {v["node"] for v in pods_of(report, "DaemonSet default/agent").values()}
    assert final == {"n2", "n3", "cordoned"}


def test_daemon_pods_get_the_controllers_tolerations_and_node_term() -> None:
    cluster, controllers = _cluster()
    cluster.apply(read_manifest(yaml.safe_load(node("n1"))))
    extra = (
        "tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, "
        "effect: NoSchedule}], "
    )
    cluster.apply(read_manifest(yaml.safe_load(workload("DaemonSet", "agent", "", extra=extra))))
    controllers.reconcile_pending()
    [pod] = cluster.pods()
    assert pod.spec.tolerations == DAEMON_POD_TOLERATIONS[-1:] + DAEMON_POD_TOLERATIONS[:-1]
    affinity = pod.spec.affinity
    assert affinity is not None and affinity.node_affinity is not None
    assert affinity.node_affinity.required is not None
    [term] = affinity.node_affinity.required.terms
    [field] = term.match_fields
    assert (field.key, field.operator, field.values) == ("metadata.name", "In", ("n1",))


def test_scale_and_delete_steps() -> None:
    steps = (
        "  - settle: {}\n"
        "  - scale: {kind: Deployment, name: web, replicas: 1}\n  - settle: {}\n"
        "  - scale: {kind: StatefulSet, name: db, replicas: 3}\n  - settle: {}\n"
        "  - delete: [{kind: Deployment, name: web}]\n  - settle: {}\n"
    )
    report = scenario(
        [
            node("n1"),
            workload("Deployment", "web", "replicas: 3, "),
            workload("StatefulSet", "db", "replicas: 1, "),
        ],
        steps,
    )
    web = [k for k in report["timeline"][2]["pods"] if k.startswith("default/web-")]
    assert len(web) == 1
    assert sorted(pods_of(report, "StatefulSet default/db")) == [
        "default/db-0",
        "default/db-1",
        "default/db-2",
    ]
    assert not [k for k in report["pods"] if k.startswith("default/web-")]
    assert not [k for k in report["workloads"] if "web" in k]
    deleted = [e for e in report["events"] if e["kind"] == "Deleted"]
    assert len(deleted) == 3  # two by the scale-down, one with the Deployment


def test_a_deleted_pod_is_replaced_by_its_controller() -> None:
    steps = "  - settle: {}\n  - delete: [{kind: Pod, name: db-0}]\n  - settle: {}\n"
    report = scenario([node("n1"), workload("StatefulSet", "db", "replicas: 1, ")], steps)
    assert report["pods"]["default/db-0"]["phase"] == "Bound"


def test_explain_names_the_owner() -> None:
    report = scenario([node("n1"), workload("StatefulSet", "db", "replicas: 1, ")], explain=True)
    assert report["explain"]["default/db-0"]["owner"] == "StatefulSet default/db"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("{kind: DaemonSet, name: agent, replicas: 2}", "cannot scale a DaemonSet"),
        ("{kind: Deployment, name: web, replicas: -1}", "replicas: must be an integer >= 0"),
        ("{kind: Deployment, name: web, replica: 2}", 'unknown field "replica"'),
    ],
    ids=["daemonset", "negative", "typo"],
)
def test_bad_scale_steps_are_rejected(step: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        scenario([node("n1")], f"  - scale: {step}\n")


def test_system_priority_classes_exist() -> None:
    extra = "priorityClassName: system-node-critical, "
    report = scenario([node("n1"), workload("DaemonSet", "agent", "", extra=extra)])
    assert len(pods_of(report, "DaemonSet default/agent")) == 1


def test_replication_controller_with_a_template_makes_its_pods() -> None:
    rc = (
        "{apiVersion: v1, kind: ReplicationController, metadata: {name: legacy}, spec: "
        "{replicas: 2, selector: {app: legacy}, template: {metadata: {labels: {app: legacy}}, "
        "spec: {containers: [{name: c}]}}}}"
    )
    report = scenario([node("n1"), rc])
    assert len(pods_of(report, "ReplicationController default/legacy")) == 2


def test_a_node_added_later_gets_its_daemon_pod_at_that_simulated_time() -> None:
    steps = f"  - settle: {{}}\n  - advance: 30s\n  - create: [{node('n2')}]\n  - settle: {{}}\n"
    report = scenario([node("n1"), workload("DaemonSet", "agent", "")], steps)
    bound = {
        e["details"].get("node"): e["time"]
        for e in report["events"]
        if e["kind"] == "Bound" and e["pod"].startswith("default/agent-")
    }
    assert bound == {"n1": 0.0, "n2": 30.0}


LOCAL_CLASS = (
    "{apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: local}, "
    "provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}"
)


def local_pv(name: str, node_name: str) -> str:
    return (
        f"{{apiVersion: v1, kind: PersistentVolume, metadata: {{name: {name}}}, spec: {{"
        "capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], storageClassName: local, "
        "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: "
        f"kubernetes.io/hostname, operator: In, values: [{node_name}]}}]}}]}}}}}}}}"
    )


def test_stateful_set_claim_templates_make_claims_that_pick_the_nodes() -> None:
    """stateful_set_utils.go getPersistentVolumeClaims: one claim per template and
    replica, <template>-<set>-<ordinal>; the pods' volumes point at them, so
    VolumeBinding places each replica where a local PV is (n2, n3, never n1)."""
    templates = (
        "volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], "
        "storageClassName: local, resources: {requests: {storage: 1Gi}}}}], "
        "podManagementPolicy: Parallel, replicas: 2, "
    )
    nodes = [
        node(n).replace("labels: {zone: a}", f"labels: {{zone: a, kubernetes.io/hostname: {n}}}")
        for n in ("n1", "n2", "n3")
    ]
    report = scenario(
        [*nodes, LOCAL_CLASS, local_pv("pv-2", "n2"), local_pv("pv-3", "n3"),
         workload("StatefulSet", "db", templates)]
    )  # fmt: skip
    pods = pods_of(report, "StatefulSet default/db")
    assert sorted(pods) == ["default/db-0", "default/db-1"]
    assert sorted(p["node"] for p in pods.values()) == ["n2", "n3"]


def test_claim_volumes_replace_a_template_volume_of_the_same_name() -> None:
    from ksched.api import StatefulSet
    from ksched.simulate._claims import stateful_set_claims, with_claim_volumes

    sts = read_manifest(
        yaml.safe_load(
            workload(
                "StatefulSet",
                "web",
                "volumeClaimTemplates: [{metadata: {name: www, labels: {tier: t}}, "
                "spec: {resources: {requests: {storage: 1Gi}}}}], ",
                extra="volumes: [{name: www, emptyDir: {}}, {name: other, emptyDir: {}}], ",
            )
        )
    )
    assert isinstance(sts, StatefulSet)
    claims = stateful_set_claims(sts, 3)
    assert [(c.key, dict(c.metadata.labels)) for c in claims] == [
        ("default/www-web-3", {"tier": "t", "app": "web"})
    ]
    assert sts.template is not None
    from ksched.api import Pod

    pod = with_claim_volumes(Pod(metadata=sts.template.metadata, spec=sts.template.spec), sts, 3)
    by_name = {v.name: v for v in pod.spec.volumes}
    assert by_name["www"].persistent_volume_claim is not None
    assert by_name["www"].persistent_volume_claim.claim_name == "www-web-3"
    assert by_name["other"].kind == "emptyDir"
