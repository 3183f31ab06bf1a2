"""The documents a user follows: the scenario format is in docs/ (in step with the shared
contract) and the repository's documents link to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_FORMAT = ROOT.parent / "shared" / "scenario-format.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
DOCUMENTS = [
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "README.md",
    ROOT / "tests" / "conformance" / "INDEX.md",
]


@pytest.mark.skipif(not SHARED_FORMAT.is_file(), reason="no shared/ beside the checkout")
def test_scenario_format_is_the_shared_contract_word_for_word() -> None:
    local = (ROOT / "docs" / "scenario-format.md").read_text()
    shared = SHARED_FORMAT.read_text()
    assert local.startswith(shared)
    assert local[len(shared) :].startswith("\n## In this repository\n")


@pytest.mark.parametrize("doc", DOCUMENTS, ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_relative_links_name_files_that_exist(doc: Path) -> None:
    text = doc.read_text()
    targets = [t for t in LINK.findall(text) if "://" not in t and not t.startswith("mailto:")]
    missing = [t for t in targets if not (doc.parent / t).exists()]
    assert missing == [], f"{doc.relative_to(ROOT)} links to missing files: {missing}"


def test_the_conformance_index_names_the_format_where_it_is() -> None:
    index = ROOT / "tests" / "conformance" / "INDEX.md"
    (path,) = re.findall(r"format: (\S+\.md)", index.read_text())
    assert (index.parent / path).resolve() == ROOT / "docs" / "scenario-format.md"
    for doc in ("scenario-output.md",):
        text = (ROOT / "docs" / doc).read_text()
        bare = re.findall(r"(?<![\[(/])scenario-format\.md(?!\])", text)
        assert bare == [], f"docs/{doc} names scenario-format.md without linking it"


def _recipe(makefile: str, target: str) -> list[str]:
    lines = makefile.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        body.append(line.strip())
    return body


def test_readme_says_what_make_demo_installs() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "demo: $(STAMP)" in makefile
    installs = [line for line in _recipe(makefile, "$(STAMP)") if " install " in line]
    assert installs == [
        "$(BIN)/pip install --quiet --upgrade pip",
        "$(BIN)/pip install --quiet -e '.[dev]'",
        "$(BIN)/pip install --quiet -e examples/plugins",
    ]
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "make demo # simulates examples/scenarios/demo.yaml" in readme
    assert (
        "Both first create `.venv` and install into it, editable, `ksched[dev]` (ksched with "
        "the test, lint and plot tools) and the example plugin package `examples/plugins`"
    ) in readme
    assert "installs ksched," not in readme
