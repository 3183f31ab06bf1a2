"""Reading scheduler_perf workload files: test cases, params, ops, templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched import Pod
from ksched.bench import WorkloadError, load_test_cases, plans
from ksched.bench._template import ObjectTemplate, render
from ksched.bench._workload import Barrier, CreateNamespaces, CreateNodes, CreatePods, select

WORKLOADS = Path(__file__).parents[2] / "benchmarks" / "workloads"
MISC = WORKLOADS / "misc" / "performance-config.yaml"
AFFINITY = WORKLOADS / "affinity" / "performance-config.yaml"
SPREAD = WORKLOADS / "topology_spreading" / "performance-config.yaml"
KSCHED = WORKLOADS / "ksched" / "performance-config.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_upstream_misc_file_reads_unchanged() -> None:
    cases = {c.name: c for c in load_test_cases(MISC)}
    assert list(cases)[:3] == ["SchedulingBasic", "SchedulingDaemonset", "PreemptionBasic"]
    basic = {w.name: w for w in cases["SchedulingBasic"].workloads}
    # Upstream's CI floor for SchedulingBasic at 5000 nodes.
    assert basic["5000Nodes_10000Pods"].threshold == 680
    assert basic["5000Nodes_10000Pods"].labels == ("performance",)
    assert basic["500Nodes"].threshold is None
    unschedulable = {w.name: w for w in cases["Unschedulable"].workloads}
    assert unschedulable["5kNodes/100Init/10kPods"].threshold == 590


def test_params_fill_counts_and_the_default_pod_template() -> None:
    [p] = plans(str(MISC), "SchedulingBasic/5000Nodes_10000Pods")
    nodes, init, measured = p.ops
    assert isinstance(nodes, CreateNodes) and nodes.count == 5000 and nodes.template is None
    assert isinstance(init, CreatePods) and init.count == 1000 and not init.collect_metrics
    assert isinstance(measured, CreatePods) and measured.count == 10000 and measured.collect_metrics
    # Upstream: pods of op N go to namespace-N unless the op names one.
    assert (init.namespace, measured.namespace) == ("namespace-1", "namespace-2")
    assert measured.template is not None
    assert measured.template.path.name == "pod-default.yaml"
    assert (p.nodes, p.measured_pods) == (5000, 10000)


def test_feature_gates_are_ignored_with_a_note() -> None:
    [p] = plans(str(MISC), "SchedulingBasic/5Nodes")
    assert p.notes == ("featureGates ignored (not ksched features): SchedulerAsyncAPICalls=false",)


def test_affinity_file_node_strategy_and_namespaces() -> None:
    [p] = plans(str(AFFINITY), "SchedulingPodAffinity/500Nodes")
    nodes, namespaces, init, measured = p.ops
    assert isinstance(nodes, CreateNodes)
    assert (nodes.label_key, nodes.label_values) == ("topology.kubernetes.io/zone", ("zone1",))
    assert isinstance(namespaces, CreateNamespaces)
    assert (namespaces.prefix, namespaces.count) == ("sched", 2)
    assert isinstance(init, CreatePods) and init.namespace == "sched-0"
    assert isinstance(measured, CreatePods) and measured.namespace == "sched-1"


def test_create_pod_sets_unroll_into_one_create_pods_per_namespace(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("kind: Pod\nmetadata: {generateName: p-}\n")
    path = write(
        tmp_path,
        """
- name: Sets
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createPodSets
    countParam: $sets
    namespacePrefix: ns
    createPodsOp: {opcode: createPods, countParam: $perSet}
  - opcode: barrier
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
    params: {sets: 3, perSet: 2}
""",
    )
    [p] = plans(str(path))
    assert [(op.namespace, op.count) for op in p.ops if isinstance(op, CreatePods)] == [
        ("ns-0", 2),
        ("ns-1", 2),
        ("ns-2", 2),
        ("namespace-4", 1),
    ]
    assert isinstance(p.ops[3], Barrier) and p.ops[3].stage == "Scheduled"


def test_unsupported_op_is_named(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
- name: T
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: createPodGroups, count: 1}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads: [{name: w}]
""",
    )
    with pytest.raises(WorkloadError, match=r"T/w: op 1 \(createPodGroups\): unsupported op"):
        plans(str(path))


def test_unknown_field_and_opcode(tmp_path: Path) -> None:
    base = """
- name: T
  workloadTemplate:
  - {opcode: createNodes, count: 1, %s}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads: [{name: w}]
"""
    with pytest.raises(WorkloadError, match="unknown field 'nodeCount'"):
        plans(str(write(tmp_path, base % "nodeCount: 3")))
    steady = base.replace("collectMetrics: true}", "collectMetrics: true, steadyState: true}")
    with pytest.raises(WorkloadError, match=r"op 1 \(createPods\): when creating pods in a steady"):
        plans(str(write(tmp_path, steady % "count: 1")))
    with pytest.raises(WorkloadError, match=r"op 0 \(createNodes\): templateParams is not supp"):
        plans(str(write(tmp_path, base % "templateParams: {}")))
    path = write(tmp_path, base.replace("createNodes", "explodeNodes") % "x: 1")
    with pytest.raises(WorkloadError, match="unknown opcode 'explodeNodes'"):
        plans(str(path))


