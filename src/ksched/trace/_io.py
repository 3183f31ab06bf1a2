"""Reading and writing trace files: JSON lines, gzip when the name ends in ``.gz``.

Both stream: the writer writes a record as it is given, the reader reads a line when
asked for the next record, so neither holds the file in memory. The standard library's
``json`` and ``gzip`` do the work (benchmarks/trace_size.py measures their cost per
record).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, cast

import anyio

from .._errors import ManifestError
from ..api import KubeObject, read_object
from ..cluster import KINDS, object_key
from ._format import (
    API_VERSION,
    FORMAT_VERSION,
    KIND,
    OBJECT_OPS,
    Op,
    Trace,
    TraceError,
    TraceEvent,
    TraceHeader,
)

__all__ = [
    "BufferedTraceWriter",
    "TraceWriter",
    "is_trace_file",
    "open_trace",
    "read_header",
    "record_line",
    "trace_lines",
]

_STORE_KINDS = frozenset(KINDS.values())


def _open_text(path: Path, mode: str) -> IO[str]:
    if path.suffix == ".gz":
        # compresslevel 6, zlib's own default: gzip's 9 costs more CPU for little gain
        return cast(IO[str], gzip.open(path, mode + "t", encoding="utf-8", compresslevel=6))
    return open(path, mode, encoding="utf-8")  # the caller closes it


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def _header_dict(header: TraceHeader) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "version": header.version}
    out["source"] = header.source
    for field in ("name", "start", "cluster"):
        value = getattr(header, field)
        if value is not None:
            out[field] = value
    if header.anonymized:
        out["anonymized"] = True
    return out


class TraceWriter:
    """Writes a trace file record by record (``with TraceWriter(path, header) as w:``).

    Objects are given in their stored (stripped) dict form; ``t`` is rounded to the
    millisecond. Nothing checks that ``t`` never decreases: the writer's caller keeps
    records in order, and the reader refuses a file that is not.
    """

    def __init__(self, path: str | Path, header: TraceHeader | None = None) -> None:
        self.path = Path(path)
        self._file = _open_text(self.path, "w")
        self.records = 0
        self._file.write(_dumps(_header_dict(header or TraceHeader())) + "\n")

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def flush(self) -> None:
        self._file.flush()

    def write_line(self, line: str) -> None:
        """A record already encoded by :func:`record_line`."""
        self._file.write(line)
        self.records += 1

    def object(self, t: float, op: Op, manifest: Mapping[str, Any]) -> None:
        self.write_line(record_line(t, op, object=manifest))

    def delete(self, t: float, kind: str, key: str) -> None:
        self.write_line(record_line(t, Op.DELETE, kind=kind, key=key))

    def bind(self, t: float, key: str, node: str, scheduler: str) -> None:
        self.write_line(record_line(t, Op.BIND, key=key, node=node, scheduler=scheduler))

    def scheduled(self, t: float, key: str, node: str, controller: str) -> None:
        self.write_line(record_line(t, Op.SCHEDULED, key=key, node=node, controller=controller))

    def end(self, t: float) -> None:
        self.write_line(record_line(t, Op.END))


def record_line(t: float, op: Op, **fields: Any) -> str:
    """One record as its JSON line (newline included)."""
    record: dict[str, Any] = {"t": round(t, 3), "op": str(op)}
    record.update((k, v) for k, v in fields.items() if v is not None)
    return _dumps(record) + "\n"


# ---- reading --------------------------------------------------------------------------


def _check_header(data: Any, where: str) -> TraceHeader:
    if not isinstance(data, Mapping):
        raise TraceError(f"{where}: expected the trace header (a JSON object)")
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        raise TraceError(
            f"{where}: apiVersion/kind: expected {API_VERSION} {KIND}, "
            f"got {data.get('apiVersion')!r} {data.get('kind')!r}"
        )
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise TraceError(f"{where}: version: expected a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise TraceError(
            f"{where}: version: the trace is format version {version}; this ksched reads "
            f"up to {FORMAT_VERSION}"
        )
    texts: dict[str, str | None] = {}
    for field in ("source", "name", "start", "cluster"):
        value = data.get(field)
        if value is not None and not isinstance(value, str):
            raise TraceError(f"{where}: {field}: expected a string, got {value!r}")
        texts[field] = value
    return TraceHeader(
        source=texts["source"] or "record",
        name=texts["name"],
        start=texts["start"],
        cluster=texts["cluster"],
        anonymized=bool(data.get("anonymized", False)),
        version=version,
    )


def _text(record: Mapping[str, Any], field: str, where: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value:
        raise TraceError(f"{where}: {field}: expected a non-empty string, got {value!r}")
    return value


def _event(record: Any, where: str) -> TraceEvent:
    """One record line (decoded) as a TraceEvent; TraceError names the field."""
    if not isinstance(record, Mapping):
        raise TraceError(f"{where}: expected a record (a JSON object)")
    t = record.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise TraceError(f"{where}: t: expected seconds >= 0, got {t!r}")
    raw_op = record.get("op")
    try:
        op = Op(str(raw_op))
    except ValueError:
        known = ", ".join(o.value for o in Op)
        raise TraceError(f"{where}: op: unknown {raw_op!r} (one of {known})") from None
    if op in OBJECT_OPS:
        obj = _object(record.get("object"), where)
        return TraceEvent(t=float(t), op=op, object=obj, kind=KINDS[type(obj)], key=object_key(obj))
    if op is Op.END:
        return TraceEvent(t=float(t), op=op)
    if op is Op.DELETE:
        kind = _text(record, "kind", where)
        if kind not in _STORE_KINDS:
            raise TraceError(f"{where}: kind: unknown kind {kind!r}")
        return TraceEvent(t=float(t), op=op, kind=kind, key=_text(record, "key", where))
    key, node = _text(record, "key", where), _text(record, "node", where)
    if op is Op.BIND:
        scheduler = _text(record, "scheduler", where)
        return TraceEvent(t=float(t), op=op, kind="Pod", key=key, node=node, scheduler=scheduler)
    controller = _text(record, "controller", where)
    return TraceEvent(t=float(t), op=op, kind="Pod", key=key, node=node, controller=controller)


def _object(raw: Any, where: str) -> KubeObject:
    if not isinstance(raw, Mapping):
        raise TraceError(f"{where}: object: expected a Kubernetes object (a JSON object)")
    try:
        return read_object(raw)
    except ManifestError as exc:
        raise TraceError(f"{where}: object: {exc}") from None


def _decoded(lines: Iterator[tuple[int, str]], path: str) -> Iterator[tuple[str, Any]]:
    number = 0
    while True:
        try:
            number, line = next(lines)
        except StopIteration:
            return
        except EOFError:
            return  # a gzip stream cut short (the recorder was killed): read up to there
        except (gzip.BadGzipFile, UnicodeDecodeError) as exc:
            raise TraceError(f"{path}:{number + 1}: cannot read: {exc}") from None
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            yield where, json.loads(line)
        except ValueError as exc:
            raise TraceError(f"{where}: not a JSON record: {exc}") from None


def trace_lines(text: IO[str], path: str) -> Trace:
    """A Trace over an open text stream, read line by line as it is iterated."""
    numbered = enumerate(text, start=1)
    decoded = _decoded(numbered, path)
    first = next(decoded, None)
    if first is None:
        raise TraceError(f"{path}:1: empty file: expected the trace header")
    header = _check_header(first[1], first[0])
    stream = _Stream(decoded)
    return Trace(header, stream.initial(), stream.events())


class _Stream:
    """Splits one pass over the records into the initial objects and the events."""

    def __init__(self, decoded: Iterator[tuple[str, Any]]) -> None:
        self._decoded = decoded
        self._pending: TraceEvent | None = None
        self._initial_done = False
        self._last_t = 0.0

    def _next(self) -> TraceEvent | None:
        item = next(self._decoded, None)
        if item is None:
            return None
        where, record = item
        event = _event(record, where)
        if event.t < self._last_t:
            raise TraceError(
                f"{where}: t: {event.t:g} is before the previous record's {self._last_t:g} "
                "(records must be in time order)"
            )
        if event.op is Op.INIT and self._initial_done:
            raise TraceError(f"{where}: op: an init record after the first change")
        self._last_t = event.t
        return event

    def initial(self) -> Iterator[KubeObject]:
        while not self._initial_done:
            event = self._next()
            if event is None or event.op is not Op.INIT:
                self._pending = event
                self._initial_done = True
                return
            assert event.object is not None
            yield event.object

    def events(self) -> Iterator[TraceEvent]:
        for _ in self.initial():  # not read by the caller: passed over
            pass
        event, self._pending = self._pending, None
        while event is not None:
            yield event
            if event.op is Op.END:
                return
            event = self._next()


@contextmanager
def open_trace(path: str | Path) -> Iterator[Trace]:
    """Open a trace file for reading: ``with open_trace(p) as trace: ...``.

    Records are read and checked as ``trace.initial`` and ``trace.events`` are iterated.

    Raises:
        TraceError: a bad header or record; the message names file, line and field.
        OSError: the file cannot be read.
    """
    path = Path(path)
    with _open_text(path, "r") as text:
        yield trace_lines(text, str(path))


def read_header(path: str | Path) -> TraceHeader:
    """The header of a trace file alone (the rest is not read)."""
    with open_trace(path) as trace:
        return trace.header


def is_trace_file(path: str | Path) -> bool:
    """Whether the file starts with a trace header (a scenario or workload does not)."""
    try:
        with _open_text(Path(path), "r") as text:
            first = text.readline()
    except (OSError, EOFError, UnicodeDecodeError):
        return False
    try:
        data = json.loads(first)
    except ValueError:
        return False
    return isinstance(data, Mapping) and data.get("kind") == KIND


class BufferedTraceWriter:
    """A TraceWriter fed on the event loop: lines are kept in memory and written from a
    worker thread (every ``interval`` seconds, and on :meth:`flush`), so no file I/O or
    compression runs on the loop."""

    def __init__(self, writer: TraceWriter, interval: float = 0.5) -> None:
        self.writer = writer
        self.interval = interval
        self._lines: list[str] = []
        self._lock = anyio.Lock()

    def write_line(self, line: str) -> None:
        self._lines.append(line)

    def _write_all(self, lines: list[str]) -> None:
        for line in lines:
            self.writer.write_line(line)
        self.writer.flush()

    async def flush(self) -> None:
        async with self._lock:
            lines, self._lines = self._lines, []
            if lines:
                await anyio.to_thread.run_sync(self._write_all, lines)

    async def serve(self) -> None:
        """Flush every ``interval`` seconds until cancelled (then once more, shielded)."""
        try:
            while True:
                await anyio.sleep(self.interval)
                await self.flush()
        finally:
            with anyio.CancelScope(shield=True):
                await self.flush()
