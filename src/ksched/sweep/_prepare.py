"""From a spec to what workers run: each input read once into a bundle, everything checked.

A cell's inputs, configuration and parameters are checked here, on the driver, before any
cell runs: a bad one is a SpecError naming the spec, the axis value and the field.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import KschedError
from ._bundle import Bundle, make_bundle
from ._cells import CellTask
from ._overrides import Override, apply_overrides
from ._spec import Cell, ConfigChoice, SpecError, SweepSpec

__all__ = ["PreparedCell", "prepare"]


@attrs.frozen
class PreparedCell:
    """A cell, what its worker runs, and its bundle."""

    cell: Cell
    task: CellTask
    bundle: Bundle

    @property
    def labels(self) -> tuple[str, ...]:
        """The cell's axis labels, in the table's column order."""
        return tuple(label for _, label in self.cell.labels)


def prepare(spec: SweepSpec, cells: Sequence[Cell] | None = None) -> list[PreparedCell]:
    """Bundles and tasks for ``cells`` (default: the whole grid), checked."""
    checker = _Checker(spec)
    out = []
    for cell in spec.cells() if cells is None else cells:
        values = cell.values
        inputs: tuple[Path, ...] = values["input"]
        label = dict(cell.labels)["input"]
        choice: ConfigChoice = values.get("config", ConfigChoice())
        overrides = (*choice.overrides, *_axis_overrides(values))
        params = {k: v for k, v in values.items() if k != "input" and k != "config"}
        params = {k: v for k, v in params.items() if not isinstance(v, Override)}
        bundle = checker.bundle(inputs, params.get("nodes"), label)
        checker.check(cell, bundle, choice, overrides, params)
        task = CellTask(
            id=cell.id,
            kind=spec.kind,
            config_document=choice.document,
            overrides=overrides,
            params=params,
            metrics=spec.metrics,
            label=label,
        )
        out.append(PreparedCell(cell=cell, task=task, bundle=bundle))
    return out


def _axis_overrides(values: Mapping[str, Any]) -> tuple[Override, ...]:
    return tuple(v for v in values.values() if isinstance(v, Override))


class _Checker:
    """Reads each input once and checks each distinct (input, configuration) once."""

    def __init__(self, spec: SweepSpec) -> None:
        self.spec = spec
        self.bundles: dict[tuple[Any, ...], Bundle] = {}
        self.own_configs: dict[str, Any] = {}
        self.checked: set[tuple[Any, ...]] = set()

    def fail(self, cell: Cell, message: str) -> SpecError:
        where = ", ".join(f"{axis}={label}" for axis, label in cell.labels)
        return SpecError(f"{self.spec.path}: cell {where}: {message}")

    def bundle(self, inputs: tuple[Path, ...], nodes: str | None, label: str) -> Bundle:
        key = (inputs, nodes)
        found = self.bundles.get(key)
        if found is not None:
            return found
        try:
            bundle = self._read(inputs, nodes, label)
        except (KschedError, ValueError, OSError) as exc:
            raise SpecError(f"{self.spec.path}: grid.input {label}: {exc}") from None
        self.bundles[key] = bundle
        return bundle

    def _read(self, inputs: tuple[Path, ...], nodes: str | None, label: str) -> Bundle:
        kind = self.spec.kind
        if kind == "simulate":
            from ..cli._inputs import input_files, load_inputs

            scenario = load_inputs(list(inputs))
            bundle = make_bundle(inputs, input_files(list(inputs)))
            self.own_configs[bundle.digest] = scenario.config
            return bundle
        if kind == "replay":
            return make_bundle(inputs, inputs)
        from ..gpu import read_nodes, read_pods

        assert self.spec.trace_dir is not None
        node_list = _node_list(self.spec.trace_dir, nodes)
        read_nodes(node_list)
        read_pods(inputs[0])
        files = (inputs[0], node_list)
        return make_bundle(files, files)

    def check(
        self,
        cell: Cell,
        bundle: Bundle,
        choice: ConfigChoice,
        overrides: tuple[Override, ...],
        params: Mapping[str, Any],
    ) -> None:
        if self.spec.kind == "gpu":
            self._check_gpu(cell, params)
            return
        if self.spec.kind == "replay":
            self._check_trace(cell, bundle, params.get("workload"))
        key = (bundle.digest, choice.file, _overrides_key(overrides))
        if key in self.checked:
            return
        try:
            _check_config(choice, overrides, self.own_configs.get(bundle.digest))
        except (KschedError, ValueError) as exc:
            raise self.fail(cell, str(exc)) from None
        self.checked.add(key)

    def _check_trace(self, cell: Cell, bundle: Bundle, workload: str | None) -> None:
        key = (bundle.digest, "trace", workload)
        if key in self.checked:
            return
        try:
            _check_trace(Path(bundle.root, bundle.entries[0]), workload)
        except (KschedError, ValueError, OSError) as exc:
            raise self.fail(cell, str(exc)) from None
        self.checked.add(key)

    def _check_gpu(self, cell: Cell, params: Mapping[str, Any]) -> None:
        from ..gpu import ExperimentConfig, WorkloadConfig

        try:
            ExperimentConfig(
                policy=str(params.get("policy", "FGD")),
                workload=WorkloadConfig(
                    tune=float(params.get("tune", 1.3)), rng=str(params.get("rng", "go"))
                ),
            )
        except (KschedError, ValueError, KeyError) as exc:
            raise self.fail(cell, str(exc)) from None
        if params.get("rng", "go") not in ("go", "ksched"):
            raise self.fail(cell, f"rng: {params['rng']!r}: expected go or ksched")


def _overrides_key(overrides: tuple[Override, ...]) -> str:
    return json.dumps([attrs.asdict(o) for o in overrides], sort_keys=True, default=str)


def _node_list(trace_dir: Path, nodes: str | None) -> Path:
    name = nodes or "openb_node_list_gpu_node.csv"
    path = trace_dir / name
    if not path.is_file():
        raise KschedError(f"nodes: {path}: no such file")
    return path


def _check_trace(path: Path, workload: str | None) -> None:
    """A trace file's header, or a scenario / scheduler_perf file converted."""
    from ..trace import is_trace_file, open_trace

    if is_trace_file(path):
        with open_trace(path) as trace:
            _ = trace.header
        return
    from ..trace._sources import trace_of_file

    trace_of_file(path, workload=workload)


def _check_config(choice: ConfigChoice, overrides: tuple[Override, ...], own: Any) -> None:
    from ..cluster import InMemoryCluster
    from ..config import SchedulerConfig, parse_config
    from ..scheduler import Scheduler

    if choice.document is not None:
        try:
            base = parse_config(choice.document)
        except KschedError as exc:
            raise KschedError(f"{choice.file}: {exc}") from None
    else:
        base = own if own is not None else SchedulerConfig()
    config = apply_overrides(base, overrides)
    Scheduler(config, InMemoryCluster(), registry=_registry())


@functools.cache
def _registry() -> Any:
    from ..cli._options import plugin_registry

    return plugin_registry(())
