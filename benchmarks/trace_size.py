"""How small a trace is: bytes per pod event, as the API server sends a pod and as a trace
stores it (stripped), plain and gzipped, and what stripping and encoding cost.

A pod's life in a trace is four records: create, bind, scheduled, delete. The pod is a
Deployment's replica as kube-apiserver v1.24 returns it after binding (managedFields,
status conditions, the default tolerations, env values, probes), with ``--trace FILE``
the pods of a real recording instead (their stored form only, and the file's own size).

    python benchmarks/trace_size.py [--pods 10000] [--trace trace.jsonl.gz]

Writes benchmarks/results/trace_size.json.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ksched.trace import Op, record_line, strip_object

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "trace_size.json"

API_POD: dict[str, Any] = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {
        "name": "web-7d4b9c6f5-x2x9q",
        "generateName": "web-7d4b9c6f5-",
        "namespace": "shop",
        "uid": "4f5c8a8e-6c1b-4bb9-9d3e-2b1f0d3a9c11",
        "resourceVersion": "1824571",
        "creationTimestamp": "2026-11-30T09:12:44Z",
        "labels": {"app": "web", "pod-template-hash": "7d4b9c6f5", "tier": "frontend"},
        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-7d4b9c6f5",
                "uid": "0b6a2f44-1d2e-4d55-8f0e-6a3f9a1e2b77",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": [
            {
                "manager": "kube-controller-manager",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-11-30T09:12:44Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:env": {}}}},
                },
            },
            {
                "manager": "kube-scheduler",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-11-30T09:12:44Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {"f:conditions": {".": {}}}},
                "subresource": "status",
            },
        ],
    },
    "spec": {
        "volumes": [
            {
                "name": "kube-api-access-7rj2q",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                    ],
                    "defaultMode": 420,
                },
            }
        ],
        "containers": [
            {
                "name": "web",
                "image": "registry.example.com/shop/web:2.14.1",
                "command": ["/app/web"],
                "args": ["--listen=:8080", "--metrics=:9102"],
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [
                    {"name": "DATABASE_URL", "value": "postgres://shop:s3cret@db:5432/shop"},
                    {"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                ],
                "resources": {
                    "limits": {"cpu": "1", "memory": "1Gi"},
                    "requests": {"cpu": "250m", "memory": "512Mi"},
                },
                "volumeMounts": [
                    {
                        "name": "kube-api-access-7rj2q",
                        "readOnly": True,
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                    }
                ],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "nodeName": "ip-10-0-3-17.eu-west-1.compute.internal",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    },
    "status": {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": "2026-11-30T09:12:44Z",
            }
        ],
        "qosClass": "Burstable",
    },
}


def _pod_lines(stored: dict[str, Any], i: int) -> list[str]:
    key = f"{stored['metadata'].get('namespace', '')}/{stored['metadata']['name']}"
    node = stored["spec"].get("nodeName") or "node-1"
    pending = {**stored, "spec": {k: v for k, v in stored["spec"].items() if k != "nodeName"}}
    t = 1000.0 + i * 0.037
    return [
        record_line(t, Op.CREATE, object=pending),
        record_line(t + 0.01, Op.BIND, key=key, node=node, scheduler="default-scheduler"),
        record_line(t + 0.02, Op.SCHEDULED, key=key, node=node, controller="default-scheduler"),
        record_line(t + 3600.0, Op.DELETE, kind="Pod", key=key),
    ]


def _synthetic(pods: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    raw, stored = [], []
    for i in range(pods):
        pod = copy.deepcopy(API_POD)
        pod["metadata"]["name"] = f"web-7d4b9c6f5-{i:06x}"
        pod["metadata"]["uid"] = f"4f5c8a8e-6c1b-4bb9-9d3e-{i:012x}"
        pod["spec"]["nodeName"] = f"ip-10-0-{i % 250}-{i % 17}.eu-west-1.compute.internal"
        raw.append(pod)
        stored.append(strip_object(pod, "Pod", "v1") or {})
    return raw, stored


def _from_trace(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        records = [json.loads(line) for line in f][1:]
    return [
        r["object"] for r in records if r.get("op") == "create" and r["object"].get("kind") == "Pod"
    ]


def _strip_cost(raw: list[dict[str, Any]]) -> float:
    """Median microseconds to strip and encode one pod's create record (5 rounds)."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for pod in raw:
            record_line(1.0, Op.CREATE, object=strip_object(pod, "Pod", "v1"))
        rounds.append((time.perf_counter() - start) / len(raw) * 1e6)
    return round(statistics.median(rounds), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--trace", type=Path, help="a recorded trace to measure instead")
    args = parser.parse_args()
    raw: list[dict[str, Any]] = []
    if args.trace:
        stored = _from_trace(args.trace)
    else:
        raw, stored = _synthetic(args.pods)
    lines = [line for i, pod in enumerate(stored) for line in _pod_lines(pod, i)]
    text = "".join(lines).encode()
    packed = gzip.compress(text, compresslevel=6)
    events = len(lines)
    result: dict[str, Any] = {
        "source": str(args.trace) if args.trace else "synthetic Deployment pods (API v1.24 form)",
        "pods": len(stored),
        "podEvents": events,
        "bytesPerPodEvent": {
            "stored": round(len(text) / events, 1),
            "storedGzip": round(len(packed) / events, 1),
        },
        "bytesPerPod": {
            "storedCreateRecord": round(sum(len(line) for line in lines[::4]) / len(stored), 1),
            "lifecycle (4 records), gzip": round(len(packed) / len(stored), 1),
        },
    }
    if raw:
        api = "".join(json.dumps(p, separators=(",", ":")) + "\n" for p in raw).encode()
        result["bytesPerPod"]["apiServerJson"] = round(len(api) / len(raw), 1)
        result["bytesPerPod"]["apiServerJsonGzip"] = round(len(gzip.compress(api)) / len(raw), 1)
        result["stripAndEncodeMicrosecondsPerPod"] = _strip_cost(raw[:2000])
    if args.trace:
        result["fileBytes"] = os.path.getsize(args.trace)
    result["python"] = sys.version.split()[0]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
