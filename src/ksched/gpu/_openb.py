"""The openb trace's CSV files as ksched objects, exactly as the FGD artifact turns them
into YAML.

# data/pod_csv_to_yaml.py (pods), data/node_yaml/openb_node_list_gpu_node.yaml (nodes)

A node row ``sn, cpu_milli, memory_mib, gpu, model`` becomes a Node labelled with its GPU
model (``alibabacloud.com/gpu-card-model``), the OS and hostname labels, and the allocatable
(= capacity) ``cpu``, ``memory``, ``pods: 1001``, ``alibabacloud.com/gpu-count`` and
``alibabacloud.com/gpu-milli`` (1000 per GPU). A pod row becomes a Pod in namespace
``paib-gpu`` with one container (``main``) whose requests and limits are ``cpu_milli`` and
``memory_mib``; a GPU pod carries the annotations ``alibabacloud.com/gpu-milli`` (clamped
to 0..1000; 1000 when the file has no ``gpu_milli`` column), ``alibabacloud.com/gpu-count``
and, when ``gpu_spec`` names models, ``alibabacloud.com/gpu-card-model`` (the non-empty
``|``-separated names). The artifact's script leaves the creation and deletion times out
of the YAML; they are read here (``TracePod.creation_time`` ...) for replays that want them.

The stdlib ``csv`` module reads the files (8152 rows in ~20 ms): a data-frame library would
add a dependency for no gain. A Pod is parsed once per distinct row shape and copied under
each name (the trace repeats a few hundred shapes).
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import KschedError, ManifestError
from ..api import Node, ObjectMeta, Pod, pod_requests, read_object

__all__ = [
    "COUNT",
    "DEVICE_INDEX",
    "MAX_GPUS_PER_NODE",
    "MILLI",
    "MODEL",
    "NAMESPACE",
    "PodShape",
    "TraceError",
    "TraceNode",
    "TracePod",
    "node_manifest",
    "pod_manifest",
    "read_nodes",
    "read_pods",
    "renamed",
    "to_nodes",
    "to_pods",
]

MILLI = "alibabacloud.com/gpu-milli"
"""Annotation (pod) and resource (node): per-GPU milli asked, or the node's total."""
COUNT = "alibabacloud.com/gpu-count"
"""Annotation (pod) and resource (node): the number of GPUs."""
MODEL = "alibabacloud.com/gpu-card-model"
"""Annotation (pod: ``|``-separated acceptable models) and label (node: its model)."""
DEVICE_INDEX = "alibabacloud.com/gpu-index"
"""Annotation a bound GPU pod gets: the GPU indexes it holds, ``-``-separated."""
NAMESPACE = "paib-gpu"
"""The namespace the artifact's script gives every pod."""
MAX_GPUS_PER_NODE = 64
"""A node row with more GPUs is refused: per-GPU state is kept per node, and the artifact
itself flattens nodes to 8 GPUs (``MaxNumGpuPerNode``)."""
_MAX_ROWS = 1_000_000
_MAX_AMOUNT = 10**12
_MAX_NAME = 200
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
_POD_COLUMNS = ("name", "cpu_milli", "num_gpu")


class TraceError(KschedError, ValueError):
    """A trace file that cannot be read; the message names the file, the row and the field."""


@attrs.frozen(kw_only=True)
class TraceNode:
    """One row of ``openb_node_list_*.csv``."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@attrs.frozen(kw_only=True)
class TracePod:
    """One row of ``openb_pod_list_*.csv`` (times in seconds, ``None`` where absent)."""

    name: str
    cpu_milli: int
    memory_mib: int | None
    num_gpu: int
    gpu_milli: int | None
    """``None`` when the file has no ``gpu_milli`` column (a GPU pod then asks for 1000); an
    empty cell reads 0, as the artifact's script turns a missing value into ``"0"``."""
    gpu_spec: str = ""
    qos: str = ""
    pod_phase: str = ""
    creation_time: int | None = None
    deletion_time: int | None = None
    scheduled_time: int | None = None


