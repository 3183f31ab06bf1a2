"""Where kube-apiserver is and how to authenticate to it: kubeconfig and in-cluster config.

# client-go tools/clientcmd: loader.go (KUBECONFIG merge rules, relative paths),
# client_config.go (ClientConfig, getUserIdentificationPartialConfig), validation.go
# (validateClusterInfo, validateAuthInfo), helpers.go (parseProxyURL), api/v1/types.go
# and defaults.go; rest/config.go InClusterConfig
Several files (``KUBECONFIG=a:b``) merge as clientcmd merges them: the first file to set
a map key (a cluster, user or context name) wins, with its whole entry; the first file
to set ``current-context`` wins. A relative path is resolved against the folder of the
file that names it; an ``exec`` command only when it holds a ``/``.

No secret reaches the disk: ``*-data`` certificates and keys stay in memory (ssl reads a
key through an anonymous memory file, ``os.memfd_create``, closed once loaded); the
credentials a request carries come from ``_credentials`` (static, token file, plugin).
"""

from __future__ import annotations

import base64
import os
import ssl
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import httpx

from .._errors import ConfigError
from ._credentials import (
    Credentials,
    CredentialsAuth,
    ExecCredentials,
    StaticCredentials,
    TokenFileCredentials,
    basic_header,
    load_pem_chain,
)
from ._kubeconfig_files import (
    EXEC_EXTENSION,
    Entry,
    MergedConfig,
    decode_data,
    exec_config,
    merge_files,
)
from ._transport import KeepAliveTransport

__all__ = [
    "SERVICE_ACCOUNT",
    "KubeConfig",
    "in_cluster_config",
    "kubeconfig_paths",
    "load_kubeconfig",
]

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
PROXY_SCHEMES = ("http", "https", "socks5")


