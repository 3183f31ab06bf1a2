"""``ksched record`` against a real kube-apiserver: what a trace holds, the read-only RBAC
role it ships (examples/kube/record-rbac.yaml, applied with kubectl, a token from
``kubectl create token``), and no duplicate or missing record across a watch expiry (410)
and an API server restart."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ksched.api import Pod
from ksched.kube import KubeClient, TokenBucket
from ksched.kube._record import Recorder
from ksched.trace import Anonymizer, Op, TraceEvent, TraceHeader, TraceWriter, open_trace

from ._plane import REPO, ControlPlane, missing
from ._support import ChaosProxy, wait_until
from .conftest import Api, http_client, kube_config

pytestmark = pytest.mark.anyio

KSCHED = Path(sys.executable).with_name("ksched")


def _events(path: Path) -> tuple[list[Any], list[TraceEvent]]:
    with open_trace(path) as trace:
        initial = list(trace.initial)
        return initial, list(trace.events)


def _lines(path: Path) -> list[dict[str, Any]]:
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


async def _bind(api: Api, name: str, node: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": api.ns},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    await api.client.request("POST", f"/api/v1/namespaces/{api.ns}/pods/{name}/binding", body=body)


def _kubectl(kubeconfig: Path, *args: str) -> str:
    result = subprocess.run(
        ["kubectl", f"--kubeconfig={kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_record_as_the_example_rbac_role(
    plane: ControlPlane, api: Api, tmp_path: Path
) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("needs kubectl")
    admin = plane.kubeconfig(tmp_path / "admin")
    rbac = str(REPO / "examples/kube/record-rbac.yaml")
    _kubectl(admin, "apply", "-f", rbac)
    token = _kubectl(admin, "-n", "kube-system", "create", "token", "ksched-recorder").strip()
    kubeconfig = tmp_path / "recorder"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {"server": plane.url, "insecure-skip-tls-verify": True},
                    }
                ],
                "users": [{"name": "r", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "r"}}],
                "current-context": "c",
            }
        )
    )
    node = f"{api.ns}-n0"
    await api.create_node(node)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds", "namespace": api.ns},
        "stringData": {"password": "hunter2"},
    }
    await api.client.request("POST", f"/api/v1/namespaces/{api.ns}/secrets", body=secret)
    trace = tmp_path / "trace.jsonl"
    log = tmp_path / "record.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                str(KSCHED),
                "record",
                "--kubeconfig",
                str(kubeconfig),
                "-o",
                str(trace),
                "--duration",
                "6s",
                "-v",
            ],
            stdout=out,
            stderr=out,
        )
        try:
            await wait_until(lambda: "initial state written" in log.read_text(), 30)
            pod = await api.create_pod("web", scheduler="elsewhere")
            assert pod["metadata"]["uid"]
            await _bind(api, "web", node)
            await api.client.request(
                "DELETE",
                f"/api/v1/namespaces/{api.ns}/pods/web",
                params={"gracePeriodSeconds": "0"},
            )
            code = await anyio.to_thread.run_sync(proc.wait, 30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
    text = log.read_text()
    assert code == 0, text
    assert "Forbidden" not in text, text  # every list and watch was allowed
    assert "hunter2" not in trace.read_text() and '"Secret"' not in trace.read_text()
    initial, events = _events(trace)
    assert node in {getattr(o, "name", "") for o in initial}
    key = f"{api.ns}/web"
    mine = [e for e in events if e.key == key]
    assert [(e.op, e.node) for e in mine] == [
        (Op.CREATE, None),
        (Op.BIND, node),
        (Op.UPDATE, None),  # the API server marks it terminating, then removes it
        (Op.DELETE, None),
    ]
    terminating = mine[2].object
    assert isinstance(terminating, Pod) and terminating.is_terminating
    assert events[-1].op is Op.END and 5.0 <= events[-1].t <= 9.0


async def test_anonymized_trace_names_nothing_of_the_cluster(
    plane: ControlPlane, api: Api, tmp_path: Path
) -> None:
    node = f"{api.ns}-secret-node"
    await api.create_node(node)
    trace = tmp_path / "anon.jsonl.gz"
    stop = anyio.Event()
    async with http_client(plane.url) as http:
        with TraceWriter(trace, TraceHeader(anonymized=True)) as writer:
            recorder = Recorder(
                KubeClient(http, TokenBucket(0, 0)), writer.write_line, anonymizer=Anonymizer()
            )
            async with anyio.create_task_group() as tg:
                tg.start_soon(recorder.record, stop)
                await recorder.synced.wait()
                await api.create_pod("private-app", scheduler="elsewhere")
                await _bind(api, "private-app", node)
                await wait_until(lambda: recorder.counts["bind"] >= 1, 10)
                stop.set()
    text = "".join(json.dumps(line) for line in _lines(trace))
    assert api.ns not in text and "private-app" not in text and node not in text
    initial, events = _events(trace)
    binds = [e for e in events if e.op is Op.BIND]
    nodes = {o.name: o for o in initial if type(o).__name__ == "Node"}
    # the node's name, its hostname label and the binding all got the same token
    assert binds[0].node in nodes
    assert nodes[binds[0].node].labels["kubernetes.io/hostname"] == binds[0].node


@pytest.fixture(scope="module")
def private_plane() -> Iterator[ControlPlane]:
    """Without the watch cache, so that an etcd compaction is a 410 for the watch."""
    why = missing()
    if why is not None:
        pytest.skip(why)
    control = ControlPlane(watch_cache=False).start()
    try:
        yield control
    finally:
        control.stop()


def _no_duplicates(events: list[TraceEvent], initial_keys: set[str]) -> Counter[str]:
    """Each pod's records in order: created at most once while it exists, deleted once."""
    alive = set(initial_keys)
    ops: Counter[str] = Counter()
    for event in events:
        if event.kind != "Pod":
            continue
        ops[f"{event.op}:{event.key}"] += 1
        if event.op is Op.CREATE:
            assert event.key not in alive, f"{event.key} created twice"
            alive.add(event.key)
        elif event.op is Op.DELETE:
            assert event.key in alive, f"{event.key} deleted while not there"
            alive.discard(event.key)
    return ops