def test_undefined_and_unused_params(tmp_path: Path) -> None:
    text = """
- name: T
  workloadTemplate:
  - {opcode: createNodes, countParam: $initNodes}
  - {opcode: createPods, countParam: $measurePods, collectMetrics: true}
  workloads: [{name: w, params: %s}]
"""
    with pytest.raises(WorkloadError, match="parameter measurePods is undefined"):
        plans(str(write(tmp_path, text % "{initNodes: 1}")))
    # As upstream's unusedParams check: a typo in params is an error, not silently ignored.
    with pytest.raises(WorkloadError, match=r"the parameters \['measurPods'\]"):
        plans(str(write(tmp_path, text % "{initNodes: 1, measurePods: 1, measurPods: 2}")))


def test_a_workload_must_measure_something(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "- name: T\n  workloadTemplate: [{opcode: createNodes, count: 1}]\n"
        "  workloads: [{name: w}]\n",
    )
    with pytest.raises(WorkloadError, match="no op in the workload template collects metrics"):
        plans(str(path))


def test_select_by_test_case_and_workload_with_slashes() -> None:
    cases = load_test_cases(MISC)
    assert [w.name for _, w in select(cases, "Unschedulable/5kNodes/100Init/10kPods")] == [
        "5kNodes/100Init/10kPods"
    ]
    assert len(select(cases, "PreemptionBasic")) == 4
    with pytest.raises(WorkloadError, match="no workload '7Nodes'"):
        select(cases, "SchedulingBasic/7Nodes")
    with pytest.raises(WorkloadError, match="no test case 'Nope'"):
        select(cases, "Nope")


def test_standard_set_plans() -> None:
    """Every workload of the standard set is runnable (plans without error)."""
    for path, name in [
        (MISC, "SchedulingBasic/500Nodes"),
        (MISC, "Unschedulable/500Nodes/10Init/1kPods"),
        (AFFINITY, "SchedulingPodAntiAffinity/500Nodes"),
        (AFFINITY, "SchedulingNodeAffinity/500Nodes"),
        (SPREAD, "TopologySpreading/5000Nodes_5000Pods"),
        (SPREAD, "PreferredTopologySpreading/500Nodes"),
        (KSCHED, "PreemptionBasic/5000Nodes"),
        (KSCHED, "Coscheduling/5000Nodes"),
    ]:
        [p] = plans(str(path), name)
        assert p.nodes in (500, 5000), name
    [p] = plans(str(SPREAD), "TopologySpreading/5000Nodes_5000Pods")
    assert p.workload.threshold == 460


# ---- templates ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "env", "out"),
    [
        ("name: gang-{{.Index}}", {"Index": 3}, "name: gang-3"),
        ("g: {{DivideInt .Index 8}}", {"Index": 17}, "g: 2"),
        ("m: {{ Mod .Index 3 }}", {"Index": 7}, "m: 1"),
        ("x: {{AddInt (MultiplyInt .Index 2) 1}}", {"Index": 4}, "x: 9"),
        ("f: {{DivideFloat .Index 4}}", {"Index": 10}, "f: 2.5"),
        ("c: {{.Count}}-{{.size}}", {"Count": 5, "size": "big"}, "c: 5-big"),
    ],
)
def test_template_actions(text: str, env: dict[str, object], out: str) -> None:
    assert render("t.yaml", text, env) == out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{if .x}}a{{end}}", "unsupported template action"),
        ("{{.Index | printf}}", "unsupported template action"),
        ("{{.missing}}", r"template uses \.missing, which is not set"),
        ("{{DivideInt .Index 0}}", "division by zero"),
    ],
)
def test_template_errors_name_the_file(text: str, message: str) -> None:
    with pytest.raises(WorkloadError, match=f"t.yaml: .*{message}"):
        render("t.yaml", text, {"Index": 1, "x": True})


def test_templated_objects_are_parsed_once_per_distinct_text(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "kind: Pod\nmetadata:\n  generateName: g-\n"
        "  labels: {group: 'gang-{{DivideInt .Index 8}}'}\n"
    )
    template = ObjectTemplate(path)
    first = [template.data({"Index": i}) for i in range(8)]
    assert all(d is first[0] for d in first)
    assert template.data({"Index": 8})["metadata"]["labels"] == {"group": "gang-1"}
    pod = template.build({"Index": 9}, "g-9", "ns")
    assert isinstance(pod, Pod)
    assert (pod.metadata.namespace, pod.metadata.name) == ("ns", "g-9")
