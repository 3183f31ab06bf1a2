"""What ``ksched simulate -f`` reads: Scenario files, plain manifests, configurations.

Inputs are files or directories (every ``.yaml``, ``.yml`` and ``.json`` below them, in
name order). Each YAML document is one of:

- a ``Scenario`` (scenario-format.md): at most one among all inputs;
- a ``KubeSchedulerConfiguration``: at most one; it replaces the scenario's;
- a ``List`` (``kubectl get -o yaml``): its ``items`` are read as objects;
- a Kubernetes object (Node, Pod, PriorityClass, ...).

Plain objects next to a Scenario are created with its objects, before its steps; plain
objects alone make a scenario that creates them all and settles. Everything is read and
checked before anything runs: one bad document rejects the whole input, and the error
names the file, the document, the object and the field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, MutableSequence, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import ConfigError, ManifestError
from .._yaml import YamlInputError, read_yaml
from ..api import KubeObject, read_manifest
from ..cluster import object_key
from ..config import SchedulerConfig, check_plugin_names, parse_config
from ..simulate import (
    DEFAULT_SETTLE_MAX,
    Scenario,
    ScenarioError,
    Step,
    admit_priorities,
    parse_scenario,
)

__all__ = ["InputError", "input_files", "load_config_file", "load_inputs"]

SUFFIXES = (".yaml", ".yml", ".json")


class InputError(ScenarioError):
    """An input that cannot be read (the message names the file, object and field)."""


def input_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files named, directories expanded (sorted); raises InputError if one is missing."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
            if not found:
                raise InputError(f"{path}: no {', '.join(SUFFIXES)} files in this directory")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return out


def _documents(
    path: Path, *, strict: bool = True, warnings: MutableSequence[str] | None = None
) -> tuple[list[Any], bool]:
    """The file's documents, and whether the json module decoded them."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a text file: {exc}") from exc
    if path.suffix == ".json":
        # JSON is YAML, but the json module reads a cluster's dump ten times faster;
        # whatever it rejects (a syntax error, a repeated key) goes to the YAML loader,
        # which names the line.
        try:
            doc = json.loads(text, object_pairs_hook=_unique_pairs)
        except ValueError:
            pass
        else:
            return ([] if doc is None else [doc]), True
    try:
        return read_yaml(text, str(path), strict=strict, warnings=warnings), False
    except YamlInputError as exc:
        raise InputError(str(exc)) from None


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; one that repeats a key is refused (the YAML loader then reports it)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a repeated key")
    return out


def load_config_file(
    path: str | Path,
    *,
    strict: bool = True,
    warnings: MutableSequence[str] | None = None,
    plugins: Collection[str] | None = None,
) -> SchedulerConfig:
    """A KubeSchedulerConfiguration file (or a Scenario file's ``config``).

    A repeated key is an error, or with ``strict`` False a line in ``warnings``. With
    ``plugins`` (the registered names), a plugin the profiles name must be one of them.

    Raises:
        InputError: the file cannot be read or is not YAML.
        ConfigError: an invalid field; the message starts with the file name.
    """
    docs, _ = _documents(Path(path), strict=strict, warnings=warnings)
    if len(docs) != 1:
        raise InputError(f"{path}: expected one KubeSchedulerConfiguration, got {len(docs)}")
    data = docs[0]
    if isinstance(data, Mapping) and data.get("kind") == "Scenario":
        data = data.get("config")
    config = _parse_config(data, str(path))
    if plugins is not None:
        try:
            check_plugin_names(config, plugins)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return config


def _parse_config(data: Any, where: str) -> SchedulerConfig:
    try:
        return parse_config(data)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


@attrs.define
class _Collected:
    strict: bool = True
    warnings: MutableSequence[str] | None = None
    scenarios: list[Scenario] = attrs.field(factory=list)
    configs: list[tuple[str, SchedulerConfig]] = attrs.field(factory=list)
    objects: list[KubeObject] = attrs.field(factory=list)
    defined_in: dict[tuple[str, str], str] = attrs.field(factory=dict)

    def add_object(self, data: Any, where: str, *, from_json: bool = False) -> None:
        found: list[str] = []
        try:
            obj = read_manifest(data, strict=self.strict, warnings=found, from_json=from_json)
        except ManifestError as exc:
            lines = str(exc).splitlines()
            raise InputError("\n".join(f"{where}: {line}" for line in lines)) from None
        if self.warnings is not None:
            self.warnings.extend(f"{where}: {w}" for w in found)
        key = (type(obj).__name__, object_key(obj))
        first = self.defined_in.get(key)
        if first is not None:
            raise InputError(f"{where}: {key[0]} {key[1]}: already defined at {first}")
        self.defined_in[key] = where
        self.objects.append(obj)


