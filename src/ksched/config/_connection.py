"""``clientConnection`` and ``leaderElection`` of KubeSchedulerConfiguration v1.

# Defaults: pkg/scheduler/apis/config/v1/defaults.go (qps 50, burst 100, protobuf) and
# component-base/config/v1alpha1/defaults.go RecommendedDefaultLeaderElectionConfiguration
# (leases, 15s / 10s / 2s); resourceName kube-scheduler in kube-system.
# Rules: client-go/tools/leaderelection/leaderelection.go NewLeaderElector.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._errors import ConfigError
from ..api import parse_duration

__all__ = ["ClientConnection", "LeaderElection", "parse_client_connection", "parse_leader_election"]

PROTOBUF = "application/vnd.kubernetes.protobuf"
JITTER_FACTOR = 1.2
"""leaderelection.go JitterFactor: renewDeadline must exceed retryPeriod times this."""


@attrs.frozen(kw_only=True)
class ClientConnection:
    """How the scheduler talks to the API server."""

    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    content_type: str = PROTOBUF
    """Accepted for compatibility; ksched always speaks JSON."""


@attrs.frozen(kw_only=True)
class LeaderElection:
    """Leader election through a coordination.k8s.io/v1 Lease."""

    leader_elect: bool = True
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


def _duration(value: Any, path: str) -> float:
    """Seconds from a Go duration string (``"15s"``, ``"1m30s"``, ``"500ms"``)."""
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: expected a duration such as '15s', got {value!r}")
    try:
        return parse_duration(value)
    except ValueError:
        raise ConfigError(f"{path}: invalid duration {value!r}") from None


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {value!r}")
    return value


def _known(raw: Mapping[str, Any], path: str, fields: set[str]) -> None:
    for key in raw:
        if key not in fields:
            raise ConfigError(f"{path}.{key}: unknown field")


def parse_client_connection(value: Any, path: str = "clientConnection") -> ClientConnection:
    """The ``clientConnection`` section; errors name the field path."""
    raw = _mapping(value, path)
    _known(raw, path, {"kubeconfig", "qps", "burst", "contentType", "acceptContentTypes"})
    kubeconfig = raw.get("kubeconfig", "")
    if not isinstance(kubeconfig, str):
        raise ConfigError(f"{path}.kubeconfig: expected a file name, got {kubeconfig!r}")
    qps = raw.get("qps", 50)
    if isinstance(qps, bool) or not isinstance(qps, int | float) or qps < 0:
        raise ConfigError(f"{path}.qps: expected a non-negative number, got {qps!r}")
    burst = raw.get("burst", 100)
    if isinstance(burst, bool) or not isinstance(burst, int) or burst < 0:
        raise ConfigError(f"{path}.burst: expected a non-negative integer, got {burst!r}")
    content_type = raw.get("contentType", PROTOBUF)
    if not isinstance(content_type, str):
        raise ConfigError(f"{path}.contentType: expected a string, got {content_type!r}")
    return ClientConnection(
        kubeconfig=kubeconfig, qps=float(qps), burst=burst, content_type=content_type
    )


def parse_leader_election(value: Any, path: str = "leaderElection") -> LeaderElection:
    """The ``leaderElection`` section; errors name the field path."""
    raw = _mapping(value, path)
    fields = {
        "leaderElect": "leader_elect",
        "resourceLock": "resource_lock",
        "resourceName": "resource_name",
        "resourceNamespace": "resource_namespace",
        "leaseDuration": "lease_duration",
        "renewDeadline": "renew_deadline",
        "retryPeriod": "retry_period",
    }
    _known(raw, path, set(fields))
    out: dict[str, Any] = {}
    for yaml_name, attr in fields.items():
        if yaml_name not in raw:
            continue
        item, item_path = raw[yaml_name], f"{path}.{yaml_name}"
        if attr == "leader_elect":
            if not isinstance(item, bool):
                raise ConfigError(f"{item_path}: expected true or false, got {item!r}")
            out[attr] = item
        elif attr in ("lease_duration", "renew_deadline", "retry_period"):
            out[attr] = _duration(item, item_path)
        else:
            if not isinstance(item, str) or not item:
                raise ConfigError(f"{item_path}: expected a non-empty string, got {item!r}")
            out[attr] = item
    election = LeaderElection(**out)
    if election.resource_lock != "leases":
        raise ConfigError(
            f"{path}.resourceLock: only 'leases' is supported, got {election.resource_lock!r}"
        )
    for name, seconds in (
        ("leaseDuration", election.lease_duration),
        ("renewDeadline", election.renew_deadline),
        ("retryPeriod", election.retry_period),
    ):
        if election.leader_elect and seconds <= 0:
            raise ConfigError(f"{path}.{name}: must be greater than zero")
    if election.leader_elect:
        if election.lease_duration <= election.renew_deadline:
            raise ConfigError(f"{path}.leaseDuration: must be greater than renewDeadline")
        if election.renew_deadline <= JITTER_FACTOR * election.retry_period:
            raise ConfigError(
                f"{path}.renewDeadline: must be greater than retryPeriod*{JITTER_FACTOR}"
            )
    return election
