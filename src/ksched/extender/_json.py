"""Pods and nodes as the Kubernetes JSON an extender reads: what ksched knows of them."""

from __future__ import annotations

from typing import Any

from ..api import Node, Pod

__all__ = ["node_json", "pod_json", "quantity_text"]


def quantity_text(resource: str, value: int) -> str:
    """A quantity as the API writes it: millicores for cpu (``500m``), else units."""
    return f"{value}m" if resource == "cpu" else str(value)


def _present(**fields: Any) -> dict[str, Any]:
    """The fields that are set (JSON leaves the empty ones out)."""
    return {k: v for k, v in fields.items() if v}


def _resources(values: Any) -> dict[str, str]:
    return {k: quantity_text(k, v) for k, v in values.items()}


def _meta(meta: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": meta.name}
    if meta.namespace:
        out["namespace"] = meta.namespace
    if meta.uid:
        out["uid"] = meta.uid
    if meta.labels:
        out["labels"] = dict(meta.labels)
    if meta.annotations:
        out["annotations"] = dict(meta.annotations)
    return out


def node_json(node: Node) -> dict[str, Any]:
    """A Node: name, labels, annotations, taints, unschedulable, capacity and allocatable."""
    spec: dict[str, Any] = {}
    if node.spec.unschedulable:
        spec["unschedulable"] = True
    if node.spec.taints:
        spec["taints"] = [
            {"key": t.key, "value": t.value, "effect": t.effect} for t in node.spec.taints
        ]
    status = {
        "capacity": _resources(node.status.capacity),
        "allocatable": _resources(node.status.allocatable),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(node.metadata),
        "spec": spec,
        "status": status,
    }


def pod_json(pod: Pod) -> dict[str, Any]:
    """A Pod: metadata, containers with their resources and ports, scheduling fields."""

    def container(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"name": c.name}
        if c.image:
            out["image"] = c.image
        resources: dict[str, Any] = {}
        if c.requests:
            resources["requests"] = _resources(c.requests)
        if c.limits:
            resources["limits"] = _resources(c.limits)
        if resources:
            out["resources"] = resources
        if c.ports:
            out["ports"] = [
                _present(containerPort=p.container_port, hostPort=p.host_port, protocol=p.protocol)
                for p in c.ports
            ]
        return out

    spec: dict[str, Any] = {
        "schedulerName": pod.spec.scheduler_name,
        "containers": [container(c) for c in pod.spec.containers],
    }
    if pod.spec.init_containers:
        spec["initContainers"] = [container(c) for c in pod.spec.init_containers]
    if pod.spec.node_name:
        spec["nodeName"] = pod.spec.node_name
    if pod.spec.node_selector:
        spec["nodeSelector"] = dict(pod.spec.node_selector)
    if pod.spec.priority is not None:
        spec["priority"] = pod.spec.priority
    if pod.spec.priority_class_name:
        spec["priorityClassName"] = pod.spec.priority_class_name
    if pod.spec.tolerations:
        spec["tolerations"] = [
            _present(key=t.key, operator=t.operator, value=t.value, effect=t.effect)
            for t in pod.spec.tolerations
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(pod.metadata), "spec": spec}