async def test_record_survives_watch_expiry_and_a_restart(
    private_plane: ControlPlane, anyio_backend: str, tmp_path: Path
) -> None:
    ns = f"rec-{anyio_backend}"
    trace = tmp_path / "trace.jsonl"
    stop = anyio.Event()
    async with kube_config(private_plane.url).http_client() as admin_http:
        api = Api(KubeClient(admin_http, TokenBucket(0, 0)), ns)
        await api.create_namespace(ns)
        for i in range(3):
            await api.create_pod(f"old{i}", scheduler="elsewhere")
        async with anyio.create_task_group() as tg:
            proxy = ChaosProxy(private_plane.port)
            port = await tg.start(proxy.serve)
            with TraceWriter(trace) as writer:
                async with (
                    http_client(f"https://127.0.0.1:{port}") as http,
                    anyio.create_task_group() as recording,
                ):
                    recorder = Recorder(KubeClient(http, TokenBucket(0, 0)), writer.write_line)
                    recording.start_soon(recorder.record, stop)
                    await recorder.synced.wait()
                    for reflector in recorder.reflectors.values():
                        reflector.initial_backoff, reflector.max_backoff = 0.2, 1.0
                    pods = recorder.reflectors["Pod"]
                    # partition, change, compact: the watch's resourceVersion is gone (410)
                    proxy.paused = True
                    proxy.drop_all()
                    await api.client.request(
                        "DELETE",
                        f"/api/v1/namespaces/{ns}/pods/old0",
                        params={"gracePeriodSeconds": "0"},
                    )
                    await api.create_pod("new0", scheduler="elsewhere")
                    for i in range(5):
                        await api.create_pod(f"churn{i}", scheduler="elsewhere")
                    await anyio.to_thread.run_sync(private_plane.compact)
                    proxy.paused = False
                    await wait_until(lambda: pods.lists >= 2, 30)
                    # and the API server restarts
                    await anyio.to_thread.run_sync(private_plane.stop_apiserver)
                    await anyio.to_thread.run_sync(private_plane.start_apiserver)
                    await api.create_pod("after", scheduler="elsewhere")
                    # new0, churn0-4, after
                    await wait_until(lambda: recorder.counts["create"] >= 7, 30)
                    stop.set()
            tg.cancel_scope.cancel()
    initial, events = _events(trace)
    initial_keys = {f"{o.namespace}/{o.name}" for o in initial if type(o).__name__ == "Pod"}
    assert {f"{ns}/old{i}" for i in range(3)} <= initial_keys
    ops = _no_duplicates(events, initial_keys)
    assert ops[f"delete:{ns}/old0"] == 1
    for name in ("new0", "after", *(f"churn{i}" for i in range(5))):
        assert ops[f"create:{ns}/{name}"] == 1, name
    assert not any(k.startswith(f"create:{ns}/old") for k in ops)