@attrs.frozen
class PodShape:
    """What the artifact's policies see of a pod (its ``PodResource``): non-zero CPU milli
    (a request of 0 counts as 100m), per-GPU milli, GPU count and acceptable models."""

    cpu_milli: int
    gpu_milli: int
    gpu_count: int
    gpu_model: str = ""

    @property
    def total_gpu_milli(self) -> int:
        """``TotalMilliGpu``: per-GPU milli times the count."""
        return self.gpu_milli * self.gpu_count

    @classmethod
    def of(cls, pod: Pod) -> PodShape:
        """Read a pod as ``utils.GetPodResource`` does (annotations that do not parse count 0)."""
        notes = pod.metadata.annotations
        return cls(
            pod_requests(pod, non_zero=True).get("cpu", 0),
            _annotation_int(notes.get(MILLI)),
            _annotation_int(notes.get(COUNT)),
            notes.get(MODEL, ""),
        )


def _annotation_int(value: str | None) -> int:
    if value is None:
        return 0
    try:
        number = int(value)
    except ValueError:
        return 0
    return number if number >= 0 else 0


# ---- reading the CSV files -----------------------------------------------------------


def _rows(path: Path, required: Sequence[str]) -> Iterator[tuple[int, Mapping[str, str]]]:
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    with handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise TraceError(f"{path}: header has no column {', '.join(missing)}")
        try:
            for index, row in enumerate(reader):
                if index >= _MAX_ROWS:
                    raise TraceError(f"{path}: more than {_MAX_ROWS} rows")
                if None in row:
                    raise TraceError(f"{path}:{reader.line_num}: more fields than the header")
                yield reader.line_num, row
        except (csv.Error, UnicodeDecodeError) as exc:
            raise TraceError(f"{path}:{reader.line_num}: {exc}") from exc


def _int(row: Mapping[str, str | None], field: str, where: str) -> int | None:
    """An integer cell (pandas writes integral floats such as ``12000.0``); None if empty."""
    text = (row.get(field) or "").strip()
    if not text:
        return None
    try:
        number = int(text)
    except ValueError:
        try:
            real = float(text)
        except ValueError:
            raise TraceError(f"{where}: {field}: not a number: {text[:40]!r}") from None
        if not math.isfinite(real) or real != int(real):
            raise TraceError(f"{where}: {field}: not an integer: {text[:40]!r}") from None
        number = int(real)
    if not 0 <= number <= _MAX_AMOUNT:
        raise TraceError(f"{where}: {field}: {number} is outside 0..{_MAX_AMOUNT}")
    return number


def _required(row: Mapping[str, str | None], field: str, where: str) -> int:
    number = _int(row, field, where)
    if number is None:
        raise TraceError(f"{where}: {field}: empty")
    return number


def _name(row: Mapping[str, str | None], field: str, where: str) -> str:
    """An object name: a lowercase RFC 1123 subdomain, short enough for the ``-tuned-<i>``
    suffix of the artifact's clones."""
    name = (row.get(field) or "").strip()
    if not name:
        raise TraceError(f"{where}: {field}: empty")
    if len(name) > _MAX_NAME or not _SUBDOMAIN.fullmatch(name):
        raise TraceError(
            f"{where}: {field}: {name[:60]!r} is not a lowercase RFC 1123 subdomain of at most "
            f"{_MAX_NAME} characters"
        )
    return name


def read_nodes(path: str | Path) -> list[TraceNode]:
    """Read ``openb_node_list_*.csv``. Raises TraceError naming the file, row and field."""
    path = Path(path)
    nodes: list[TraceNode] = []
    seen: set[str] = set()
    for line, row in _rows(path, _NODE_COLUMNS):
        where = f"{path}:{line}"
        name = _name(row, "sn", where)
        if name in seen:
            raise TraceError(f"{where}: sn: node {name} appears twice")
        seen.add(name)
        gpus = _required(row, "gpu", where)
        if gpus > MAX_GPUS_PER_NODE:
            raise TraceError(f"{where}: gpu: {gpus} GPUs on one node (at most {MAX_GPUS_PER_NODE})")
        nodes.append(
            TraceNode(
                name=name,
                cpu_milli=_required(row, "cpu_milli", where),
                memory_mib=_required(row, "memory_mib", where),
                gpus=gpus,
                model=(row.get("model") or "").strip(),
            )
        )
    return nodes


