"""Where kube-apiserver is and how to authenticate to it: kubeconfig and in-cluster config.

# client-go: tools/clientcmd (kubeconfig), rest/config.go InClusterConfig
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import httpx
import yaml

from .._errors import ConfigError
from ._transport import KeepAliveTransport

__all__ = ["SERVICE_ACCOUNT", "KubeConfig", "in_cluster_config", "load_kubeconfig"]

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@attrs.frozen(kw_only=True)
class KubeConfig:
    """Where the API server is and how to authenticate to it."""

    server: str
    token: str = ""
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False

    def ssl_context(self) -> ssl.SSLContext | bool:
        if not self.server.startswith("https"):
            return False
        if self.insecure:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file and self.key_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "ksched"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def http_client(self, **options: Any) -> httpx.AsyncClient:
        """An httpx client for this server (``options`` go to httpx, e.g. ``transport``)."""
        options.setdefault("timeout", httpx.Timeout(30.0, connect=5.0))
        options.setdefault("limits", httpx.Limits(max_connections=32, max_keepalive_connections=16))
        if not _proxied(self.server):
            # ksched's own keep-alive pool; through a proxy (HTTPS_PROXY and friends, as
            # client-go honours them) httpx's default transport is used instead.
            options.setdefault("transport", KeepAliveTransport(self.ssl_context()))
        return httpx.AsyncClient(
            base_url=self.server, headers=self.headers(), verify=self.ssl_context(), **options
        )


def _proxied(server: str) -> bool:
    """Whether the proxy environment variables send requests to ``server`` via a proxy."""
    url = httpx.URL(server)
    proxies = urllib.request.getproxies()
    if not proxies.get(url.scheme) and not proxies.get("all"):
        return False
    return not urllib.request.proxy_bypass(url.host)


def _materialize(data_b64: str, suffix: str) -> str:
    """Inline kubeconfig data (``*-data`` fields) written to a private file for ssl."""
    handle, name = tempfile.mkstemp(prefix="ksched-", suffix=suffix)
    with os.fdopen(handle, "wb") as out:
        out.write(base64.b64decode(data_b64))
    return name


def load_kubeconfig(path: str | Path, *, context: str | None = None) -> KubeConfig:
    """The current (or named) context of a kubeconfig file.

    Raises:
        ConfigError: unreadable file or a missing/malformed entry, named with the file.
    """
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read kubeconfig: {exc}") from exc

    def fail(message: str) -> ConfigError:
        return ConfigError(f"{path}: {message}")

    if not isinstance(raw, Mapping):
        raise fail("not a kubeconfig (expected a mapping)")

    def named(section: str, name: str) -> Mapping[str, Any]:
        for i, item in enumerate(raw.get(section) or []):
            if isinstance(item, Mapping) and item.get("name") == name:
                value = item.get(section[:-1])
                if not isinstance(value, Mapping):
                    raise fail(f"{section}[{i}].{section[:-1]}: expected a mapping")
                return value
        raise fail(f"{section}: no entry named {name!r}")

    ctx_name = context or raw.get("current-context")
    if not ctx_name:
        raise fail("current-context: not set")
    ctx = named("contexts", ctx_name)
    cluster = named("clusters", str(ctx.get("cluster", "")))
    user = named("users", str(ctx["user"])) if ctx.get("user") else {}
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("http://", "https://")):
        raise fail(
            f"clusters[{ctx.get('cluster')}].server: expected an http(s) URL, got {server!r}"
        )
    base = path.parent

    def file_field(section: Mapping[str, Any], field: str, suffix: str) -> str | None:
        if section.get(f"{field}-data"):
            return _materialize(str(section[f"{field}-data"]), suffix)
        value = section.get(field)
        return str(base / value) if value else None

    token = str(user.get("token") or "")
    if not token and user.get("tokenFile"):
        try:
            token = (base / str(user["tokenFile"])).read_text().strip()
        except OSError as exc:
            raise fail(f"users[{ctx.get('user')}].tokenFile: {exc}") from exc
    return KubeConfig(
        server=server.rstrip("/"),
        token=token,
        ca_file=file_field(cluster, "certificate-authority", ".crt"),
        cert_file=file_field(user, "client-certificate", ".crt"),
        key_file=file_field(user, "client-key", ".key"),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
    )


def in_cluster_config(root: Path = SERVICE_ACCOUNT) -> KubeConfig:
    """The pod's service account: token, CA and KUBERNETES_SERVICE_HOST/PORT.

    Raises:
        ConfigError: not running in a pod (no environment or no token file).
    """
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError(
            "no kubeconfig given and not in a cluster "
            "(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset): pass --kubeconfig"
        )
    try:
        token = (root / "token").read_text().strip()
    except OSError as exc:
        raise ConfigError(f"{root / 'token'}: cannot read the service account token") from exc
    if ":" in host:
        host = f"[{host}]"
    ca = root / "ca.crt"
    return KubeConfig(
        server=f"https://{host}:{port}", token=token, ca_file=str(ca) if ca.exists() else None
    )
