"""Credentials against the real kube-apiserver: an exec plugin whose token expires mid-run
and one the server refuses (401), token files re-read, tls-server-name checked against the
serving certificate's SANs, inline keys that never touch the disk.

client-go: plugin/pkg/client/auth/exec (cached until expirationTimestamp, run again on a
401), transport/token_source.go (a token file re-read after a minute, reset by a 401),
tools/clientcmd (tls-server-name is both the SNI and the name checked).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from ksched import ConfigError
from ksched.kube import ApiError, KubeClient, TokenBucket, load_kubeconfig
from ksched.kube._credentials import ExecCredentials, TokenFileCredentials
from ksched.kube._exec import ExecConfig, ExecError, run_plugin

from ._plane import EXTRA_TOKENS, ControlPlane

pytestmark = pytest.mark.anyio

V1, V1BETA1 = "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"

PLUGIN = """\
import datetime, json, os, sys
state = os.environ["PLUGIN_STATE"]
tokens = os.environ["PLUGIN_TOKENS"].split(",")
runs = len(open(state).read().splitlines()) if os.path.exists(state) else 0
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
with open(state, "a") as out:
    out.write(json.dumps(info) + "\\n")
status = {"token": tokens[min(runs, len(tokens) - 1)]}
ttl = float(os.environ.get("PLUGIN_TTL", "0"))
if ttl:
    now = datetime.datetime.now(datetime.timezone.utc)
    status["expirationTimestamp"] = (now + datetime.timedelta(seconds=ttl)).isoformat()