def _document_places(path: Path, docs: list[Any]) -> Iterator[tuple[str, Any]]:
    for i, doc in enumerate(docs):
        yield (f"{path}: document {i + 1}" if len(docs) > 1 else str(path)), doc


def load_inputs(
    paths: Sequence[str | Path],
    *,
    config: str | Path | None = None,
    name: str | None = None,
    strict: bool = True,
    warnings: MutableSequence[str] | None = None,
    plugins: Collection[str] | None = None,
) -> Scenario:
    """One scenario from the ``-f`` inputs; ``config`` (a file) replaces its configuration.

    Objects are checked as the API server and its admission check them; with ``strict``
    False, unknown fields go to ``warnings`` (one line each) instead of failing. Given
    the registered ``plugins``, a configuration naming another is refused here, with
    the file that holds it.

    Raises:
        InputError, ScenarioError, ConfigError: the message names the file and field.
    """
    files = input_files(paths)
    if not files:
        raise InputError("no input: give a scenario or manifest file (-f FILE_OR_DIR)")
    got = _Collected(strict=strict, warnings=warnings)
    for path in files:
        docs, from_json = _documents(path, strict=strict, warnings=warnings)
        for where, doc in _document_places(path, docs):
            kind = doc.get("kind") if isinstance(doc, Mapping) else None
            if kind == "Scenario":
                got.scenarios.append(
                    parse_scenario(doc, path=where, strict=strict, warnings=warnings)
                )
            elif kind == "KubeSchedulerConfiguration":
                got.configs.append((where, _parse_config(doc, where)))
            elif kind == "List":
                items = doc.get("items")
                if items is None:
                    continue
                if not isinstance(items, list):
                    raise InputError(f"{where}: items: expected a list")
                for j, item in enumerate(items):
                    got.add_object(item, f"{where}: items[{j}]", from_json=from_json)
                    items[j] = None  # read: its memory goes to the next objects
            else:
                got.add_object(doc, where, from_json=from_json)
    if len(got.scenarios) > 1:
        names = ", ".join(s.path for s in got.scenarios)
        raise InputError(f"one Scenario at a time, got {len(got.scenarios)}: {names}")
    if len(got.configs) > 1:
        names = ", ".join(where for where, _ in got.configs)
        raise InputError(f"one KubeSchedulerConfiguration at a time, got {names}")
    if got.scenarios:
        scenario = got.scenarios[0]
        if got.objects:
            for obj in scenario.objects:
                key = (type(obj).__name__, object_key(obj))
                if key in got.defined_in:
                    raise InputError(
                        f"{got.defined_in[key]}: {key[0]} {key[1]}: already defined in "
                        f"{scenario.path}"
                    )
            scenario = attrs.evolve(scenario, objects=(*scenario.objects, *got.objects))
    else:
        if not got.objects:
            raise InputError(f"{', '.join(str(p) for p in paths)}: no Kubernetes objects")
        label = name or (Path(paths[0]).stem if len(paths) == 1 else "manifests")
        scenario = Scenario(
            name=label,
            source=", ".join(str(p) for p in paths),
            config=SchedulerConfig(),
            objects=tuple(got.objects),
            steps=(Step("settle", seconds=DEFAULT_SETTLE_MAX),),
            expect={},
            path=str(paths[0]),
        )
    config_source = scenario.path if got.scenarios else None
    if got.configs:
        config_source, configured = got.configs[0]
        scenario = attrs.evolve(scenario, config=configured)
    if config is not None:
        configured = load_config_file(config, strict=strict, warnings=warnings)
        config_source = str(config)
        scenario = attrs.evolve(scenario, config=configured)
    if plugins is not None and config_source is not None:
        try:
            check_plugin_names(scenario.config, plugins)
        except ConfigError as exc:
            raise ConfigError(f"{config_source}: {exc}") from None
    try:
        admit_priorities(scenario, got.defined_in)
    except ScenarioError as exc:
        raise InputError(str(exc)) from None
    return scenario
