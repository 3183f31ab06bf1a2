"""``ksched --help`` and ``--version``: plain text, every command with its summary."""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest

from ksched.cli import main
from ksched.cli._main import _parser


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    return capsys.readouterr().out


def _commands() -> dict[str, str]:
    """Each subcommand the parser registers, with the summary it was registered with."""
    parser = _parser([])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: str(action.help) for action in sub._choices_actions}


def test_help_lists_every_command_with_its_one_line_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _help(["--help"], capsys)
    commands = _commands()
    assert {"simulate", "check", "config", "plugins", "bench", "run", "extender"} <= set(commands)
    flat = " ".join(text.split())
    for name, summary in commands.items():
        assert summary, f"{name} has no summary"
        assert f"{name} {summary}" in flat
    assert "exit status:" in text
    assert "2 bad input; the message names the file, the object and the field" in flat


@pytest.mark.parametrize("argv", [["--help"], ["bench", "--help"], ["simulate", "--help"]])
def test_help_is_plain_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(argv, capsys)
    assert "``" not in text
    assert "`" not in text


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert _help(["--version"], capsys) == f"ksched {version('ksched')}\n"
