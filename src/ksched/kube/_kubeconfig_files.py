"""Reading kubeconfig files and merging several, as clientcmd's loader does.

# client-go tools/clientcmd/loader.go (Load, ResolveLocalPaths, GetAuthInfoFileReferences),
# api/v1/conversion.go (a name given twice in one list is an error), api/v1/defaults.go
# (interactiveMode defaults to IfAvailable for v1beta1 plugins), validation.go
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from .._errors import ConfigError
from ._exec import API_VERSIONS, ExecConfig

__all__ = ["EXEC_EXTENSION", "Entry", "MergedConfig", "decode_data", "exec_config", "merge_files"]

EXEC_EXTENSION = "client.authentication.k8s.io/exec"
"""The cluster extension handed to a plugin as spec.cluster.config."""
SECTIONS = {"clusters": "cluster", "users": "user", "contexts": "context"}
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


@attrs.frozen
class Entry:
    """One named cluster, user or context, with the file it came from."""

    file: Path
    label: str
    data: Mapping[str, Any]

    def fail(self, message: str) -> ConfigError:
        return ConfigError(f"{self.file}: {self.label}.{message}")

    def text(self, field: str) -> str:
        value = self.data.get(field)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.fail(f"{field}: expected a string, got {value!r}")
        return value

    def flag(self, field: str) -> bool:
        value = self.data.get(field, False)
        if not isinstance(value, bool):
            raise self.fail(f"{field}: expected true or false, got {value!r}")
        return value

    def path_field(self, field: str) -> str | None:
        """A file path, resolved against the folder of this entry's kubeconfig."""
        value = self.text(field)
        if not value:
            return None
        path = os.path.normpath(os.path.join(os.path.abspath(self.file.parent), value))
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise self.fail(f"{field}: unable to read {path}: {exc.strerror or exc}") from exc
        return path

    def extensions(self) -> dict[str, Any]:
        raw = self.data.get("extensions") or []
        if not isinstance(raw, list):
            raise self.fail("extensions: expected a list")
        return {
            str(item.get("name")): item.get("extension")
            for item in raw
            if isinstance(item, Mapping)
        }


@attrs.frozen
class MergedConfig:
    """The merged maps and current-context of one or more files."""

    files: tuple[Path, ...]
    current_context: str
    sections: Mapping[str, Mapping[str, Entry]]

    @property
    def where(self) -> str:
        return os.pathsep.join(str(f) for f in self.files) or "KUBECONFIG"

    def entry(self, section: str, name: str) -> Entry:
        found = self.sections[section].get(name)
        if found is None:
            raise ConfigError(f"{self.where}: {section}: no entry named {name!r}")
        return found


def merge_files(paths: list[Path], *, explicit: bool) -> MergedConfig:
    """Read and merge: for each map key and for current-context the first file wins.

    Missing files are skipped unless ``explicit`` (one file named by a flag).
    """
    read: list[tuple[Path, Mapping[str, Any]]] = []
    for path in paths:
        if not explicit and not path.exists():
            continue
        read.append((path, _read(path)))
    if not read:
        raise ConfigError(
            f"{os.pathsep.join(map(str, paths))}: no kubeconfig found "
            "(no configuration has been provided)"
        )
    sections: dict[str, dict[str, Entry]] = {s: {} for s in SECTIONS}
    current = ""
    for path, raw in read:
        for section in SECTIONS:
            for name, entry in _named(path, raw, section).items():
                sections[section].setdefault(name, entry)
        chosen = raw.get("current-context")
        if not current and isinstance(chosen, str):
            current = chosen
    return MergedConfig(tuple(p for p, _ in read), current, sections)


def _read(path: Path) -> Mapping[str, Any]:
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, UnicodeError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read kubeconfig: {exc}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: not a kubeconfig (expected a mapping)")
    return raw


def _named(path: Path, raw: Mapping[str, Any], section: str) -> dict[str, Entry]:
    items = raw.get(section) or []
    if not isinstance(items, list):
        raise ConfigError(f"{path}: {section}: expected a list")
    inner = SECTIONS[section]
    out: dict[str, Entry] = {}
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{path}: {section}[{i}]: expected a mapping with a name")
        name = item["name"]
        if name in out:
            raise ConfigError(f"{path}: {section}: duplicate name {name!r} in list")
        value = item.get(inner) if item.get(inner) is not None else {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: {section}[{i}].{inner}: expected a mapping")
        out[name] = Entry(path, f"{section}[{name}]", value)
    return out


def decode_data(entry: Entry, field: str) -> bytes | None:
    """A ``*-data`` field: base64 in the file, bytes here (kept in memory only)."""
    raw = entry.text(field)
    if not raw:
        return None
    try:
        return base64.b64decode("".join(raw.split()), validate=True)
    except (binascii.Error, ValueError):
        raise entry.fail(f"{field}: not valid base64") from None


def exec_config(user: Entry) -> ExecConfig:
    """A user's ``exec`` section, checked as validateAuthInfo checks it."""
    raw = user.data.get("exec")
    if not isinstance(raw, Mapping):
        raise user.fail("exec: expected a mapping")
    exe = Entry(user.file, f"{user.label}.exec", raw)
    command, version = exe.text("command"), exe.text("apiVersion")
    if not command:
        raise exe.fail("command: must be specified to use exec authentication plugin")
    if version not in API_VERSIONS:
        raise exe.fail(f"apiVersion: exec plugin: invalid apiVersion {version!r}")
    mode = exe.text("interactiveMode") or ("IfAvailable" if version.endswith("/v1beta1") else "")
    if not mode:
        raise exe.fail("interactiveMode: must be specified to use exec authentication plugin")
    if mode not in INTERACTIVE_MODES:
        raise exe.fail(f"interactiveMode: invalid interactiveMode {mode!r}")
    if mode == "Always":
        raise exe.fail(
            "interactiveMode: Always needs a terminal; ksched runs plugins without one "
            "(use Never or IfAvailable)"
        )
    if "/" in command:  # a PATH command stays as written
        command = os.path.normpath(os.path.join(os.path.abspath(user.file.parent), command))
    return ExecConfig(
        command=command,
        api_version=version,
        args=tuple(str(a) for a in _list(exe, "args")),
        env=tuple(_env(exe)),
        install_hint=exe.text("installHint"),
        provide_cluster_info=exe.flag("provideClusterInfo"),
        interactive_mode=mode,
    )


def _list(entry: Entry, field: str) -> list[Any]:
    value = entry.data.get(field) or []
    if not isinstance(value, list):
        raise entry.fail(f"{field}: expected a list")
    return value


def _env(exe: Entry) -> list[tuple[str, str]]:
    out = []
    for i, item in enumerate(_list(exe, "env")):
        if not isinstance(item, Mapping) or not item.get("name"):
            raise exe.fail(f"env[{i}].name: must be specified")
        out.append((str(item["name"]), str(item.get("value") or "")))
    return out
