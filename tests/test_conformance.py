"""The conformance corpus: scenario files carrying upstream test cases, run end to end."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from ksched.simulate import check_scenario

HERE = Path(__file__).parent / "conformance"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "conformance"


def _cases() -> list[object]:
    out: list[object] = []
    for path in sorted(HERE.rglob("*.yaml")):
        out.append(pytest.param(path, id=str(path.relative_to(HERE))))
    return out


@pytest.mark.parametrize("path", _cases())
def test_scenario(path: Path) -> None:
    result = check_scenario(path)
    assert result.passed, result.detail


@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared/ corpus beside the checkout")
def test_copy_is_in_step_with_shared() -> None:
    shared = {p.relative_to(SHARED) for p in SHARED.rglob("*") if p.is_file()}
    local = {p.relative_to(HERE) for p in HERE.rglob("*") if p.is_file()}
    assert shared <= local, f"missing from tests/conformance: {sorted(map(str, shared - local))}"
    differing = [str(p) for p in shared if not _same(SHARED / p, HERE / p)]
    assert not differing, f"tests/conformance differs from shared/: {differing}"


INDEX_LINK = ("format: ../scenario-format.md", "format: ../../docs/scenario-format.md")
"""INDEX.md names the format where it is: beside the corpus in shared/, in docs/ here."""


def _same(shared: Path, local: Path) -> bool:
    if shared.name == "INDEX.md":
        return shared.read_text().replace(*INDEX_LINK) == local.read_text()
    return filecmp.cmp(shared, local, shallow=False)
