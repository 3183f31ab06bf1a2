"""plugin_registry: in-tree plugins, entry points and module:Factory specs, with errors."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from ksched._errors import ConfigError
from ksched.plugins import IN_TREE, in_tree_factory
from ksched.scheduler import ENTRY_POINT_GROUP, _registry, plugin_registry
from ksched.testing import FakeHandle

PLUGINS = textwrap.dedent(
    """
    class Good:
        name = "Good"

        @classmethod
        def new(cls, args, handle):
            return cls()

    class Other:
        name = "Good"

        @classmethod
        def new(cls, args, handle):
            return cls()

    class Clash:
        name = "NodeName"

        @classmethod
        def new(cls, args, handle):
            return cls()

    class Nameless:
        @classmethod
        def new(cls, args, handle):
            return cls()

    class BadNew:
        name = "BadNew"

        @classmethod
        def new(cls, args):
            return cls()

    def function_factory(args, handle):
        return Good()

    function_factory.name = "FromFunction"

    class Holder:
        class Inner:
            name = "Inner"

            @classmethod
            def new(cls, args, handle):
                return cls()

    NOT_A_FACTORY = 42
    """
)


@pytest.fixture
def plugins_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An importable module of plugin factories (and a broken one)."""
    (tmp_path / "discovery_fixture_plugins.py").write_text(PLUGINS)
    (tmp_path / "discovery_fixture_broken.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "discovery_fixture_plugins"
    for name in ("discovery_fixture_plugins", "discovery_fixture_broken"):
        sys.modules.pop(name, None)


def use_entry_points(monkeypatch: pytest.MonkeyPatch, *specs: tuple[str, str]) -> None:
    eps = [EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in specs]

    def fake(*, group: str) -> list[EntryPoint]:
        assert group == ENTRY_POINT_GROUP
        return eps

    monkeypatch.setattr(_registry, "entry_points", fake)


def test_in_tree_plugins_are_all_there(monkeypatch: pytest.MonkeyPatch) -> None:
    use_entry_points(monkeypatch)
    registry = plugin_registry()
    assert set(registry) == set(IN_TREE)
    for name, factory in registry.items():
        assert factory == in_tree_factory(name)


def test_specs_add_plugins_by_their_name(
    monkeypatch: pytest.MonkeyPatch, plugins_module: str
) -> None:
    use_entry_points(monkeypatch)
    registry = plugin_registry(
        [
            f"{plugins_module}:Good",
            f"{plugins_module}:function_factory",
            f" {plugins_module} : Holder.Inner ",
        ]
    )
    module = sys.modules[plugins_module]
    assert registry["Good"] == module.Good.new
    assert registry["FromFunction"] is module.function_factory
    assert registry["Inner"] == module.Holder.Inner.new
    plugin = registry["Good"](None, FakeHandle())
    assert isinstance(plugin, module.Good)


def test_entry_points_add_plugins_under_their_name(
    monkeypatch: pytest.MonkeyPatch, plugins_module: str
) -> None:
    use_entry_points(
        monkeypatch,
        ("Good", f"{plugins_module}:Good"),
        ("Good", f"{plugins_module}:Good"),  # the same distribution found twice
        ("FromFunction", f"{plugins_module}:function_factory"),
    )
    registry = plugin_registry([f"{plugins_module}:Good"])  # the same factory again
    module = sys.modules[plugins_module]
    assert registry["Good"] == module.Good.new
    assert registry["FromFunction"] is module.function_factory
    assert set(registry) == set(IN_TREE) | {"Good", "FromFunction"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "plugin 'no_colon': expected 'module:Factory'"),
        ("mod:", "plugin 'mod:': expected 'module:Factory'"),
        (
            "discovery_fixture_missing:Good",
            "plugin 'discovery_fixture_missing:Good': cannot import module "
            "'discovery_fixture_missing': ModuleNotFoundError: No module named "
            "'discovery_fixture_missing'",
        ),
        (
            "discovery_fixture_broken:Good",
            "plugin 'discovery_fixture_broken:Good': cannot import module "
            "'discovery_fixture_broken': RuntimeError: boom",
        ),
        (
            "discovery_fixture_plugins:Missing",
            "plugin 'discovery_fixture_plugins:Missing': module 'discovery_fixture_plugins' "
            "has no attribute 'Missing'",
        ),
        (
            "discovery_fixture_plugins:Holder.Missing",
            "plugin 'discovery_fixture_plugins:Holder.Missing': "
            "discovery_fixture_plugins.Holder has no attribute 'Missing'",
        ),
        (
            "discovery_fixture_plugins:Nameless",
            "plugin 'discovery_fixture_plugins:Nameless': discovery_fixture_plugins.Nameless "
            "has no 'name' attribute",
        ),
        (
            "discovery_fixture_plugins:NOT_A_FACTORY",
            "plugin 'discovery_fixture_plugins:NOT_A_FACTORY': 42 has no 'name' attribute",
        ),
        (
            "discovery_fixture_plugins:BadNew",
            "plugin 'discovery_fixture_plugins:BadNew': discovery_fixture_plugins.BadNew.new"
            "(args) is not a plugin factory: it must accept (args, handle)",
        ),
        (
            "discovery_fixture_plugins:Clash",
            "plugin 'discovery_fixture_plugins:Clash': plugin name 'NodeName' is already "
            "taken by the in-tree plugin",
        ),
    ],
)
def test_bad_specs(
    monkeypatch: pytest.MonkeyPatch, plugins_module: str, spec: str, message: str
) -> None:
    use_entry_points(monkeypatch)
    with pytest.raises(ConfigError) as info:
        plugin_registry([spec])
    assert message in str(info.value)


