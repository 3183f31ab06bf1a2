"""client-go credential plugins: run a kubeconfig's ``exec`` command for a credential.

# client-go plugin/pkg/client/auth/exec/exec.go (refreshCredsLocked, wrapCmdRunErrorLocked),
# pkg/apis/clientauthentication/v1 types.go, rest/exec.go ConfigToExecCluster
The plugin gets the process environment plus the kubeconfig's ``env``, and
``KUBERNETES_EXEC_INFO``: an ExecCredential whose ``spec.interactive`` is false (ksched
never hands a plugin a terminal) and, with ``provideClusterInfo``, ``spec.cluster``. It
prints an ExecCredential of the same apiVersion whose ``status`` holds a token or a
client certificate and key, optionally with an ``expirationTimestamp``.

The command runs as a child process through anyio (never on the event loop), with a
deadline, and its output read up to a bound; what it writes to stderr goes to the log.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import subprocess
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.abc
import attrs
import httpx

from .._errors import KschedError

__all__ = [
    "API_VERSIONS",
    "CredentialError",
    "ExecConfig",
    "ExecCredential",
    "ExecError",
    "run_plugin",
]

log = logging.getLogger("ksched.kube")

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
EXEC_INFO_ENV = "KUBERNETES_EXEC_INFO"
INSTALL_HINT_HELP = (
    "\n\nIt looks like you are trying to use a client-go credential plugin that is not "
    "installed.\n\nTo learn more about this feature, consult the documentation available "
    "at:\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/"
    "#client-go-credential-plugins"
)
MAX_OUTPUT = 1 << 20
"""Bytes of stdout (and of stderr) read from a plugin; more is an error."""


class CredentialError(KschedError, httpx.TransportError):
    """No credential could be had (an unreadable token file, a failing plugin).

    As in client-go, where it is the request's round-trip error, it fails the request
    like a connection error: retried with backoff, the watch started again.
    """


class ExecError(CredentialError):
    """The credential plugin could not run or gave no usable credential."""


@attrs.frozen(kw_only=True)
class ExecConfig:
    """A kubeconfig user's ``exec`` section (``interactiveMode`` already defaulted)."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = attrs.field(default=(), repr=False)  # may hold secrets
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"
    timeout: float = 60.0
    """Seconds the command may take (client-go waits forever; a daemon cannot)."""


@attrs.frozen
class ExecCredential:
    """What a plugin returned."""

    token: str = attrs.field(default="", repr=False)
    cert_pem: bytes = attrs.field(default=b"", repr=False)
    key_pem: bytes = attrs.field(default=b"", repr=False)
    expires: float | None = None
    """Wall-clock expiry (seconds since the epoch); None: until a 401 says otherwise."""


def exec_info(config: ExecConfig, cluster: Mapping[str, Any] | None) -> str:
    """The ``KUBERNETES_EXEC_INFO`` value for ``config``."""
    spec: dict[str, Any] = {"interactive": False}
    if config.provide_cluster_info and cluster is not None:
        spec["cluster"] = dict(cluster)
    return json.dumps({"apiVersion": config.api_version, "kind": "ExecCredential", "spec": spec})


async def run_plugin(config: ExecConfig, cluster: Mapping[str, Any] | None) -> ExecCredential:
    """Run the plugin once and read its ExecCredential.

    Raises:
        ExecError: not found, failed, timed out, or printed no usable credential.
    """
    env = {**os.environ, **dict(config.env), EXEC_INFO_ENV: exec_info(config, cluster)}
    try:
        process = await anyio.open_process(
            [config.command, *config.args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:  # not found, not executable
        hint = INSTALL_HINT_HELP + (f"\n\n{config.install_hint}" if config.install_hint else "")
        raise ExecError(f"exec: executable {config.command} not found{hint}") from exc
    async with process:
        stdout, stderr, code = await _communicate(process, config)
    if stderr.strip():
        log.info("exec plugin %s: %s", config.command, stderr.decode(errors="replace").strip())
    if code != 0:
        raise ExecError(f"exec: executable {config.command} failed with exit code {code}")
    return _credential(stdout, config.api_version)


async def _communicate(process: anyio.abc.Process, config: ExecConfig) -> tuple[bytes, bytes, int]:
    """Stdout, stderr and exit code, within the deadline; the process killed past it."""
    assert process.stdout is not None and process.stderr is not None
    out: dict[str, bytes] = {}

    async def drain(name: str, stream: anyio.abc.ByteReceiveStream) -> None:
        chunks, size = [], 0
        async for chunk in stream:
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise ExecError(f"exec: {config.command} wrote more than {MAX_OUTPUT} bytes")
            chunks.append(chunk)
        out[name] = b"".join(chunks)

    try:
        with anyio.fail_after(config.timeout):
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(drain, "stdout", process.stdout)
                    tg.start_soon(drain, "stderr", process.stderr)
            except* ExecError as group:
                process.kill()
                raise group.exceptions[0] from None
            code = await process.wait()
    except TimeoutError:
        process.kill()
        raise ExecError(
            f"exec: executable {config.command} did not finish within {config.timeout:g}s"
        ) from None
    return out["stdout"], out["stderr"], code


def _credential(stdout: bytes, api_version: str) -> ExecCredential:
    """exec.go's checks of the plugin's answer, with its messages."""
    try:
        answer = json.loads(stdout)
    except ValueError as exc:
        raise ExecError(f"decoding stdout: {exc}") from None
    if not isinstance(answer, Mapping):
        raise ExecError("decoding stdout: expected an ExecCredential object")
    returned = answer.get("apiVersion")
    if returned != api_version:
        raise ExecError(
            f"exec plugin is configured to use API version {api_version}, "
            f"plugin returned version {returned}"
        )
    if answer.get("kind") != "ExecCredential":
        raise ExecError(f"decoding stdout: kind {answer.get('kind')!r} is not ExecCredential")
    status = answer.get("status")
    if not isinstance(status, Mapping):
        raise ExecError("exec plugin didn't return a status field")
    token, cert, key = (
        _text(status, f) for f in ("token", "clientCertificateData", "clientKeyData")
    )
    if not (token or cert or key):
        raise ExecError("exec plugin didn't return a token or cert/key pair")
    if bool(cert) != bool(key):
        raise ExecError("exec plugin returned only certificate or key, not both")
    return ExecCredential(
        token=token,
        cert_pem=cert.encode(),
        key_pem=key.encode(),
        expires=_expiry(status.get("expirationTimestamp")),
    )


def _text(status: Mapping[str, Any], field: str) -> str:
    value = status.get(field) or ""
    if not isinstance(value, str):
        raise ExecError(f"decoding stdout: status.{field}: expected a string")
    return value


def _expiry(raw: object) -> float | None:
    if raw is None:
        return None
    try:
        stamp = datetime.datetime.fromisoformat(str(raw))
    except ValueError:
        raise ExecError(f"decoding stdout: status.expirationTimestamp: {raw!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.UTC)
    return stamp.timestamp()
