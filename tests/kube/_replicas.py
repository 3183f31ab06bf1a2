"""`ksched run` processes for the kube tests: their config, health port and log."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import httpx

if TYPE_CHECKING:
    from .conftest import Api

__all__ = ["Replica", "nodes_of", "poll", "write_config"]


def write_config(
    path: Path,
    ns: str,
    kubeconfig: Path,
    *,
    lease: tuple[str, str, str] = ("15s", "10s", "2s"),
    qps: int = 500,
) -> Path:
    duration, deadline, period = lease
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection:\n  kubeconfig: {kubeconfig}\n  qps: {qps}\n  burst: {qps}\n"
        "leaderElection:\n  leaderElect: true\n"
        f"  resourceName: ksched-{ns}\n  resourceNamespace: {ns}\n"
        f"  leaseDuration: {duration}\n  renewDeadline: {deadline}\n  retryPeriod: {period}\n"
        f"profiles:\n- schedulerName: ksched-{ns}\n"
    )
    return path


class Replica:
    """One ``ksched run`` process; its stderr is kept in ``<tag>.log``."""

    def __init__(
        self, config: Path, tmp: Path, tag: str, backend: str = "asyncio", *, verbose: bool = False
    ) -> None:
        self.ready = tmp / f"{tag}.port"
        self.log = tmp / f"{tag}.log"
        env = {
            **os.environ,
            "KSCHED_READY_FILE": str(self.ready),
            "KSCHED_ASYNC_BACKEND": backend,
        }
        cmd = [sys.executable, "-c", "from ksched.cli import main; raise SystemExit(main())"]
        with open(self.log, "wb") as err:
            self.p = subprocess.Popen(
                [
                    *cmd,
                    "run",
                    "--config",
                    str(config),
                    "--health-address",
                    "127.0.0.1:0",
                    *(["-v"] if verbose else []),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    async def get(self, path: str, *, token: str | None = None) -> tuple[int, str]:
        port = int(self.ready.read_text())
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(verify=False, timeout=5) as http:
            r = await http.get(f"https://127.0.0.1:{port}{path}", headers=headers)
        return r.status_code, r.text

    def first_bind_at(self) -> float | None:
        """The wall-clock time of this replica's first logged bind (``verbose``), or None."""
        for line in self.log.read_text(errors="replace").splitlines():
            if "Successfully bound pod to node" in line:
                stamp = line.split(" ", 1)[0].removeprefix("ts=")
                when = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")
                return when.replace(tzinfo=dt.UTC).timestamp()
        return None

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(5)


async def poll(predicate: object, timeout: float, what: str, interval: float = 0.1) -> float:
    """Await ``predicate()`` (sync or async) true; seconds it took. TimeoutError names it."""
    start = time.monotonic()
    with anyio.move_on_after(timeout):
        while True:
            result = predicate()  # type: ignore[operator]  # sync or async callable
            if not isinstance(result, bool):
                result = await result
            if result:
                return time.monotonic() - start
            await anyio.sleep(interval)
    raise TimeoutError(f"{what} within {timeout}s")


async def nodes_of(api: Api) -> list[dict[str, object]]:
    body = await api.client.request(
        "GET", "/api/v1/nodes", params={"labelSelector": f"ksched-test={api.ns}"}
    )
    return list(body["items"])