class _NamedContext(ssl.SSLContext):
    """A client context that presents and checks ``server_name`` (a kubeconfig's
    tls-server-name) whatever host the connection was made to, also through a proxy."""

    server_name: str

    def wrap_bio(
        self,
        incoming: ssl.MemoryBIO,
        outgoing: ssl.MemoryBIO,
        server_side: bool = False,
        server_hostname: str | bytes | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLObject:
        return super().wrap_bio(incoming, outgoing, server_side, self.server_name, session)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        kwargs["server_hostname"] = self.server_name
        sock, rest = args[0], args[1:4]  # server_side, do_handshake_on_connect, suppress_...
        return super().wrap_socket(sock, *rest, **kwargs)


def _no_credentials(config: KubeConfig) -> Credentials:
    """The credentials of a config built by hand: its token, if any."""
    if config.token:
        return StaticCredentials(f"Bearer {config.token}")
    if config.username or config.password:
        return StaticCredentials(basic_header(config.username, config.password))
    return Credentials()


@attrs.frozen(kw_only=True)
class KubeConfig:
    """Where the API server is and how to authenticate to it.

    ``credentials`` (derived from ``token`` or ``username``/``password`` unless given)
    supply each request's Authorization header; as client-go does, none is sent to a
    plain-HTTP server.
    """

    server: str
    token: str = attrs.field(default="", repr=False)
    ca_file: str | None = None
    ca_data: bytes | None = attrs.field(default=None, repr=False)
    cert_file: str | None = None
    key_file: str | None = None
    cert_data: bytes | None = attrs.field(default=None, repr=False)
    key_data: bytes | None = attrs.field(default=None, repr=False)
    insecure: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    username: str = ""
    password: str = attrs.field(default="", repr=False)
    impersonate: tuple[tuple[str, str], ...] = ()
    """Impersonate-* headers (a kubeconfig user's ``as``, ``as-groups``...)."""
    credentials: Credentials = attrs.field(
        default=attrs.Factory(_no_credentials, takes_self=True), eq=False, repr=False
    )

    @property
    def secure(self) -> bool:
        return self.server.startswith("https")

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS context for this server (False for plain HTTP).

        Raises:
            ConfigError: a CA, certificate or key that ssl cannot load.
        """
        if not self.secure:
            return False
        try:
            return self._ssl_context()
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise ConfigError(f"{self.server}: cannot set up TLS: {exc}") from exc

    def _ssl_context(self) -> ssl.SSLContext:
        cls = _NamedContext if self.tls_server_name else ssl.SSLContext
        context = cls(ssl.PROTOCOL_TLS_CLIENT)
        if isinstance(context, _NamedContext):
            context.server_name = str(self.tls_server_name)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif self.ca_data or self.ca_file:
            if self.ca_data:
                context.load_verify_locations(cadata=self.ca_data.decode("ascii"))
            else:
                context.load_verify_locations(cafile=self.ca_file)
        else:
            context.load_default_certs()
        if self.cert_data or self.key_data:
            key = self.key_data or (Path(self.key_file).read_bytes() if self.key_file else b"")
            cert = self.cert_data or (Path(self.cert_file).read_bytes() if self.cert_file else b"")
            load_pem_chain(context, cert, key)
        elif self.cert_file and self.key_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def headers(self) -> dict[str, str]:
        """The headers every request carries (authentication is ``credentials``')."""
        headers = {"Accept": "application/json", "User-Agent": "ksched"}
        for name, value in self.impersonate:
            headers[name] = value  # as-groups repeat: joined below
        groups = [v for k, v in self.impersonate if k == "Impersonate-Group"]
        if len(groups) > 1:
            headers["Impersonate-Group"] = ", ".join(groups)
        return headers

    def http_client(self, **options: Any) -> httpx.AsyncClient:
        """An httpx client for this server (``options`` go to httpx, e.g. ``transport``)."""
        options.setdefault("timeout", httpx.Timeout(30.0, connect=5.0))
        options.setdefault("limits", httpx.Limits(max_connections=32, max_keepalive_connections=16))
        context = self.ssl_context()
        if "transport" not in options:
            options["transport"] = self._transport(context, options["limits"])
        transport = options["transport"]
        if isinstance(context, ssl.SSLContext):
            on_rotate = getattr(transport, "drop_idle", lambda: None)
            self.credentials.attach(context, on_rotate)
        if self.secure and "auth" not in options:
            options["auth"] = CredentialsAuth(self.credentials)
        return httpx.AsyncClient(
            base_url=self.server, headers=self.headers(), verify=context, **options
        )

    def _transport(
        self, context: ssl.SSLContext | bool, limits: httpx.Limits
    ) -> httpx.AsyncBaseTransport:
        verify: ssl.SSLContext | bool = context if isinstance(context, ssl.SSLContext) else True
        if self.proxy_url:
            return httpx.AsyncHTTPTransport(verify=verify, limits=limits, proxy=self.proxy_url)
        if _proxied(self.server):
            # Through a proxy of the environment (HTTPS_PROXY and friends, as client-go
            # honours them) httpx's own transport is used instead of ksched's pool.
            return httpx.AsyncHTTPTransport(verify=verify, limits=limits, trust_env=True)
        return KeepAliveTransport(context)


def _proxied(server: str) -> bool:
    """Whether the proxy environment variables send requests to ``server`` via a proxy."""
    url = httpx.URL(server)
    proxies = urllib.request.getproxies()
    if not proxies.get(url.scheme) and not proxies.get("all"):
        return False
    return not urllib.request.proxy_bypass(url.host)


def kubeconfig_paths(flag: str | Path | None = None) -> list[Path]:
    """The files to read: ``flag`` alone if given, else the ``KUBECONFIG`` list."""
    if flag:
        return [Path(flag)]
    listed = os.environ.get("KUBECONFIG", "").split(os.pathsep)
    return [Path(p) for p in dict.fromkeys(listed) if p]


def load_kubeconfig(path: str | Path | list[Path], *, context: str | None = None) -> KubeConfig:
    """The current (or the named) context of a kubeconfig, or of several merged.

    ``path`` may be a list of files (``KUBECONFIG``): missing ones are skipped, the
    rest merged by client-go's rules. A single path must exist.

    Raises:
        ConfigError: an unreadable file or a missing/malformed entry, named with its file.
    """
    paths = path if isinstance(path, list) else [Path(path)]
    merged = merge_files(paths, explicit=not isinstance(path, list))
    return _config_of(merged, context)


def _config_of(merged: MergedConfig, context: str | None) -> KubeConfig:
    ctx_name = context or merged.current_context
    where = merged.where
    if not ctx_name:
        raise ConfigError(f"{where}: current-context: not set")
    ctx = merged.entry("contexts", ctx_name)
    cluster_name = str(ctx.data.get("cluster") or "")
    cluster = merged.entry("clusters", cluster_name)
    user_name = str(ctx.data.get("user") or "")
    user = merged.entry("users", user_name) if user_name else Entry(merged.files[0], "user", {})
    server = cluster.data.get("server")
    if not isinstance(server, str) or not server.startswith(("http://", "https://")):
        raise cluster.fail(f"server: expected an http(s) URL, got {server!r}")
    config = KubeConfig(
        server=server.rstrip("/"),
        ca_file=cluster.path_field("certificate-authority"),
        ca_data=decode_data(cluster, "certificate-authority-data"),
        insecure=cluster.flag("insecure-skip-tls-verify"),
        tls_server_name=cluster.text("tls-server-name") or None,
        proxy_url=_proxy_url(cluster),
        **_user_fields(user, cluster, server),
    )
    if config.ca_file and config.ca_data:
        raise cluster.fail(
            "certificate-authority-data and certificate-authority are both specified"
        )
    config.ssl_context()  # a bad CA, certificate or key fails here, named, not at connect
    return config


def _proxy_url(cluster: Entry) -> str | None:
    url = cluster.text("proxy-url")
    if not url:
        return None
    parsed = httpx.URL(url) if "://" in url else None
    if parsed is None or parsed.scheme not in PROXY_SCHEMES or not parsed.host:
        scheme = parsed.scheme if parsed is not None else ""
        raise cluster.fail(
            f"proxy-url: invalid {url!r}: unsupported scheme {scheme!r}, "
            "must be http, https, or socks5"
        )
    return url  # socks5 goes through httpx with socksio, a dependency


def _user_fields(user: Entry, cluster: Entry, server: str) -> dict[str, Any]:
    """client_config.go's user identification: token (re-read from tokenFile), client
    certificate, basic auth, impersonation; the exec plugin only if none of the others."""
    data = user.data
    if data.get("auth-provider"):
        raise user.fail(
            "auth-provider: not supported (client-go removed the gcp and azure providers);"
            " use an exec credential plugin (gke-gcloud-auth-plugin, kubelogin, ...)"
        )
    token, token_file = user.text("token"), user.path_field("tokenFile")
    username, password = user.text("username"), user.text("password")
    cert_file, key_file = user.path_field("client-certificate"), user.path_field("client-key")
    cert_data = decode_data(user, "client-certificate-data")
    key_data = decode_data(user, "client-key-data")
    _check_cert_fields(user, cert_file, cert_data, key_file, key_data)
    methods = [m for m, on in (("token", token), ("basicAuth", username or password)) if on]
    if len(methods) > 1:
        raise user.fail(f"more than one authentication method found; found {methods}")
    fields: dict[str, Any] = {
        "token": token,
        "username": username,
        "password": password,
        "cert_file": cert_file,
        "key_file": key_file,
        "cert_data": cert_data,
        "key_data": key_data,
        "impersonate": _impersonation(user),
    }
    if token_file:
        initial = token or _read_token(user, token_file)
        fields["credentials"] = TokenFileCredentials(Path(token_file), token=initial)
    elif data.get("exec") is not None and not (token or username or cert_file or cert_data):
        plugin = exec_config(user)
        fields["credentials"] = ExecCredentials(plugin, _exec_cluster(cluster, server))
    return fields


def _check_cert_fields(
    user: Entry,
    cert_file: str | None,
    cert_data: bytes | None,
    key_file: str | None,
    key_data: bytes | None,
) -> None:
    if cert_file and cert_data:
        raise user.fail("client-certificate-data and client-certificate are both specified")
    if key_file and key_data:
        raise user.fail("client-key-data and client-key are both specified")
    if (cert_file or cert_data) and not (key_file or key_data):
        raise user.fail(
            "client-key-data or client-key must be specified to use the clientCert "
            "authentication method"
        )


def _read_token(user: Entry, token_file: str) -> str:
    try:
        token = Path(token_file).read_text().strip()
    except (OSError, UnicodeError) as exc:
        raise user.fail(f"tokenFile: {exc}") from exc
    if not token:
        raise user.fail(f"tokenFile: read empty token from file {token_file!r}")
    return token


def _impersonation(user: Entry) -> tuple[tuple[str, str], ...]:
    headers: list[tuple[str, str]] = []
    name, uid = user.text("as"), user.text("as-uid")
    groups = user.data.get("as-groups") or []
    extra = user.data.get("as-user-extra") or {}
    if not isinstance(groups, list) or not isinstance(extra, Mapping):
        raise user.fail("as-groups/as-user-extra: expected a list and a mapping of lists")
    if (uid or groups or extra) and not name:
        raise user.fail("requesting uid, groups or user-extra without impersonating a user")
    if name:
        headers.append(("Impersonate-User", name))
    if uid:
        headers.append(("Impersonate-Uid", uid))
    headers.extend(("Impersonate-Group", str(g)) for g in groups)
    for key, values in extra.items():
        for value in values if isinstance(values, list) else [values]:
            headers.append((f"Impersonate-Extra-{key}", str(value)))
    return tuple(headers)


def _exec_cluster(cluster: Entry, server: str) -> dict[str, Any]:
    """rest/exec.go ConfigToExecCluster: the cluster as a plugin sees it."""
    info: dict[str, Any] = {"server": server}
    for field in ("tls-server-name", "proxy-url"):
        if cluster.text(field):
            info[field] = cluster.text(field)
    if cluster.flag("insecure-skip-tls-verify"):
        info["insecure-skip-tls-verify"] = True
    ca = decode_data(cluster, "certificate-authority-data")
    ca_file = cluster.path_field("certificate-authority")
    if ca is None and ca_file:
        try:
            ca = Path(ca_file).read_bytes()
        except OSError as exc:
            raise cluster.fail(f"certificate-authority: {exc}") from exc
    if ca is not None:
        info["certificate-authority-data"] = _b64(ca)
    extension = cluster.extensions().get(EXEC_EXTENSION)
    if extension is not None:
        info["config"] = extension
    return info


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def in_cluster_config(root: Path = SERVICE_ACCOUNT) -> KubeConfig:
    """The pod's service account: token (re-read as it rotates), CA and
    KUBERNETES_SERVICE_HOST/PORT.

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
        server=f"https://{host}:{port}",
        token=token,
        ca_file=str(ca) if ca.exists() else None,
        credentials=TokenFileCredentials(root / "token", token=token),
    )
