"""Finding plugins: the in-tree ones, entry points, and ``module:Factory`` specs.

An installed distribution offers plugins through the entry-point group ``ksched.plugins``:
the entry point's name is the plugin name, its value the factory::

    [project.entry-points."ksched.plugins"]
    StickyNode = "ksched_example_plugins.sticky_node:StickyNode"

A factory is a class (or object) with a ``new(args, handle)`` method, as the in-tree
plugins have, or any callable ``factory(args, handle)`` returning the plugin.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from .._errors import ConfigError
from ..framework import PluginFactory
from ..plugins import IN_TREE, in_tree_factory

__all__ = ["ENTRY_POINT_GROUP", "plugin_registry"]

ENTRY_POINT_GROUP = "ksched.plugins"


def plugin_registry(specs: Sequence[str] = ()) -> dict[str, PluginFactory]:
    """Every plugin ksched can build, by name: in-tree, entry points, then ``specs``.

    Each spec is ``module:Factory`` (``Factory`` may be a dotted attribute path); the
    plugin's name is the factory's ``name`` attribute. Naming the same factory twice
    (an entry point and a spec, say) is harmless.

    Raises:
        ConfigError: naming the spec or entry point, when its module cannot be imported,
            the attribute is missing, the object is not a plugin factory, it has no name,
            or its name is taken by an in-tree or another plugin.
    """
    registry: dict[str, PluginFactory] = {}
    sources: dict[str, tuple[object, str]] = {}
    for name in IN_TREE:
        factory = in_tree_factory(name)
        assert factory is not None
        registry[name] = factory
        sources[name] = (getattr(factory, "__self__", factory), "the in-tree plugin")
    for ep in _entry_points():
        where = _describe(ep)
        target = _load(ep.module, ep.attr, where)
        declared = getattr(target, "name", None)
        if isinstance(declared, str) and declared != ep.name:
            raise ConfigError(
                f"{where}: the plugin's name attribute is {declared!r}, "
                f"but the entry point names it {ep.name!r}"
            )
        _add(registry, sources, ep.name, target, where)
    for spec in specs:
        where = f"plugin {spec!r}"
        module, sep, attr = spec.partition(":")
        if not sep or not module.strip() or not attr.strip():
            raise ConfigError(f"{where}: expected 'module:Factory'")
        target = _load(module.strip(), attr.strip(), where)
        declared = getattr(target, "name", None)
        if not isinstance(declared, str) or not declared:
            raise ConfigError(
                f"{where}: {_show(target)} has no 'name' attribute (a non-empty string, "
                "the plugin's name)"
            )
        _add(registry, sources, declared, target, where)
    return registry


def _entry_points() -> list[EntryPoint]:
    # The same distribution found twice on sys.path lists its entry points twice.
    seen: dict[tuple[str, str], EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        seen.setdefault((ep.name, ep.value), ep)
    return sorted(seen.values(), key=lambda ep: (ep.name, ep.value))


def _describe(ep: EntryPoint) -> str:
    dist = f", from {ep.dist.name} {ep.dist.version}" if ep.dist is not None else ""
    return f"entry point {ep.name} = {ep.value!r} (group {ENTRY_POINT_GROUP}{dist})"


def _load(module_name: str, attr_path: str, where: str) -> object:
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a plugin's import may fail in any way; report it, named
        raise ConfigError(
            f"{where}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    target: object = module
    for part in attr_path.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(f"{where}: {_show(target)} has no attribute {part!r}") from None
    return target


def _as_factory(target: object, where: str) -> PluginFactory:
    new = getattr(target, "new", None)
    factory: Any = new if callable(new) else target
    if not callable(factory):
        raise ConfigError(
            f"{where}: {_show(target)} is not a plugin factory: expected a class with "
            "new(args, handle) or a callable factory(args, handle)"
        )
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # some builtins have no signature: trust them
        return cast(PluginFactory, factory)
    try:
        signature.bind(None, None)
    except TypeError:
        shown = f"{_show(target)}.new" if factory is new else _show(target)
        raise ConfigError(
            f"{where}: {shown}{signature} is not a plugin factory: it must accept (args, handle)"
        ) from None
    return cast(PluginFactory, factory)


def _add(
    registry: dict[str, PluginFactory],
    sources: dict[str, tuple[object, str]],
    name: str,
    target: object,
    where: str,
) -> None:
    factory = _as_factory(target, where)
    if name in sources:
        source, owner = sources[name]
        if source is target:
            return
        raise ConfigError(f"{where}: plugin name {name!r} is already taken by {owner}")
    registry[name] = factory
    sources[name] = (target, where)


def _show(target: object) -> str:
    if inspect.ismodule(target):
        return f"module {target.__name__!r}"
    qualname = getattr(target, "__qualname__", None)
    module = getattr(target, "__module__", None)
    if isinstance(qualname, str) and isinstance(module, str):
        return f"{module}.{qualname}"
    return repr(target)