print("plugin run", runs + 1, file=sys.stderr)
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}))
"""


def _kubeconfig(path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def _plugin_user(tmp: Path, version: str, tokens: list[str], ttl: float) -> dict[str, Any]:
    script = tmp / "plugin.py"
    script.write_text(PLUGIN)
    env = {"PLUGIN_STATE": str(tmp / "runs"), "PLUGIN_TOKENS": ",".join(tokens)}
    if ttl:
        env["PLUGIN_TTL"] = str(ttl)
    return {
        "exec": {
            "apiVersion": version,
            "command": sys.executable,
            "args": [str(script)],
            "env": [{"name": k, "value": v} for k, v in env.items()],
            "interactiveMode": "Never",
            "provideClusterInfo": True,
        }
    }


def _runs(tmp: Path) -> list[dict[str, Any]]:
    path = tmp / "runs"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _httpx_transport() -> httpx.AsyncBaseTransport:
    return httpx.AsyncHTTPTransport(verify=False)


PATHS: dict[str, Callable[[], httpx.AsyncBaseTransport] | None] = {
    "fast-path": None,
    "httpx-path": _httpx_transport,
}


@pytest.mark.parametrize("version", [V1, V1BETA1])
@pytest.mark.parametrize("path", list(PATHS))
async def test_exec_plugin_token_expires_mid_run_and_a_401_runs_it_again(
    plane: ControlPlane,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    version: str,
    path: str,
) -> None:
    ttl = 1.5
    # run 1: a good token (expires after ttl); run 2: one the server refuses; run 3: good
    user = _plugin_user(tmp_path, version, [EXTRA_TOKENS[0], "refused", EXTRA_TOKENS[1]], ttl)
    config = load_kubeconfig(
        _kubeconfig(
            tmp_path / "config", {"server": plane.url, "insecure-skip-tls-verify": True}, user
        )
    )
    assert isinstance(config.credentials, ExecCredentials)
    make = PATHS[path]
    options = {} if make is None else {"transport": make()}
    caplog.set_level(logging.INFO, logger="ksched.kube")
    async with config.http_client(**options) as http:
        client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
        await client.request("GET", "/api/v1/namespaces/default")
        await client.request("GET", "/api/v1/namespaces/kube-system")
        assert len(_runs(tmp_path)) == 1  # cached until it expires
        first = _runs(tmp_path)[0]
        await anyio.sleep(ttl + 0.1)  # real time: the plugin's expiry is wall-clock
        await client.request("GET", "/api/v1/namespaces/default")
        # expired: run 2; its token got a 401: run 3, and the request went once more
        assert len(_runs(tmp_path)) == 3
        events = [
            e
            async for e in client.stream(
                "/api/v1/namespaces", {"watch": "1", "timeoutSeconds": "1"}, timeout=10
            )
        ]
        assert events and events[0]["type"] == "ADDED"
        assert len(_runs(tmp_path)) == 3
    assert first["apiVersion"] == version and first["kind"] == "ExecCredential"
    assert first["spec"]["interactive"] is False
    assert first["spec"]["cluster"]["server"] == plane.url
    assert first["spec"]["cluster"]["insecure-skip-tls-verify"] is True
    assert "exec plugin" in caplog.text and "plugin run 3" in caplog.text


async def test_a_plugin_that_never_gives_a_good_token_ends_in_401(
    plane: ControlPlane, tmp_path: Path
) -> None:
    user = _plugin_user(tmp_path, V1, ["refused"], 0)
    config = load_kubeconfig(
        _kubeconfig(
            tmp_path / "config", {"server": plane.url, "insecure-skip-tls-verify": True}, user
        )
    )
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
        with pytest.raises(ApiError) as caught:
            await client.request("GET", "/api/v1/namespaces/default")
    assert caught.value.status == 401
    assert len(_runs(tmp_path)) == 2  # once, and once more after the 401: no loop


async def test_token_file_is_re_read_after_a_minute_and_on_401(
    plane: ControlPlane, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text(EXTRA_TOKENS[0] + "\n")
    config = load_kubeconfig(
        _kubeconfig(
            tmp_path / "config",
            {"server": plane.url, "insecure-skip-tls-verify": True},
            {"tokenFile": "token"},
        )
    )
    creds = config.credentials
    assert isinstance(creds, TokenFileCredentials)
    now = [0.0]
    creds.clock = lambda: now[0]
    creds.invalidate(creds.cached())  # restart the clock at the fake 0
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
        await client.request("GET", "/api/v1/namespaces/default")
        token.write_text("rotated-but-not-valid\n")
        now[0] = 49.0  # within a minute less 10 s of leeway: the copy in memory serves
        await client.request("GET", "/api/v1/namespaces/default")
        assert creds.cached() == f"Bearer {EXTRA_TOKENS[0]}"
        now[0] = 51.0  # re-read: the new (refused) token goes out, a 401 resets it
        token.write_text(EXTRA_TOKENS[2])
        await client.request("GET", "/api/v1/namespaces/default")
        assert creds.cached() == f"Bearer {EXTRA_TOKENS[2]}"
        token.write_text("refused\n")
        now[0] = 200.0
        with pytest.raises(ApiError, match="401"):
            await client.request("GET", "/api/v1/namespaces/default")
        token.unlink()  # unreadable and stale: a clear error, no crash
        now[0] = 400.0
        with pytest.raises(Exception, match="failed to read token file"):
            await client.request("GET", "/api/v1/namespaces/default")


def _client_for(config: Any, transport: Callable[[], httpx.AsyncBaseTransport] | None) -> Any:
    return config.http_client(**({} if transport is None else {"transport": transport()}))


@pytest.mark.parametrize(
    ("host", "server_name", "ok"),
    [
        ("127.0.0.1", None, True),  # an IP SAN
        ("127.0.0.1", "kubernetes.default.svc", True),  # a DNS SAN
        ("127.0.0.1", "not-in-the-cert.example", False),  # the name checked is this one
        ("localhost", None, False),  # not a SAN
        ("localhost", "kubernetes", True),
    ],
)
@pytest.mark.parametrize("path", list(PATHS))
async def test_tls_server_name_is_the_name_checked(
    plane: ControlPlane, tmp_path: Path, host: str, server_name: str | None, ok: bool, path: str
) -> None:
    cluster: dict[str, Any] = {
        "server": f"https://{host}:{plane.port}",
        "certificate-authority": str(plane.ca_file),
    }
    if server_name:
        cluster["tls-server-name"] = server_name
    config = load_kubeconfig(_kubeconfig(tmp_path / "config", cluster, {"token": EXTRA_TOKENS[0]}))
    transport = PATHS[path]
    if transport is not None:
        context = config.ssl_context()
        transport = lambda: httpx.AsyncHTTPTransport(verify=context)  # noqa: E731
    async with _client_for(config, transport) as http:
        client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
        if ok:
            await client.request("GET", "/api/v1/namespaces/default")
        else:
            with pytest.raises(httpx.ConnectError) as caught:
                await client.request("GET", "/api/v1/namespaces/default")
            assert _verify_failure(caught.value)


def _verify_failure(exc: BaseException | None) -> bool:
    """Whether a certificate check failed somewhere in ``exc``'s chain."""
    while exc is not None:
        if isinstance(exc, ssl.SSLCertVerificationError) or "certificate verify failed" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def test_inline_certificates_and_keys_never_touch_the_disk(
    plane: ControlPlane, tmp_path: Path
) -> None:
    key, cert = tmp_path / "client.key", tmp_path / "client.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=ksched-test", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    user = {
        "token": EXTRA_TOKENS[0],
        "client-certificate-data": b64(cert),
        "client-key-data": b64(key),
    }
    cluster = {"server": plane.url, "certificate-authority-data": b64(plane.ca_file)}
    path = _kubeconfig(tmp_path / "config", cluster, user)
    key.unlink()
    cert.unlink()
    temp = Path(tempfile.gettempdir())
    before, fds = set(temp.iterdir()), _open_fds()
    config = load_kubeconfig(path)
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
        await client.request("GET", "/api/v1/namespaces/default")
    assert set(temp.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config"]
    assert not [
        p for p in temp.iterdir() if p.name.startswith("ksched-") and p.suffix in (".key", ".crt")
    ]
    leaked = {fd for fd in _open_fds() - fds if "memfd" in os.readlink(f"/proc/self/fd/{fd}")}
    assert not leaked


async def test_plugin_failures_are_clear_errors(tmp_path: Path) -> None:
    missing = ExecConfig(
        command="ksched-no-such-plugin", api_version=V1, install_hint="brew install it"
    )
    with pytest.raises(ExecError, match="executable ksched-no-such-plugin not found") as caught:
        await run_plugin(missing, None)
    assert "brew install it" in str(caught.value)
    failing = ExecConfig(command=sys.executable, api_version=V1, args=("-c", "raise SystemExit(3)"))
    with pytest.raises(ExecError, match="failed with exit code 3"):
        await run_plugin(failing, None)
    slow = ExecConfig(
        command=sys.executable,
        api_version=V1,
        args=("-c", "import time; time.sleep(30)"),
        timeout=0.5,
    )
    start = time.monotonic()
    with pytest.raises(ExecError, match=r"did not finish within 0\.5s"):
        await run_plugin(slow, None)
    assert time.monotonic() - start < 5

    def answer(**fields: Any) -> str:
        return json.dumps({"apiVersion": V1, "kind": "ExecCredential", **fields})

    for output, message in [
        ("not json", "decoding stdout"),
        (answer(apiVersion=V1BETA1, status={"token": "t"}), f"plugin returned version {V1BETA1}"),
        (answer(), "didn't return a status field"),
        (answer(status={}), "didn't return a token"),
        (answer(status={"clientKeyData": "k"}), "only certificate or key"),
        (answer(status={"token": "t", "expirationTimestamp": "soon"}), "expirationTimestamp"),
    ]:
        printing = ExecConfig(
            command=sys.executable, api_version=V1, args=("-c", f"print({output!r})")
        )
        with pytest.raises(ExecError, match=message):
            await run_plugin(printing, None)
    flood = ExecConfig(
        command=sys.executable, api_version=V1, args=("-c", "print('x' * 3_000_000)")
    )
    with pytest.raises(ExecError, match="wrote more than"):
        await run_plugin(flood, None)


def test_a_plugin_kubeconfig_with_a_bad_ca_fails_at_load(tmp_path: Path) -> None:
    user = _plugin_user(tmp_path, V1, ["t"], 0)
    cluster = {
        "server": "https://127.0.0.1:1",
        "certificate-authority-data": base64.b64encode(b"junk").decode(),
    }
    with pytest.raises(ConfigError, match="cannot set up TLS"):
        load_kubeconfig(_kubeconfig(tmp_path / "config", cluster, user))
    assert _runs(tmp_path) == []  # the plugin runs at the first request, not at load


def test_ksched_run_with_a_missing_plugin_exits_2_with_its_install_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ksched.cli import main

    user = {
        "exec": {
            "apiVersion": V1,
            "command": "ksched-test-no-such-plugin",
            "interactiveMode": "Never",
            "installHint": "install it with: pip install the-plugin",
        }
    }
    path = _kubeconfig(tmp_path / "config", {"server": "https://127.0.0.1:1"}, user)
    assert main(["run", "--kubeconfig", str(path), "--health-address", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert "exec: executable ksched-test-no-such-plugin not found" in err
    assert "install it with: pip install the-plugin" in err


async def test_a_failing_plugin_fails_requests_as_connection_errors_are_failed(
    tmp_path: Path,
) -> None:
    """client-go: the plugin's error is the request's round-trip error; KubeClient retries
    it with backoff as any connection error, then raises it."""
    user = {"exec": {"apiVersion": V1, "command": sys.executable, "interactiveMode": "Never",
                     "args": ["-c", "raise SystemExit(1)"]}}  # fmt: skip
    config = load_kubeconfig(
        _kubeconfig(tmp_path / "config", {"server": "https://127.0.0.1:1"}, user)
    )
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0), max_retries=2, backoff=0.01)
        with pytest.raises(httpx.TransportError, match="failed with exit code 1") as caught:
            await client.request("GET", "/api")
    assert isinstance(caught.value, ExecError)


def _self_signed(tmp: Path, name: str) -> tuple[Path, Path]:
    key, cert = tmp / f"{name}.key", tmp / f"{name}.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return key, cert


async def test_a_plugins_client_certificate_is_presented_and_rotated(tmp_path: Path) -> None:
    """A plugin may answer with clientCertificateData/clientKeyData: the TLS handshake
    presents it (a server that requires a client certificate sees its subject), and a
    new one after expiry closes the connections made with the old one."""
    import anyio.streams.tls

    server_key, server_cert = _self_signed(tmp_path, "server")
    clients = [_self_signed(tmp_path, f"client-{i}") for i in range(2)]
    bundle = tmp_path / "clients.pem"
    bundle.write_bytes(b"".join(c.read_bytes() for _, c in clients))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(server_cert, server_key)
    server.verify_mode = ssl.CERT_REQUIRED
    server.load_verify_locations(bundle)
    seen: list[str] = []

    async def handle(stream: anyio.streams.tls.TLSStream) -> None:
        async with stream:
            peer: Any = stream.extra(anyio.streams.tls.TLSAttribute.peer_certificate)
            seen.append(dict(x[0] for x in peer["subject"])["commonName"])
            try:
                while await stream.receive():  # one response per request, until it goes
                    await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            except (anyio.EndOfStream, anyio.BrokenResourceError, ssl.SSLError, OSError):
                pass

    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = tcp.extra(anyio.abc.SocketAttribute.local_port)
    listener = anyio.streams.tls.TLSListener(tcp, server, standard_compatible=False)
    script = tmp_path / "cert_plugin.py"
    pems = [(c.read_text(), k.read_text()) for k, c in clients]
    script.write_text(
        "import json, os, sys, datetime\n"
        f"pems = {pems!r}\n"
        "state = sys.argv[1]\n"
        "n = len(open(state).read()) if os.path.exists(state) else 0\n"
        "open(state, 'a').write('x')\n"
        "cert, key = pems[min(n, 1)]\n"
        "exp = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': "
        "'ExecCredential', 'status': {'clientCertificateData': cert, 'clientKeyData': key, "
        "'expirationTimestamp': exp.isoformat()}}))\n"
    )
    user = {"exec": {"apiVersion": V1, "command": sys.executable, "interactiveMode": "Never",
                     "args": [str(script), str(tmp_path / "state")]}}  # fmt: skip
    cluster = {"server": f"https://127.0.0.1:{port}", "certificate-authority": str(server_cert)}
    config = load_kubeconfig(_kubeconfig(tmp_path / "config", cluster, user))
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        async with config.http_client() as http:
            client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
            assert await client.request("GET", "/api") == {}
            await anyio.sleep(1.2)  # the certificate expires
            assert await client.request("GET", "/api") == {}
        tg.cancel_scope.cancel()
    assert seen == ["client-0", "client-1"]
    await listener.aclose()