def test_two_factories_under_one_name(monkeypatch: pytest.MonkeyPatch, plugins_module: str) -> None:
    use_entry_points(monkeypatch, ("Good", f"{plugins_module}:Good"))
    with pytest.raises(ConfigError) as info:
        plugin_registry([f"{plugins_module}:Other"])
    assert str(info.value) == (
        f"plugin '{plugins_module}:Other': plugin name 'Good' is already taken by entry "
        f"point Good = '{plugins_module}:Good' (group ksched.plugins)"
    )


def test_object_that_is_not_a_factory(monkeypatch: pytest.MonkeyPatch, plugins_module: str) -> None:
    use_entry_points(monkeypatch, ("Number", f"{plugins_module}:NOT_A_FACTORY"))
    with pytest.raises(ConfigError) as info:
        plugin_registry()
    assert str(info.value) == (
        f"entry point Number = '{plugins_module}:NOT_A_FACTORY' (group ksched.plugins): "
        "42 is not a plugin factory: expected a class with new(args, handle) or a callable "
        "factory(args, handle)"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            ("Gone", "discovery_fixture_missing:Good"),
            "entry point Gone = 'discovery_fixture_missing:Good' (group ksched.plugins): "
            "cannot import module 'discovery_fixture_missing': ModuleNotFoundError",
        ),
        (
            ("Broken", "discovery_fixture_broken:Good"),
            "entry point Broken = 'discovery_fixture_broken:Good' (group ksched.plugins): "
            "cannot import module 'discovery_fixture_broken': RuntimeError: boom",
        ),
        (
            ("Missing", "discovery_fixture_plugins:Missing"),
            "entry point Missing = 'discovery_fixture_plugins:Missing' (group "
            "ksched.plugins): module 'discovery_fixture_plugins' has no attribute 'Missing'",
        ),
        (
            ("Other", "discovery_fixture_plugins:Good"),
            "entry point Other = 'discovery_fixture_plugins:Good' (group ksched.plugins): "
            "the plugin's name attribute is 'Good', but the entry point names it 'Other'",
        ),
        (
            ("NodeName", "discovery_fixture_plugins:Clash"),
            "entry point NodeName = 'discovery_fixture_plugins:Clash' (group "
            "ksched.plugins): plugin name 'NodeName' is already taken by the in-tree plugin",
        ),
        (
            ("BadNew", "discovery_fixture_plugins:BadNew"),
            "discovery_fixture_plugins.BadNew.new(args) is not a plugin factory",
        ),
    ],
    ids=["missing-module", "import-fails", "missing-attribute", "name-mismatch", "clash", "arity"],
)
def test_bad_entry_points(
    monkeypatch: pytest.MonkeyPatch,
    plugins_module: str,
    entry: tuple[str, str],
    message: str,
) -> None:
    use_entry_points(monkeypatch, entry)
    with pytest.raises(ConfigError) as info:
        plugin_registry()
    assert message in str(info.value)


def test_in_tree_class_registered_again_is_no_clash(monkeypatch: pytest.MonkeyPatch) -> None:
    use_entry_points(monkeypatch, ("NodeName", "ksched.plugins.node_name:NodeName"))
    assert plugin_registry(["ksched.plugins.node_name:NodeName"])["NodeName"] == (
        in_tree_factory("NodeName")
    )
