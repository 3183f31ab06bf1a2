"""The openb CSVs as the FGD artifact's YAML (data/pod_csv_to_yaml.py and
data/node_yaml/openb_node_list_gpu_node.yaml) and as ksched objects."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from ksched.api import Container
from ksched.gpu import (
    PodShape,
    TraceError,
    node_manifest,
    pod_manifest,
    read_nodes,
    read_pods,
    to_nodes,
    to_pods,
)

TRACE = Path(__file__).resolve().parents[3] / "shared" / "traces" / "openb"
needs_trace = pytest.mark.skipif(not TRACE.is_dir(), reason="no shared/traces/openb beside it")

POD_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
)


def write(tmp_path: Path, text: str, name: str = "pods.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_node_as_the_artifacts_yaml(tmp_path: Path) -> None:
    # openb-node-0000 of openb_node_list_gpu_node.yaml, as the artifact ships it.
    header = "sn,cpu_milli,memory_mib,gpu,model\n"
    path = write(tmp_path, header + "openb-node-0000,64000,262144,2,P100\n")
    [row] = read_nodes(path)
    amounts = {
        "alibabacloud.com/gpu-count": "2",
        "alibabacloud.com/gpu-milli": "2000",
        "cpu": "64000m",
        "memory": "262144Mi",
        "pods": "1001",
    }
    assert node_manifest(row) == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "openb-node-0000",
            "labels": {
                "alibabacloud.com/gpu-card-model": "P100",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/hostname": "openb-node-0000",
                "kubernetes.io/os": "linux",
            },
        },
        "status": {"allocatable": amounts, "capacity": amounts},
    }
    [node] = to_nodes([row])
    assert node.status.capacity["alibabacloud.com/gpu-milli"] == 2000
    assert node.status.allocatable["cpu"] == 64000
    assert node.status.allocatable["memory"] == 262144 * 2**20


def test_cpu_node_has_no_model_label(tmp_path: Path) -> None:
    path = write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0001,32000,262144,0,\n")
    [node] = to_nodes(read_nodes(path))
    assert "alibabacloud.com/gpu-card-model" not in node.labels
    assert node.status.capacity["alibabacloud.com/gpu-count"] == 0


def test_pods_as_pod_csv_to_yaml_writes_them(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        POD_HEADER
        + "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
        + "openb-pod-0002,12000,24576,8,1000,V100M16|V100M32,LS,Running,0,,\n"
        + "openb-pod-0003,88000,65536,0,0,,BE,Failed,5,9,\n"
        + "openb-pod-0004,4000,8192,1,1200,|G2||T4|,LS,Running,,,\n",
    )
    rows = read_pods(path)
    assert rows[0].creation_time == 427061 and rows[0].deletion_time == 12902960
    assert rows[1].deletion_time is None and rows[1].scheduled_time is None
    share, eight, cpu, over = (pod_manifest(r) for r in rows)
    assert share == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "openb-pod-0001",
            "namespace": "paib-gpu",
            "annotations": {
                "alibabacloud.com/gpu-milli": "460",
                "alibabacloud.com/gpu-count": "1",
            },
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "tensorflow:latest",
                    "imagePullPolicy": "Always",
                    "resources": {
                        "requests": {"cpu": "6000m", "memory": "12288Mi"},
                        "limits": {"cpu": "6000m", "memory": "12288Mi"},
                    },
                }
            ],
            "restartPolicy": "OnFailure",
            "dnsPolicy": "Default",
        },
    }
    assert eight["metadata"]["annotations"] == {
        "alibabacloud.com/gpu-milli": "1000",
        "alibabacloud.com/gpu-count": "8",
        "alibabacloud.com/gpu-card-model": "V100M16|V100M32",
    }
    assert "annotations" not in cpu["metadata"]  # num_gpu 0: no GPU annotation at all
    # gpu_milli above 1000 is written as 1000; empty models are dropped from the list
    assert over["metadata"]["annotations"] == {
        "alibabacloud.com/gpu-milli": "1000",
        "alibabacloud.com/gpu-count": "1",
        "alibabacloud.com/gpu-card-model": "G2|T4",
    }
    pods = to_pods(rows)
    assert [p.key for p in pods][:2] == ["paib-gpu/openb-pod-0001", "paib-gpu/openb-pod-0002"]
    assert pods[0].spec.containers[0].requests == {"cpu": 6000, "memory": 12288 * 2**20}
    assert PodShape.of(pods[1]) == PodShape(12000, 1000, 8, "V100M16|V100M32")
    assert PodShape.of(pods[2]) == PodShape(88000, 0, 0, "")


def test_file_without_gpu_milli_asks_whole_gpus(tmp_path: Path) -> None:
    # The multigpu workloads: no gpu_milli column, so a GPU pod gets "1000".
    path = write(tmp_path, "name,cpu_milli,memory_mib,num_gpu\np-1,8000,0,2\np-2,1000,0,0\n")
    first, second = to_pods(read_pods(path))
    assert PodShape.of(first) == PodShape(8000, 1000, 2)
    assert PodShape.of(second) == PodShape(1000, 0, 0)


def test_shape_counts_an_absent_cpu_request_as_100m(tmp_path: Path) -> None:
    # GetNonzeroRequestForResource (k8s 1.20): an absent request counts 100m, an explicit
    # 0 stays 0 (the CSV always writes one).
    path = write(tmp_path, "name,cpu_milli,num_gpu,gpu_milli\np-1,0,1,300\n")
    [pod] = to_pods(read_pods(path))
    assert PodShape.of(pod) == PodShape(0, 300, 1)
    assert "memory" not in pod.spec.containers[0].requests
    bare = attrs.evolve(pod, spec=attrs.evolve(pod.spec, containers=(Container(name="main"),)))
    assert PodShape.of(bare) == PodShape(100, 300, 1)


def test_equal_rows_share_one_parsed_spec(tmp_path: Path) -> None:
    path = write(tmp_path, POD_HEADER + "a-1,1000,1,1,500,,,,,,\na-2,1000,1,1,500,,,,,,\n")
    first, second = to_pods(read_pods(path))
    assert first.spec is second.spec
    assert (first.name, second.name) == ("a-1", "a-2")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name,cpu_milli\np,1\n", r"pods.csv: header has no column num_gpu"),
        ("name,cpu_milli,num_gpu\np,x1,0\n", r"pods.csv:2: cpu_milli: not a number: 'x1'"),
        ("name,cpu_milli,num_gpu\np,1.5,0\n", r"pods.csv:2: cpu_milli: not an integer"),
        ("name,cpu_milli,num_gpu\np,-4,0\n", r"pods.csv:2: cpu_milli: -4 is outside"),
        ("name,cpu_milli,num_gpu\np,nan,0\n", r"pods.csv:2: cpu_milli: not an integer"),
        ("name,cpu_milli,num_gpu\np,4,\n", r"pods.csv:2: num_gpu: empty"),
        ("name,cpu_milli,num_gpu\np,4,0\np,4,0\n", r"pods.csv:3: name: pod p appears twice"),
        ("name,cpu_milli,num_gpu\nP/x,4,0\n", r"pods.csv:2: name: 'P/x' is not a lowercase RFC"),
        ("name,cpu_milli,num_gpu\np,4,0,9\n", r"pods.csv:2: more fields than the header"),
    ],
    ids=[
        "no-column",
        "not-a-number",
        "fraction",
        "negative",
        "nan",
        "empty",
        "twice",
        "bad-name",
        "extra-field",
    ],
)
def test_bad_pod_rows_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TraceError, match=message):
        read_pods(write(tmp_path, text))


def test_bad_node_rows_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn-1,1,1,65,G2\n", "nodes.csv")
    with pytest.raises(TraceError, match=r"nodes.csv:2: gpu: 65 GPUs on one node"):
        read_nodes(path)
    with pytest.raises(TraceError, match=r"missing.csv: cannot be read"):
        read_nodes(tmp_path / "missing.csv")


def test_pandas_style_integral_floats_are_read(tmp_path: Path) -> None:
    path = write(tmp_path, "name,cpu_milli,num_gpu,gpu_milli\np,12000.0,1.0,500.0\n")
    [row] = read_pods(path)
    assert (row.cpu_milli, row.num_gpu, row.gpu_milli) == (12000, 1, 500)


@needs_trace
def test_the_openb_trace() -> None:
    nodes = read_nodes(TRACE / "openb_node_list_gpu_node.csv")
    assert len(nodes) == 1213
    assert sum(n.gpus for n in nodes) == 6212
    assert sum(n.cpu_milli for n in nodes) == 107_018_000
    pods = read_pods(TRACE / "openb_pod_list_default.csv")
    assert len(pods) == 8152
    shapes = [PodShape.of(p) for p in to_pods(pods)]
    assert sum(s.total_gpu_milli for s in shapes) == 6_086_800  # 98.0 % of 6212 GPUs
    kinds = {(s.gpu_count, s.gpu_milli < 1000) for s in shapes if s.gpu_count}
    assert kinds == {(1, True), (1, False), (2, False), (4, False), (8, False)}
    assert len(read_nodes(TRACE / "openb_node_list_all_node.csv")) == 1523
