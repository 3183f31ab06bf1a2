"""``replay``, ``extender serve`` and ``run`` name the configuration file, the field and the
nearest registered plugin, as ``simulate`` does, and exit 2 before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched.cli import main

REPO = Path(__file__).resolve().parents[2]

BAD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: NodeResourceFit
"""


@pytest.mark.parametrize(
    "command",
    [
        ["replay", str(REPO / "examples/traces/small-day.jsonl.gz"), "--config"],
        ["replay", str(REPO / "examples/traces/small-day.jsonl.gz"), "--compare"],
        ["extender", "serve", "--http", "--listen", "127.0.0.1:0", "--config"],
        ["run", "--kubeconfig", "/never/read", "--config"],  # refused before connecting
    ],
)
def test_a_misspelt_plugin_is_named_with_file_and_field(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    assert main([*command, str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"ksched: error: {bad}: KubeSchedulerConfiguration: "
        'profiles[0].plugins.multiPoint.enabled[0].name: plugin "NodeResourceFit" is not '
        'registered; did you mean "NodeResourcesFit"?\n'
    )
