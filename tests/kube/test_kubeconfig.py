"""kubeconfig files as client-go's clientcmd reads them (no server needed here).

Cases from client-go tools/clientcmd loader_test.go (TestConflictingCurrentContext,
TestResolveRelativePaths, TestDuplicateClusterName), validation.go and helpers.go
(parseProxyURL), and the kubeconfig documentation's merge rules ("the first file to set
a particular value or map key wins ... if two files specify a red-user, use only values
from the first file's red-user").
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ksched import ConfigError
from ksched.cli import main
from ksched.kube import load_kubeconfig
from ksched.kube._credentials import (
    ExecCredentials,
    StaticCredentials,
    TokenFileCredentials,
    basic_header,
)
from ksched.kube._kubeconfig import kubeconfig_paths


def _write(path: Path, **config: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", **config}))
    return path


def _cluster(name: str, server: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "cluster": {"server": server, **more}}


def _user(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "user": fields}


def _context(name: str, cluster: str, user: str) -> dict[str, Any]:
    return {"name": name, "context": {"cluster": cluster, "user": user}}


def test_the_first_file_to_set_current_context_wins(tmp_path: Path) -> None:
    first = _write(
        tmp_path / "a",
        clusters=[_cluster("one", "https://one:6443")],
        users=[_user("u", token="a")],
        contexts=[_context("first", "one", "u")],
        **{"current-context": "first"},
    )
    second = _write(
        tmp_path / "b",
        clusters=[_cluster("two", "https://two:6443")],
        contexts=[_context("second", "two", "u")],
        **{"current-context": "second"},
    )
    assert load_kubeconfig([first, second]).server == "https://one:6443"
    assert load_kubeconfig([second, first]).server == "https://two:6443"
    # a file without current-context does not reset it
    third = _write(tmp_path / "c", clusters=[_cluster("three", "https://three:6443")])
    assert load_kubeconfig([third, second, first]).server == "https://two:6443"


def test_the_first_file_to_name_a_user_wins_with_its_whole_entry(tmp_path: Path) -> None:
    """ "If two files specify a red-user, use only values from the first file's red-user.
    Even if the second file has non-conflicting entries under red-user, discard them.\""""
    first = _write(
        tmp_path / "a",
        users=[_user("red-user", token="red-token")],
        contexts=[_context("x", "c", "red-user")],
        **{"current-context": "x"},
    )
    second = _write(
        tmp_path / "b",
        clusters=[_cluster("c", "https://c:6443")],
        users=[_user("red-user", username="someone", password="pw", token="other")],
    )
    config = load_kubeconfig([first, second])
    assert config.token == "red-token"
    assert config.username == "" and config.password == ""
    assert isinstance(config.credentials, StaticCredentials)
    assert config.credentials.cached() == "Bearer red-token"


def test_missing_files_in_kubeconfig_are_skipped_but_a_named_one_must_exist(
    tmp_path: Path,
) -> None:
    present = _write(
        tmp_path / "present",
        clusters=[_cluster("c", "https://c:6443")],
        contexts=[_context("x", "c", "")],
        **{"current-context": "x"},
    )
    assert load_kubeconfig([tmp_path / "missing", present]).server == "https://c:6443"
    with pytest.raises(ConfigError, match="missing: cannot read kubeconfig"):
        load_kubeconfig(tmp_path / "missing")
    with pytest.raises(ConfigError, match="no kubeconfig found"):
        load_kubeconfig([tmp_path / "missing", tmp_path / "gone"])


def test_kubeconfig_paths_reads_the_environment_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(a), "", str(b), str(a)]))
    assert kubeconfig_paths() == [a, b]  # empty names ignored, duplicates once
    assert kubeconfig_paths(str(b)) == [b]
    monkeypatch.delenv("KUBECONFIG")
    assert kubeconfig_paths() == []


def test_relative_paths_resolve_against_their_own_file(tmp_path: Path) -> None:
    """TestResolveRelativePaths: each entry's paths against the folder of its file; an exec
    command only when it names a path, not a PATH lookup."""
    (tmp_path / "one" / "relative").mkdir(parents=True)
    (tmp_path / "one" / "relative" / "token").write_text("from-file\n")
    first = _write(
        tmp_path / "one" / "config",
        users=[_user("u", tokenFile="relative/token")],
        contexts=[_context("x", "c", "u"), _context("y", "c", "plugin")],
        **{"current-context": "x"},
    )
    plugin_user = _user(
        "plugin",
        exec={"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "./bin/plugin"},
    )
    ca = {"certificate-authority": "../ca.crt"}
    second = _write(
        tmp_path / "two" / "deeper" / "config",
        clusters=[_cluster("c", "https://c:6443", **ca)],
        users=[plugin_user],
    )
    with pytest.raises(ConfigError, match=re.escape(str(tmp_path / "two" / "ca.crt"))):
        load_kubeconfig([first, second])  # the CA named relative to two/deeper/
    _write(second, clusters=[_cluster("c", "https://c:6443")], users=[plugin_user])
    config = load_kubeconfig([first, second])
    assert isinstance(config.credentials, TokenFileCredentials)
    assert config.credentials.path == tmp_path / "one" / "relative" / "token"
    assert config.credentials.cached() == "Bearer from-file"
    plugin = load_kubeconfig([first, second], context="y").credentials
    assert isinstance(plugin, ExecCredentials)
    assert plugin.config.command == str(tmp_path / "two" / "deeper" / "bin" / "plugin")
    assert plugin.config.interactive_mode == "IfAvailable"  # v1beta1's default


def test_a_path_based_on_path_lookup_stays_as_written(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("c", "https://c:6443")],
        users=[
            _user(
                "u",
                exec={
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": "aws",
                    "args": ["eks", "get-token"],
                    "env": [{"name": "AWS_PROFILE", "value": "prod"}],
                    "interactiveMode": "Never",
                    "provideClusterInfo": True,
                },
            )
        ],
        contexts=[_context("x", "c", "u")],
        **{"current-context": "x"},
    )
    plugin = load_kubeconfig(path).credentials
    assert isinstance(plugin, ExecCredentials)
    assert (plugin.config.command, plugin.config.args) == ("aws", ("eks", "get-token"))
    assert plugin.config.env == (("AWS_PROFILE", "prod"),)
    assert plugin.cluster is not None and plugin.cluster["server"] == "https://c:6443"


def test_context_flag_picks_another_context(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("a", "https://a:6443"), _cluster("b", "https://b:6443")],
        users=[_user("u", username="admin", password="secret")],
        contexts=[_context("ctx-a", "a", "u"), _context("ctx-b", "b", "u")],
        **{"current-context": "ctx-a"},
    )
    assert load_kubeconfig(path).server == "https://a:6443"
    config = load_kubeconfig(path, context="ctx-b")
    assert config.server == "https://b:6443"
    assert config.credentials.cached() == basic_header("admin", "secret")
    assert config.credentials.cached() == "Basic YWRtaW46c2VjcmV0"  # RFC 7617's example form
    assert "secret" not in repr(config)
    with pytest.raises(ConfigError, match="contexts: no entry named 'ctx-c'"):
        load_kubeconfig(path, context="ctx-c")


def test_ksched_run_context_flag_reaches_the_loader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("a", "https://a:6443")],
        contexts=[_context("ctx-a", "a", "")],
        **{"current-context": "ctx-a"},
    )
    assert main(["run", "--kubeconfig", str(path), "--context", "elsewhere"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ksched: error: {path}: contexts: no entry named 'elsewhere'")


def test_kubeconfig_environment_is_read_by_ksched_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "config", **{"current-context": "nowhere"})
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert main(["run"]) == 2
    assert "contexts: no entry named 'nowhere'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("user", "cluster", "message"),
    [
        ({"token": "t", "username": "u"}, {}, "more than one authentication method found"),
        ({"client-certificate-data": "eA=="}, {}, "client-key-data or client-key must be"),
        (
            {"client-certificate": "c", "client-certificate-data": "eA==", "client-key": "k"},
            {},
            "client-certificate-data and client-certificate are both specified",
        ),
        ({"client-key-data": "not base64!"}, {}, "client-key-data: not valid base64"),
        ({"auth-provider": {"name": "gcp"}}, {}, "auth-provider: not supported"),
        ({"exec": {"command": "x"}}, {}, "exec.apiVersion: exec plugin: invalid apiVersion ''"),
        (
            {"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1alpha1"}},
            {},
            "invalid apiVersion 'client.authentication.k8s.io/v1alpha1'",
        ),
        (
            {"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1"}},
            {},
            "exec.interactiveMode: must be specified",  # v1 has no default
        ),
        (
            {
                "exec": {
                    "command": "x",
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "interactiveMode": "Always",
                }
            },
            {},
            "Always needs a terminal",
        ),
        (
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1"}},
            {},
            "exec.command: must be specified",
        ),
        ({"as-groups": ["g"]}, {}, "without impersonating a user"),
        ({}, {"proxy-url": "ftp://proxy:21"}, "unsupported scheme 'ftp'"),
        ({}, {"proxy-url": "proxy:3128"}, "proxy-url: invalid 'proxy:3128'"),
        (
            {},
            {"certificate-authority": "ca", "certificate-authority-data": "eA=="},
            "certificate-authority-data and certificate-authority are both specified",
        ),
        ({}, {"insecure-skip-tls-verify": "yes"}, "insecure-skip-tls-verify: expected true"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_invalid_entries_name_file_entry_and_field(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any], message: str
) -> None:
    for name in ("c", "k", "ca"):  # files the entries name
        (tmp_path / name).write_text("")
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("c", "https://c:6443", **cluster)],
        users=[_user("u", **user)],
        contexts=[_context("x", "c", "u")],
        **{"current-context": "x"},
    )
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        load_kubeconfig(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_name_twice_in_one_list_is_an_error(tmp_path: Path) -> None:
    """TestDuplicateClusterName: 'duplicate name "kubeconfig-cluster" in list'."""
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("c", "https://a:6443"), _cluster("c", "https://b:6443")],
    )
    with pytest.raises(ConfigError, match="clusters: duplicate name 'c' in list"):
        load_kubeconfig(path)


def test_proxy_url_schemes_client_go_supports(tmp_path: Path) -> None:
    for url in ("http://proxy:3128", "https://proxy:3129", "socks5://proxy:1080"):
        path = _write(
            tmp_path / "config",
            clusters=[_cluster("c", "https://c:6443", **{"proxy-url": url})],
            contexts=[_context("x", "c", "")],
            **{"current-context": "x"},
        )
        config = load_kubeconfig(path)
        assert config.proxy_url == url
        client = config.http_client()
        assert type(client._transport).__name__ == "AsyncHTTPTransport"  # via httpx


def test_impersonation_headers(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("c", "https://c:6443")],
        users=[_user("u", token="t", **{"as": "jane", "as-groups": ["a", "b"]})],
        contexts=[_context("x", "c", "u")],
        **{"current-context": "x"},
    )
    headers = load_kubeconfig(path).headers()
    assert headers["Impersonate-User"] == "jane"
    assert headers["Impersonate-Group"] == "a, b"


def test_no_credentials_go_to_a_plain_http_server(tmp_path: Path) -> None:
    """client_config.go: user identification is read only when the transport is TLS."""
    path = _write(
        tmp_path / "config",
        clusters=[_cluster("c", "http://c:8080")],
        users=[_user("u", token="t")],
        contexts=[_context("x", "c", "u")],
        **{"current-context": "x"},
    )
    client = load_kubeconfig(path).http_client()
    assert client.auth is None or type(client.auth).__name__ != "CredentialsAuth"
    assert "authorization" not in {k.lower() for k in client.headers}
