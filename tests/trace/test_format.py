"""The trace file: written and read back record by record, gzip by suffix, and every
reading error names the file, the line and the field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from ksched.api import Node, Pod
from ksched.trace import (
    FORMAT_VERSION,
    Op,
    TraceError,
    TraceHeader,
    TraceWriter,
    is_trace_file,
    open_trace,
    read_header,
)

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
}
HEADER = '{"apiVersion":"ksched.io/v1alpha1","kind":"Trace","version":1}\n'


def _write(path: Path) -> None:
    with TraceWriter(path, TraceHeader(source="test", name="t")) as writer:
        writer.object(0.0, Op.INIT, NODE)
        writer.object(1.25, Op.CREATE, POD)
        writer.bind(1.5, "shop/web", "n1", "default-scheduler")
        writer.scheduled(1.6, "shop/web", "n1", "default-scheduler")
        writer.delete(9.0004, "Pod", "shop/web")
        writer.end(10.0)


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz"])
def test_written_records_read_back_in_order(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    _write(path)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"  # gzip by suffix
    assert is_trace_file(path)
    assert read_header(path) == TraceHeader(source="test", name="t", version=FORMAT_VERSION)
    with open_trace(path) as trace:
        initial = list(trace.initial)
        events = list(trace.events)
    assert [type(o) for o in initial] == [Node]
    assert [(e.t, e.op, e.key) for e in events] == [
        (1.25, Op.CREATE, "shop/web"),
        (1.5, Op.BIND, "shop/web"),
        (1.6, Op.SCHEDULED, "shop/web"),
        (9.0, Op.DELETE, "shop/web"),  # t kept to the millisecond
        (10.0, Op.END, ""),
    ]
    assert isinstance(events[0].object, Pod) and events[0].object.uid == "u1"
    assert (events[1].node, events[1].scheduler) == ("n1", "default-scheduler")
    assert events[2].controller == "default-scheduler"


def test_the_reader_streams_a_line_at_a_time(tmp_path: Path) -> None:
    """A bad record late in the file is met only when the reader gets there."""
    path = tmp_path / "t.jsonl"
    init = json.dumps({"t": 0, "op": "init", "object": NODE})
    delete = json.dumps({"t": 1, "op": "delete", "kind": "Pod", "key": "a/b"})
    path.write_text(f'{HEADER}{init}\n{delete}\n{{"t": 1, "op": "create", "object": 7}}\n')
    with open_trace(path) as trace:
        assert len(list(trace.initial)) == 1  # read without touching line 4
        events = iter(trace.events)
        assert next(events).op is Op.DELETE
        with pytest.raises(TraceError, match=r"t\.jsonl:4: object: expected a Kubernetes"):
            next(events)


def test_a_gzip_trace_cut_short_reads_up_to_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    _write(path)
    data = gzip.decompress(path.read_bytes())
    with open_trace(path) as trace:
        list(trace.initial)
        full = list(trace.events)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(data)[:-8])  # the recorder was killed: no gzip trailer
    with open_trace(cut) as trace:
        list(trace.initial)
        assert list(trace.events) == full


CASES: list[tuple[str, str, str]] = [
    ("empty", "", r"x\.jsonl:1: empty file"),
    ("not-json", "{nope\n", r"x\.jsonl:1: not a JSON record"),
    (
        "wrong-kind",
        '{"apiVersion":"v1","kind":"Pod"}\n',
        r"x\.jsonl:1: apiVersion/kind: expected ksched.io/v1alpha1 Trace",
    ),
    (
        "newer-version",
        '{"apiVersion":"ksched.io/v1alpha1","kind":"Trace","version":99}\n',
        r"x\.jsonl:1: version: the trace is format version 99; this ksched reads up to 1",
    ),
    ("bad-t", HEADER + '{"t":-1,"op":"end"}\n', r"x\.jsonl:2: t: expected seconds >= 0"),
    ("bad-op", HEADER + '{"t":1,"op":"explode"}\n', r"x\.jsonl:2: op: unknown 'explode'"),
    (
        "bad-object-field",
        HEADER
        + json.dumps({"t": 1, "op": "create", "object": {**NODE, "spec": {"taints": 3}}})
        + "\n",
        r"x\.jsonl:2: object: Node n1: spec\.taints",
    ),
    (
        "delete-without-key",
        HEADER + '{"t":1,"op":"delete","kind":"Pod"}\n',
        r"x\.jsonl:2: key: expected a non-empty string",
    ),
    (
        "unknown-kind",
        HEADER + '{"t":1,"op":"delete","kind":"Secret","key":"a/b"}\n',
        r"x\.jsonl:2: kind: unknown kind 'Secret'",
    ),
    (
        "bind-without-node",
        HEADER + '{"t":1,"op":"bind","key":"a/b","scheduler":"s"}\n',
        r"x\.jsonl:2: node: expected a non-empty string",
    ),
    (
        "time-goes-back",
        HEADER + '{"t":5,"op":"delete","kind":"Pod","key":"a/b"}\n{"t":4,"op":"end"}\n',
        r"x\.jsonl:3: t: 4 is before the previous record's 5",
    ),
    (
        "init-after-change",
        HEADER
        + '{"t":1,"op":"delete","kind":"Pod","key":"a/b"}\n'
        + json.dumps({"t": 1, "op": "init", "object": NODE})
        + "\n",
        r"x\.jsonl:3: op: an init record after the first change",
    ),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reading_errors_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(text)
    with pytest.raises(TraceError, match=message), open_trace(path) as trace:
        list(trace.initial)
        list(trace.events)


def test_records_are_one_compact_line_each(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path)
    lines = path.read_text().splitlines()
    first: dict[str, Any] = json.loads(lines[0])
    assert first == {
        "apiVersion": "ksched.io/v1alpha1",
        "kind": "Trace",
        "version": 1,
        "source": "test",
        "name": "t",
    }
    assert lines[3] == (
        '{"t":1.5,"op":"bind","key":"shop/web","node":"n1","scheduler":"default-scheduler"}'
    )
    assert len(lines) == 7
