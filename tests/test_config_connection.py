"""clientConnection and leaderElection: upstream defaults, durations, errors by field path.

# pkg/scheduler/apis/config/v1/defaults.go; component-base leader election defaults;
# client-go/tools/leaderelection/leaderelection.go NewLeaderElector validation.
"""

from __future__ import annotations

import pytest

from ksched import ConfigError, load_config
from ksched.config._connection import _duration


def test_defaults_are_upstreams() -> None:
    config = load_config("{}")
    conn, election = config.client_connection, config.leader_election
    assert (conn.qps, conn.burst, conn.kubeconfig) == (50.0, 100, "")
    assert conn.content_type == "application/vnd.kubernetes.protobuf"
    assert election.leader_elect is True
    assert (election.resource_lock, election.resource_name, election.resource_namespace) == (
        "leases",
        "kube-scheduler",
        "kube-system",
    )
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        15.0,
        10.0,
        2.0,
    )


def test_fields_are_read() -> None:
    config = load_config(
        "clientConnection: {kubeconfig: /k, qps: 5000, burst: 6000}\n"
        "leaderElection: {leaderElect: false, resourceName: s, resourceNamespace: n,"
        " leaseDuration: 1m30s, renewDeadline: 1m, retryPeriod: 500ms}\n"
    )
    conn, election = config.client_connection, config.leader_election
    assert (conn.kubeconfig, conn.qps, conn.burst) == ("/k", 5000.0, 6000)
    assert not election.leader_elect
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        90.0,
        60.0,
        0.5,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clientConnection: {qps: fast}", "clientConnection.qps: expected a non-negative number"),
        (
            "clientConnection: {burst: 1.5}",
            "clientConnection.burst: expected a non-negative integer",
        ),
        ("clientConnection: {timeout: 1}", "clientConnection.timeout: unknown field"),
        ("leaderElection: {leaderElect: yes please}", "leaderElection.leaderElect: expected true"),
        ("leaderElection: {resourceLock: endpoints}", "leaderElection.resourceLock: only 'leases'"),
        (
            "leaderElection: {leaseDuration: 15}",
            "leaderElection.leaseDuration: expected a duration",
        ),
        (
            "leaderElection: {renewDeadline: 2s, retryPeriod: 2s}",
            "leaderElection.renewDeadline: must be greater than retryPeriod*1.2",
        ),
        (
            "leaderElection: {leaseDuration: 10s}",
            "leaderElection.leaseDuration: must be greater than renewDeadline",
        ),
    ],
)
def test_errors_name_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("*", r"\*").replace(".", r"\.")):
        load_config(text)


@pytest.mark.parametrize(
    ("raw", "seconds"), [("15s", 15.0), ("1h2m3s", 3723.0), ("250ms", 0.25), ("1.5s", 1.5)]
)
def test_go_durations(raw: str, seconds: float) -> None:
    assert _duration(raw, "f") == pytest.approx(seconds)


def test_no_election_settings_checked_when_election_is_off() -> None:
    config = load_config("leaderElection: {leaderElect: false, leaseDuration: 1s}")
    assert config.leader_election.lease_duration == 1.0


def test_dump_writes_both_sections_and_reads_back() -> None:
    """`ksched config defaults` prints clientConnection and leaderElection as
    kube-scheduler's --write-config-to does; what it prints parses to the same config."""
    from ksched.config import LeaderElection, SchedulerConfig, dump_config, parse_config

    config = SchedulerConfig(
        leader_election=LeaderElection(lease_duration=90.5, renew_deadline=1.5, retry_period=0.25)
    )
    dumped = dump_config(config)
    assert dumped["leaderElection"]["leaseDuration"] == "1m30.5s"
    assert dumped["leaderElection"]["renewDeadline"] == "1.5s"
    assert dumped["leaderElection"]["retryPeriod"] == "250ms"
    assert dumped["clientConnection"]["qps"] == 50.0
    assert parse_config(dumped).leader_election == config.leader_election
    assert parse_config(dumped).client_connection == config.client_connection