def read_pods(path: str | Path) -> list[TracePod]:
    """Read ``openb_pod_list_*.csv``. Raises TraceError naming the file, row and field."""
    path = Path(path)
    pods: list[TracePod] = []
    seen: set[str] = set()
    for line, row in _rows(path, _POD_COLUMNS):
        where = f"{path}:{line}"
        name = _name(row, "name", where)
        if name in seen:
            raise TraceError(f"{where}: name: pod {name} appears twice")
        seen.add(name)
        pods.append(
            TracePod(
                name=name,
                cpu_milli=_required(row, "cpu_milli", where),
                memory_mib=_int(row, "memory_mib", where),
                num_gpu=_required(row, "num_gpu", where),
                gpu_milli=(_int(row, "gpu_milli", where) or 0) if "gpu_milli" in row else None,
                gpu_spec=(row.get("gpu_spec") or "").strip(),
                qos=(row.get("qos") or "").strip(),
                pod_phase=(row.get("pod_phase") or "").strip(),
                creation_time=_int(row, "creation_time", where),
                deletion_time=_int(row, "deletion_time", where),
                scheduled_time=_int(row, "scheduled_time", where),
            )
        )
    return pods


# ---- the artifact's YAML --------------------------------------------------------------


def node_manifest(node: TraceNode) -> dict[str, Any]:
    """The node as the artifact's ``openb_node_list_gpu_node.yaml`` has it (a node without
    a model, which that file never holds, gets no model label)."""
    amounts = {
        COUNT: str(node.gpus),
        MILLI: str(node.gpus * 1000),
        "cpu": f"{node.cpu_milli}m",
        "memory": f"{node.memory_mib}Mi",
        "pods": "1001",
    }
    labels = {
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
    }
    if node.model:
        labels[MODEL] = node.model
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "status": {"allocatable": dict(amounts), "capacity": dict(amounts)},
    }


def _gpu_annotations(pod: TracePod) -> dict[str, str]:
    if pod.num_gpu == 0:
        return {}
    milli = pod.gpu_milli
    notes = {
        MILLI: "1000" if milli is None or milli > 1000 else str(milli),
        COUNT: str(pod.num_gpu),
    }
    models = "|".join(m for m in pod.gpu_spec.split("|") if m)
    if models:
        notes[MODEL] = models
    return notes


def pod_manifest(pod: TracePod) -> dict[str, Any]:
    """The pod as ``pod_csv_to_yaml.py`` writes it (no creation or deletion time)."""
    requests = {"cpu": f"{pod.cpu_milli}m"}
    if pod.memory_mib is not None:
        requests["memory"] = f"{pod.memory_mib}Mi"
    metadata: dict[str, Any] = {"name": pod.name, "namespace": NAMESPACE}
    notes = _gpu_annotations(pod)
    if notes:
        metadata["annotations"] = notes
    container = {
        "name": "main",
        "image": "tensorflow:latest",
        "imagePullPolicy": "Always",
        "resources": {"requests": requests, "limits": dict(requests)},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": [container], "restartPolicy": "OnFailure", "dnsPolicy": "Default"},
    }


def _read(manifest: Mapping[str, Any], where: str) -> Any:
    try:
        return read_object(manifest)
    except ManifestError as exc:
        raise TraceError(f"{where}: {exc}") from exc


def to_nodes(nodes: Sequence[TraceNode], *, source: str = "nodes") -> list[Node]:
    """The rows as ksched Nodes (in the given order)."""
    out: list[Node] = []
    for node in nodes:
        obj = _read(node_manifest(node), f"{source}: node {node.name}")
        assert isinstance(obj, Node)
        out.append(obj)
    return out


def to_pods(pods: Sequence[TracePod], *, source: str = "pods") -> list[Pod]:
    """The rows as ksched Pods (in the given order), one parse per distinct row shape."""
    templates: dict[tuple[Any, ...], Pod] = {}
    out: list[Pod] = []
    for pod in pods:
        shape = (pod.cpu_milli, pod.memory_mib, pod.num_gpu, pod.gpu_milli, pod.gpu_spec)
        template = templates.get(shape)
        if template is None:
            obj = _read(pod_manifest(pod), f"{source}: pod {pod.name}")
            assert isinstance(obj, Pod)
            template = templates[shape] = obj
        out.append(renamed(template, pod.name))
    return out


def renamed(template: Pod, name: str) -> Pod:
    """The pod under another name (the artifact's tuned clones are ``<name>-tuned-<i>``)."""
    meta = template.metadata
    return Pod(
        metadata=ObjectMeta(name=name, namespace=meta.namespace, annotations=meta.annotations),
        spec=template.spec,
        status=template.status,
    )
