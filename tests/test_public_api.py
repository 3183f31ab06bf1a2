"""The public API: each package's ``__all__`` is sorted, complete and names only public
things, and plugins reach the framework only through its public modules."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import ksched

SRC = Path(ksched.__file__).parent
PUBLIC_MODULES = [
    "ksched",
    "ksched.api",
    "ksched.cache",
    "ksched.cluster",
    "ksched.config",
    "ksched.extender",
    "ksched.extender.serving",
    "ksched.framework",
    "ksched.framework.batch",
    "ksched.framework.runtime",
    "ksched.kube",
    "ksched.observability",
    "ksched.plugins",
    "ksched.queue",
    "ksched.scheduler",
    "ksched.simulate",
    "ksched.testing",
]


def _ruff_order(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then the rest."""
    if name.isupper():
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


def _re_exported(module: ModuleType) -> set[str]:
    """The names a package module binds at its top level (imports and definitions)."""
    tree = ast.parse(Path(module.__file__ or "").read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):  # re-exports: ``from ._x import Name as Name``
            names.update(a.asname for a in node.names if a.asname and a.asname == a.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_") and n != "annotations"}


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_sorted_complete_and_public(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_ruff_order), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    for item in exported:
        assert not item.startswith("_"), f"{name}.__all__ names private {item!r}"
        value = getattr(module, item)  # resolves
        assert not (isinstance(value, ModuleType) and value.__name__.split(".")[-1].startswith("_"))
    missing = _re_exported(module) - set(exported) - {"TYPE_CHECKING"}
    assert not missing, f"{name} binds public names left out of __all__: {sorted(missing)}"


def test_the_plugin_authors_api_is_the_framework_package() -> None:
    """The protocols, statuses and node infos an author needs, without the batch
    machinery, which is ksched.framework.batch."""
    import ksched.framework as framework
    import ksched.framework.batch as batch

    for needed in ("FilterPlugin", "ScorePlugin", "Status", "Code", "CycleState", "NodeInfo"):
        assert needed in framework.__all__
    for needed in ("Handle", "SKIP", "SpecMemo", "PermitPlugin", "BindPlugin"):
        assert needed in framework.__all__
    machinery = {"NodeTable", "BoolArray", "IntArray", "PodIndex", "SignFragment", "Capabilities"}
    assert machinery <= set(batch.__all__)
    assert not machinery & set(framework.__all__)


def _private_framework_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if "framework" in parts:
                after = parts[parts.index("framework") + 1 :]
                if after and after[0].startswith("_"):
                    found.append(f"{path.relative_to(SRC.parent)}:{node.lineno} {node.module}")
    return found


def test_plugins_import_only_the_public_framework() -> None:
    """In-tree plugins use the framework as an out-of-tree plugin would."""
    roots = [SRC / "plugins", SRC.parent.parent / "examples" / "plugins" / "src"]
    offenders = [
        hit for root in roots if root.exists() for p in root.rglob("*.py")
        for hit in _private_framework_imports(p)
    ]  # fmt: skip
    assert offenders == []


def test_the_framework_imports_no_plugin() -> None:
    """The framework decides from the plugins' declarations, never from their classes."""
    for path in (SRC / "framework").rglob("*.py"):
        text = path.read_text()
        assert "ksched.plugins" not in text and "..plugins" not in text, path


def test_engine_packages_import_no_user_side_package() -> None:
    """The edges and the engine never import the user's side (cli, simulate, bench)."""
    user_side = ("cli", "simulate", "bench")
    below = ("api", "framework", "plugins", "queue", "cache", "cluster", "config",
             "scheduler", "observability", "kube", "extender")  # fmt: skip
    for package in below:
        for path in (SRC / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level >= 1:
                    head = node.module.split(".")[0]
                    assert head not in user_side or node.level == 1, f"{path}: {node.module}"


FUNCTION_LINE_LIMIT = 80


def test_engine_functions_stay_short() -> None:
    """No function of the engine (scheduler/) or the framework is over 80 lines: each
    reads as one of upstream's."""
    long = []
    for package in ("scheduler", "framework"):
        for path in (SRC / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > FUNCTION_LINE_LIMIT:
                        long.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} {lines}")
    assert long == []


def test_every_module_imports() -> None:
    for info in pkgutil.walk_packages(ksched.__path__, "ksched."):
        if info.name.startswith("ksched.bench"):
            continue  # an optional extra
        importlib.import_module(info.name)
