"""The sweep spec (``kind: Sweep``): its grid read, checked and crossed into cells.

Everything is read and checked before a cell runs: a bad field is a ``SpecError`` whose
message names the spec file and the field.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from ._errors import SpecError, reject_unknown_fields
from ._overrides import Override, parse_override

__all__ = ["KINDS", "Axis", "Cell", "ConfigChoice", "PlotSpec", "SpecError", "SweepSpec"]

KINDS = ("simulate", "replay", "gpu")
"""What a cell runs: ``ksched simulate``, ``ksched replay`` or ``ksched gpu run``."""

PARAMS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "simulate": {"seed": int, "opportunisticBatching": bool},
    "replay": {"seed": int, "followRecorded": bool, "workload": str},
    "gpu": {
        "policy": str,
        "seed": int,
        "tune": (int, float),
        "rng": str,
        "shuffle": bool,
        "popularityThreshold": int,
        "increaseStep": int,
        "gpuResWeight": (int, float),
        "cpuPods": bool,
        "nodes": str,
    },
}
"""The parameters each kind takes as grid axes besides ``input`` and ``config``."""

MAX_CELLS = 1_000_000
"""The most cells a grid may have (its cells are listed up front)."""
MAX_LABEL = 200
"""The longest label of an axis value (a table column holds it on every row)."""

_OVERRIDE_AXIS = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\.(weight|scoringStrategy)$")
_FIELDS = frozenset(
    {"apiVersion", "kind", "name", "run", "grid", "trace", "metrics", "table", "parquet", "plots"}
)
_PLOT_FIELDS = frozenset({"metric", "x", "by", "file", "title", "where"})


@attrs.frozen
class ConfigChoice:
    """One value of the ``config`` axis: a whole file (or the input's own) and overrides."""

    file: str | None = None
    document: Mapping[str, Any] | None = None
    """The file's KubeSchedulerConfiguration, as read (None: the input's own config)."""
    overrides: tuple[Override, ...] = ()


@attrs.frozen
class Axis:
    """A grid axis: its name and its values, each with the label the table shows."""

    name: str
    labels: tuple[str, ...]
    values: tuple[Any, ...]


@attrs.frozen
class Cell:
    """One simulation of the grid: a value of each axis."""

    id: str
    labels: tuple[tuple[str, str], ...]
    """(axis, label) in the spec's axis order."""
    values: Mapping[str, Any]


@attrs.frozen
class PlotSpec:
    """A figure: ``metric`` (mean over the other axes) against ``x``, a line per ``by``."""

    metric: str
    x: str
    file: Path
    by: str | None = None
    title: str | None = None
    where: Mapping[str, str] = attrs.field(factory=dict)
    """Only the cells with these labels (axis -> label)."""


@attrs.frozen
class SweepSpec:
    """A parsed sweep spec; ``cells()`` crosses its axes."""

    path: Path
    name: str
    kind: str
    axes: tuple[Axis, ...]
    table: Path
    parquet: Path | None = None
    metrics: tuple[str, ...] | None = None
    plots: tuple[PlotSpec, ...] = ()
    trace_dir: Path | None = None

    @property
    def axis_names(self) -> tuple[str, ...]:
        """The axes in spec order (the table's leading columns after ``cell``)."""
        return tuple(axis.name for axis in self.axes)

    def cells(self) -> list[Cell]:
        """Every cell, the last axis varying fastest."""
        out = []
        for combo in itertools.product(*(range(len(a.values)) for a in self.axes)):
            labels = tuple((a.name, a.labels[i]) for a, i in zip(self.axes, combo, strict=True))
            values = {a.name: a.values[i] for a, i in zip(self.axes, combo, strict=True)}
            out.append(Cell(id=cell_id(self.kind, labels), labels=labels, values=values))
        return out

    @classmethod
    def load(cls, path: str | Path) -> SweepSpec:
        """Read a spec file. Raises SpecError naming the file and the field."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except OSError as exc:
            raise SpecError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise SpecError(f"{path}: invalid YAML: {exc}") from None
        return parse_spec(data, path)


def cell_id(kind: str, labels: Sequence[tuple[str, str]]) -> str:
    """A cell's stable name: a digest of its kind and axis labels."""
    text = json.dumps([kind, [list(pair) for pair in labels]], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_spec(data: Any, path: Path) -> SweepSpec:
    """A spec from its YAML document; paths in it are relative to the spec's folder."""
    where = str(path)
    if not isinstance(data, Mapping):
        raise SpecError(f"{where}: expected a mapping with kind: Sweep")
    if data.get("kind") != "Sweep":
        raise SpecError(f"{where}: kind: expected Sweep, got {data.get('kind')!r}")
    reject_unknown_fields(data, _FIELDS, where)
    kind = data.get("run")
    if kind not in KINDS:
        raise SpecError(f"{where}: run: expected one of {', '.join(KINDS)}, got {kind!r}")
    base = path.parent
    trace_dir = _trace_dir(data, base, where) if kind == "gpu" else None
    grid = data.get("grid")
    if not isinstance(grid, Mapping) or not grid:
        raise SpecError(f"{where}: grid: expected a mapping of axis to values")
    axes = [_axis(str(name), values, kind, base, trace_dir, where) for name, values in grid.items()]
    if not any(a.name == "input" for a in axes):
        raise SpecError(f"{where}: grid.input: every sweep needs its inputs")
    size = math.prod(len(a.values) for a in axes)
    if size > MAX_CELLS:
        raise SpecError(f"{where}: grid: {size} cells, more than {MAX_CELLS}: split the sweep")
    table = data.get("table", f"{path.stem}.csv")
    if not isinstance(table, str) or not table:
        raise SpecError(f"{where}: table: expected a file name")
    parquet = data.get("parquet")
    if parquet is not None and not isinstance(parquet, str):
        raise SpecError(f"{where}: parquet: expected a file name")
    metrics = data.get("metrics")
    if metrics is not None and (
        not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics)
    ):
        raise SpecError(f"{where}: metrics: expected a list of metric names")
    names = tuple(a.name for a in axes)
    plots = tuple(_plot(p, i, names, base, where) for i, p in enumerate(data.get("plots") or []))
    name = data.get("name", path.stem)
    return SweepSpec(
        path=path,
        name=str(name),
        kind=kind,
        axes=tuple(axes),
        table=base / table,
        parquet=base / parquet if parquet else None,
        metrics=tuple(metrics) if metrics is not None else None,
        plots=plots,
        trace_dir=trace_dir,
    )


def _trace_dir(data: Mapping[str, Any], base: Path, where: str) -> Path:
    raw = data.get("trace")
    if not isinstance(raw, str):
        raise SpecError(f"{where}: trace: a gpu sweep names the folder of the openb CSVs")
    folder = base / raw
    if not folder.is_dir():
        raise SpecError(f"{where}: trace: {folder}: no such folder")
    return folder


def _values(raw: Any, field: str) -> list[tuple[str, Any]]:
    """An axis's (label, value) pairs: a list (labels made from values) or a mapping."""
    if isinstance(raw, Mapping):
        pairs = [(str(k), v) for k, v in raw.items()]
    elif isinstance(raw, list):
        pairs = [(_label(v), v) for v in raw]
    else:
        pairs = [(_label(raw), raw)]
    if not pairs:
        raise SpecError(f"{field}: expected at least one value")
    labels = [label for label, _ in pairs]
    for i, label in enumerate(labels):
        if label in labels[:i]:
            raise SpecError(f"{field}[{i}]: {label!r} is there twice")
        if not label or any(c in label for c in "\r\n") or len(label) > MAX_LABEL:
            raise SpecError(
                f"{field}[{i}]: {label[:40]!r}: a label is one line of 1 to {MAX_LABEL} "
                "characters (name it with a mapping: label: value)"
            )
    return pairs


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "+".join(_label(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _axis(name: str, raw: Any, kind: str, base: Path, trace_dir: Path | None, where: str) -> Axis:
    field = f"{where}: grid.{name}"
    pairs = _values(raw, field)
    values: list[Any]
    if name == "input":
        values = [
            _input(v, kind, base, trace_dir, f"{field}[{i}]") for i, (_, v) in enumerate(pairs)
        ]
    elif name == "config":
        if kind == "gpu":
            raise SpecError(f"{field}: a gpu cell's configuration is its policy (grid.policy)")
        values = [_config(v, base, f"{field}.{label}") for label, v in pairs]
    elif (match := _OVERRIDE_AXIS.match(name)) is not None:
        if kind == "gpu":
            raise SpecError(f"{field}: a gpu cell's configuration is its policy (grid.policy)")
        plugin, what = match.groups()
        values = [
            parse_override({"plugin": plugin, what: v}, f"{field}[{i}]")
            for i, (_, v) in enumerate(pairs)
        ]
    elif name in PARAMS[kind]:
        wanted = PARAMS[kind][name]
        for i, (_, v) in enumerate(pairs):
            if not isinstance(v, wanted) or (isinstance(v, bool) and wanted is not bool):
                raise SpecError(f"{field}[{i}]: {v!r}: expected {_type_name(wanted)}")
        values = [v for _, v in pairs]
    else:
        known = ["input", "config", "<Plugin>.weight", "<Plugin>.scoringStrategy"]
        if kind == "gpu":
            known = ["input"]
        known += list(PARAMS[kind])
        raise SpecError(f"{field}: unknown axis for run: {kind} (known: {', '.join(known)})")
    return Axis(name, tuple(label for label, _ in pairs), tuple(values))


def _type_name(wanted: type | tuple[type, ...]) -> str:
    types = wanted if isinstance(wanted, tuple) else (wanted,)
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    return " or ".join(names[t] for t in types)


def _input(raw: Any, kind: str, base: Path, trace_dir: Path | None, field: str) -> tuple[Path, ...]:
    """The files of one input: a path or a list of paths (manifest sets), checked to exist."""
    items = raw if isinstance(raw, list) else [raw]
    if not items or not all(isinstance(item, str) and item for item in items):
        raise SpecError(f"{field}: expected a path or a list of paths")
    if kind != "simulate" and len(items) != 1:
        raise SpecError(f"{field}: a {kind} cell reads one file")
    paths = []
    for item in items:
        path = base / item
        if kind == "gpu" and not item.endswith(".csv"):
            assert trace_dir is not None
            path = trace_dir / f"openb_pod_list_{item.removeprefix('openb_pod_list_')}.csv"
        if not path.exists():
            raise SpecError(f"{field}: {path}: no such file or directory")
        if kind != "simulate" and not path.is_file():
            raise SpecError(f"{field}: {path}: expected a file")
        paths.append(path)
    return tuple(paths)


def _config(raw: Any, base: Path, field: str) -> ConfigChoice:
    if raw is None or raw == {}:
        return ConfigChoice()
    if isinstance(raw, str):
        raw = {"file": raw}
    if not isinstance(raw, Mapping):
        raise SpecError(f"{field}: expected a file name or a mapping with file and overrides")
    reject_unknown_fields(raw, ("file", "overrides"), field)
    file = raw.get("file")
    document = None
    if file is not None:
        if not isinstance(file, str):
            raise SpecError(f"{field}.file: expected a file name")
        document = _config_document(base / file, f"{field}.file")
    overrides = raw.get("overrides") or []
    if not isinstance(overrides, list):
        raise SpecError(f"{field}.overrides: expected a list")
    parsed = tuple(parse_override(o, f"{field}.overrides[{i}]") for i, o in enumerate(overrides))
    return ConfigChoice(
        file=str(base / file) if file else None, document=document, overrides=parsed
    )


def _config_document(path: Path, field: str) -> Mapping[str, Any]:
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except OSError as exc:
        raise SpecError(f"{field}: {path}: cannot read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SpecError(f"{field}: {path}: invalid YAML: {exc}") from None
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise SpecError(f"{field}: {path}: expected one KubeSchedulerConfiguration")
    doc = docs[0]
    if doc.get("kind") == "Scenario":
        doc = doc.get("config") or {}
    if not isinstance(doc, Mapping):
        raise SpecError(f"{field}: {path}: expected one KubeSchedulerConfiguration")
    return doc


def _plot(raw: Any, index: int, axes: Sequence[str], base: Path, where: str) -> PlotSpec:
    field = f"{where}: plots[{index}]"
    if not isinstance(raw, Mapping):
        raise SpecError(f"{field}: expected a mapping with metric, x and file")
    reject_unknown_fields(raw, _PLOT_FIELDS, field)
    for key in ("metric", "x", "file"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise SpecError(f"{field}.{key}: expected a string")
    x, by = raw["x"], raw.get("by")
    if x not in (*axes, "at"):
        raise SpecError(f"{field}.x: {x!r}: expected an axis ({', '.join(axes)}) or at")
    if by is not None and by not in axes:
        raise SpecError(f"{field}.by: {by!r}: expected an axis ({', '.join(axes)})")
    title = raw.get("title")
    where_raw = raw.get("where") or {}
    if not isinstance(where_raw, Mapping):
        raise SpecError(f"{field}.where: expected a mapping of axis to label")
    for axis in where_raw:
        if axis not in axes:
            raise SpecError(f"{field}.where.{axis}: not an axis ({', '.join(axes)})")
    return PlotSpec(
        where={str(k): _label(v) for k, v in where_raw.items()},
        metric=raw["metric"],
        x=x,
        by=by,
        file=base / raw["file"],
        title=str(title) if title is not None else None,
    )
