"""Writing the report of a large run: the JSON document, JSON lines, spooled explanations.

The report of 100 000 pods is written entry by entry, each with the C encoder, so neither
the text of the whole document nor an indented copy of it is ever held in memory; the
explanations of ``--explain all`` go to a sink while the run goes on (``run_scenario``'s
``explain_sink``) and are copied into the output from there.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, TextIO

__all__ = ["ExplainSpool", "JsonLinesSink", "write_json", "write_jsonl"]

_dumps = json.JSONEncoder(ensure_ascii=True, check_circular=False).encode


class ExplainSpool:
    """Explanations kept in a temporary file until the JSON document is written.

    Each is one line, ``"namespace/name": {...}``, in the order the attempts ended.
    """

    def __init__(self) -> None:
        # Closed by close() or the with-block that owns the spool.
        self._file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self.count = 0

    def __call__(self, pod: str, entry: Mapping[str, Any]) -> None:
        self._file.write(f"{_dumps(pod)}: {_dumps(entry)}\n")
        self.count += 1

    def entries(self) -> Iterator[str]:
        """The spooled ``"pod": {...}`` members, from the first."""
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            yield line.rstrip("\n")

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ExplainSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class JsonLinesSink:
    """Explanations written at once as JSON lines: ``{"record": "explain", "pod": ...}``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.count = 0

    def __call__(self, pod: str, entry: Mapping[str, Any]) -> None:
        self.stream.write(_dumps({"record": "explain", "pod": pod, "explain": entry}) + "\n")
        self.count += 1


def _members(value: Any) -> Iterator[str] | None:
    """A non-empty top-level object or array as its members, one per line; else None."""
    if isinstance(value, Mapping) and value:
        return (f"{_dumps(k)}: {_dumps(v)}" for k, v in value.items())
    if isinstance(value, list | tuple) and value:
        return (_dumps(item) for item in value)
    return None


def write_json(
    report: Mapping[str, Any], out: TextIO, *, explain: Iterable[str] | None = None
) -> None:
    """The report as one JSON document: a top-level key per line, and each member of a
    top-level object or array on a line of its own (``jq`` reads it as any JSON).

    Args:
        report: what ``run_scenario`` returned.
        out: where to write.
        explain: ``"pod": {...}`` members for ``explain`` (an ``ExplainSpool``'s
            entries), written in place of ``report["explain"]``.
    """
    keys = list(report)
    if explain is not None and "explain" not in keys:
        keys.append("explain")
    out.write("{")
    for i, key in enumerate(keys):
        out.write(",\n" if i else "\n")
        out.write(f"  {_dumps(key)}: ")
        value = report.get(key)
        members: Iterator[str] | None
        if key == "explain" and explain is not None:
            value, members = {}, iter(explain)
        else:
            members = _members(value)
        first = next(members, None) if members is not None else None
        if members is None or first is None:
            out.write(_dumps(value))
            continue
        opening, closing = "[]" if isinstance(value, list | tuple) else "{}"
        out.write(f"{opening}\n    {first}")
        for member in members:
            out.write(f",\n    {member}")
        out.write(f"\n  {closing}")
    out.write("\n}\n")


_PER_ITEM = {"pods": "pod", "nodes": "node", "groups": "group"}
_SUMMARY = ("scenario", "settled", "time", "evicted")


def write_jsonl(report: Mapping[str, Any], out: TextIO) -> None:
    """The report as JSON lines, each an object whose ``record`` says what it is.

    ``explain`` (each pod's explanation, unless a sink wrote them during the run), then
    ``pod``, ``node``, ``group``, ``event`` and ``step`` (one per timeline entry), and last
    ``summary`` (``scenario``, ``settled``, ``time``, ``evicted``).
    """
    write = out.write
    for pod, entry in (report.get("explain") or {}).items():
        write(_dumps({"record": "explain", "pod": pod, "explain": entry}) + "\n")
    for key, record in _PER_ITEM.items():
        for name, entry in (report.get(key) or {}).items():
            write(_dumps({"record": record, record: name, **entry}) + "\n")
    for event in report.get("events") or ():
        write(_dumps({"record": "event", **event}) + "\n")
    for step in report.get("timeline") or ():
        write(_dumps({"record": "step", **step}) + "\n")
    summary = {"record": "summary", **{k: report[k] for k in _SUMMARY if k in report}}
    write(_dumps(summary) + "\n")
