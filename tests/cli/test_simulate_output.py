"""``ksched simulate`` output forms at scale: no explanations by default, ``--explain all``
into the JSON document, as JSON lines or to a file; the progress bar on a terminal only."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ksched.cli import main
from ksched.simulate._stream import ExplainSpool, write_json, write_jsonl

NODES = """
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n2},
     status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"""

PODS = "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
"""
    for name, cpu in (("web-0", "1"), ("web-1", "1"), ("big", "8"))
)
PENDING = {"default/web-0", "default/web-1", "default/big"}


@pytest.fixture
def argv(tmp_path: Path) -> list[str]:
    (tmp_path / "n.yaml").write_text(NODES)
    (tmp_path / "p.yaml").write_text(PODS)
    return ["simulate", "-f", str(tmp_path / "n.yaml"), "-f", str(tmp_path / "p.yaml")]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_has_no_explanations_by_default(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([*argv, "-o", "json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["explain"] == {}
    assert report["pods"]["default/big"]["phase"] == "Unschedulable"


def test_explain_all_in_the_json_document(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([*argv, "-o", "json", "--explain", "all"], capsys)
    assert code == 0
    explain = json.loads(out)["explain"]
    assert set(explain) == PENDING
    assert explain["default/big"]["filter"]["n2"]["reasons"] == ["Insufficient cpu"]
    assert explain["default/web-0"]["selected"] == "n2"


def test_explain_all_as_json_lines(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*argv, "-o", "jsonl", "--explain", "all"], capsys)
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    records = [line["record"] for line in lines]
    # Explanations first (written while the run went on), the summary last.
    assert records == ["explain"] * 3 + ["pod"] * 3 + ["node"] * 2 + ["summary"]
    assert {line["pod"] for line in lines[:3]} == PENDING
    pods = {line["pod"]: line for line in lines if line["record"] == "pod"}
    assert pods["default/big"]["phase"] == "Unschedulable"
    assert pods["default/web-0"]["node"] == "n2"
    nodes = {line["node"]: line for line in lines if line["record"] == "node"}
    assert nodes["n2"]["requested"]["cpu"] == nodes["n1"]["requested"]["cpu"] == 1.0
    assert lines[-1] == {
        "record": "summary",
        "scenario": "manifests",
        "settled": True,
        "time": 0.0,
        "evicted": [],
    }


def test_explain_file_takes_the_explanations(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "explain.jsonl"
    code, out, _ = run(
        [*argv, "-o", "json", "--explain", "big", "--explain-file", str(target)], capsys
    )
    assert code == 0
    assert json.loads(out)["explain"] == {}
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [(line["record"], line["pod"]) for line in lines] == [("explain", "default/big")]
    assert lines[0]["explain"]["selected"] is None
    code, out, _ = run(
        [*argv, "-o", "table", "--explain", "all", "--explain-file", str(target)], capsys
    )
    assert code == 0
    assert f"explanations of 3 pod(s) written to {target}" in " ".join(out.split())
    assert len(target.read_text().splitlines()) == 3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--explain-file", "x.jsonl"], "--explain-file: give --explain POD or --explain all"),
        (
            ["--explain", "all", "--explain-file", "/nonexistent/dir/x.jsonl"],
            "--explain-file /nonexistent/dir/x.jsonl: No such file or directory",
        ),
    ],
)
def test_explain_file_errors_exit_2_before_running(
    argv: list[str], capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = run([*argv, "-o", "json", *extra], capsys)
    assert (code, out) == (2, "")
    assert message in err


def test_table_with_explain_all_shows_each_pod(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([*argv, "-o", "table", "--explain", "all"], capsys)
    assert code == 0
    assert {p for p in PENDING if f"explain {p}" in out} == PENDING


def test_progress_bar_on_a_terminal_stderr(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run([*argv, "-o", "json"], capsys)
    assert code == 0
    assert json.loads(out)["scenario"] == "manifests"
    assert "reading inputs" in err
    assert "scheduling" in err
    assert "3/3" in err


def test_no_progress_bar_when_stderr_is_piped(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert not sys.stderr.isatty()
    code, out, err = run([*argv, "-o", "table"], capsys)
    assert code == 0
    assert err == ""
    assert "scenario manifests" in out


# ---- the writers ------------------------------------------------------------------------

REPORT: dict[str, Any] = {
    "scenario": "s",
    "settled": True,
    "time": 1.5,
    "pods": {"default/a": {"node": "n1", "phase": "Bound"}, "default/b": {"node": None}},
    "evicted": [],
    "explain": {"default/a": {"selected": "n1"}},
    "events": [{"kind": "Bound", "pod": "default/a", "time": 0.0, "details": {}}],
    "timeline": [{"step": 0, "time": 0.0, "pods": {}, "evicted": []}],
}


def test_write_json_is_the_report_one_member_per_line(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    with path.open("w") as f:
        write_json(REPORT, f)
    text = path.read_text()
    assert json.loads(text) == REPORT
    assert '    "default/a": {"node": "n1", "phase": "Bound"},\n' in text
    assert '  "evicted": [],\n' in text


def test_write_json_splices_spooled_explanations(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    with ExplainSpool() as spool, path.open("w") as f:
        spool("default/b", {"selected": None})
        spool("default/a", {"selected": "n1"})
        write_json({**REPORT, "explain": {}}, f, explain=spool.entries())
    report = json.loads(path.read_text())
    assert list(report["explain"]) == ["default/b", "default/a"]
    assert report["explain"]["default/a"] == {"selected": "n1"}
    with ExplainSpool() as spool, path.open("w") as f:
        write_json({**REPORT, "explain": {}}, f, explain=spool.entries())
    assert json.loads(path.read_text())["explain"] == {}


def test_write_jsonl_records(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with path.open("w") as f:
        write_jsonl(REPORT, f)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["record"] for line in lines] == [
        "explain",
        "pod",
        "pod",
        "event",
        "step",
        "summary",
    ]
    assert lines[0] == {"record": "explain", "pod": "default/a", "explain": {"selected": "n1"}}
    assert lines[3] == {"record": "event", **REPORT["events"][0]}


def test_the_collector_runs_rarely_during_a_simulation_and_as_before_after(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    import ksched.simulate

    during: list[tuple[int, int, int]] = []
    frozen: list[int] = []
    real = ksched.simulate.run_scenario

    def spy(*args: Any, **kwargs: Any) -> dict[str, Any]:
        during.append(gc.get_threshold())
        frozen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(ksched.simulate, "run_scenario", spy)
    before = gc.get_threshold()
    code, _, _ = run([*argv, "-o", "json"], capsys)
    assert code == 0
    assert during[0][0] >= 100 * before[0]
    assert frozen[0] > 0  # the inputs (and all before them) are set aside for the run
    assert gc.get_threshold() == before
    assert gc.isenabled() and gc.get_freeze_count() == 0
