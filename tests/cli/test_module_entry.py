"""``python -m ksched`` is the ``ksched`` command."""

from __future__ import annotations

import subprocess
import sys

import yaml


def test_python_dash_m_ksched_runs_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ksched", "config", "defaults"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    assert config["kind"] == "KubeSchedulerConfiguration"
    assert config["profiles"][0]["schedulerName"] == "default-scheduler"


def test_python_dash_m_ksched_exits_2_on_bad_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ksched", "no-such-command"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no-such-command" in done.stderr
