"""Typed plugin args: a pluginConfig ``args`` mapping read into an attrs class.

A plugin declares its args as a frozen attrs class with snake_case fields and defaults;
the YAML spells each field in camelCase (``rare_card_types`` <- ``rareCardTypes``), as
kubescheduler.config.k8s.io does. Reading checks every key and value against the field
types and names the plugin and the field path of the first problem; ``build_framework``
adds the profile.
"""

from __future__ import annotations

import collections.abc
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from .._errors import ConfigError

__all__ = ["parse_plugin_args"]

T = TypeVar("T")

_TYPED_ARGS_KEYS = frozenset({"apiVersion", "kind"})
"""Keys that may accompany typed args in a KubeSchedulerConfiguration; ignored."""

_SEQUENCES: Mapping[Any, type] = {
    tuple: tuple,
    list: list,
    frozenset: frozenset,
    set: frozenset,
    collections.abc.Sequence: tuple,
    collections.abc.Set: frozenset,
}

_MAPPINGS = (dict, collections.abc.Mapping)


def yaml_key(field_name: str) -> str:
    """The camelCase YAML key of a snake_case field: ``rare_card_types`` -> ``rareCardTypes``."""
    head, *rest = field_name.lstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class _ArgsError(Exception):
    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail


def parse_plugin_args(args_type: type[T], args: Mapping[str, Any] | None, *, plugin: str) -> T:
    """Read a plugin's pluginConfig ``args`` into an instance of the attrs class ``args_type``.

    Call it in the plugin factory: ``parse_plugin_args(MyArgs, args, plugin=cls.name)``.
    Missing keys take the field defaults (``None`` args: all defaults). Field types may be
    ``str``, ``int``, ``float``, ``bool``, ``Literal[...]``, an ``enum.Enum`` (by value),
    ``X | None``, ``tuple[X, ...]``, ``list[X]``, ``frozenset[X]``, ``dict``/``Mapping[str,
    X]``, another attrs class (a nested mapping) or ``Any``. Validators on the class run
    after the types are checked.

    Raises:
        ConfigError: an unknown key, a value of the wrong type, a missing required field
            or a failing validator; the message names the plugin and the field, e.g.
            ``GpuCardType: args.mode: must be one of 'strict', 'preferred', not 'loose'``.
    """
    try:
        value = _decode_class(args_type, {} if args is None else args, "args", top=True)
    except _ArgsError as exc:
        raise ConfigError(f"{plugin}: {exc.path}: {exc.detail}") from None
    result: T = value
    return result


def _decode_class(cls: type[Any], value: Any, path: str, *, top: bool = False) -> Any:
    if not attrs.has(cls):
        raise TypeError(f"{cls!r} is not an attrs class")
    if not isinstance(value, Mapping):
        raise _ArgsError(path, f"must be a mapping, not {_show(value)}")
    attrs.resolve_types(cls)
    fields = [f for f in attrs.fields(cls) if f.init]
    by_key = {yaml_key(f.name): f for f in fields}
    for key in value:
        if key in by_key or (top and key in _TYPED_ARGS_KEYS):
            continue
        hint = ""
        if isinstance(key, str) and yaml_key(key) in by_key and yaml_key(key) != key:
            hint = f" (did you mean {yaml_key(key)!r}?)"
        known = ", ".join(sorted(by_key)) or "none"
        raise _ArgsError(f"{path}.{key}", f"unknown field{hint}; known fields: {known}")
    kwargs: dict[str, Any] = {}
    for key, field in by_key.items():
        if key not in value:
            if field.default is attrs.NOTHING:
                raise _ArgsError(f"{path}.{key}", "required")
            continue
        kwargs[field.alias] = _decode(field.type, value[key], f"{path}.{key}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise _ArgsError(path, str(exc)) from None


def _decode(tp: Any, value: Any, path: str) -> Any:
    if tp is Any or tp is object or tp is None:
        return value
    origin = typing.get_origin(tp)
    params = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        return _decode_union(params, value, path)
    if origin is typing.Literal:
        if any(value == p and type(value) is type(p) for p in params):
            return value
        allowed = ", ".join(repr(p) for p in params)
        raise _ArgsError(path, f"must be one of {allowed}, not {_show(value)}")
    if origin in _SEQUENCES or tp in _SEQUENCES:
        return _decode_sequence(origin or tp, params, value, path)
    if origin in _MAPPINGS or tp in _MAPPINGS:
        key_type, value_type = params or (Any, Any)
        if not isinstance(value, Mapping):
            raise _ArgsError(path, f"must be a mapping, not {_show(value)}")
        return {
            _decode(key_type, k, f"{path}.{k}"): _decode(value_type, v, f"{path}.{k}")
            for k, v in value.items()
        }
    if isinstance(tp, type):
        return _decode_scalar(tp, value, path)
    raise TypeError(f"unsupported plugin args type {tp!r} at {path}")


def _decode_union(params: tuple[Any, ...], value: Any, path: str) -> Any:
    if value is None and type(None) in params:
        return None
    arms = [p for p in params if p is not type(None)]
    errors: list[_ArgsError] = []
    for arm in arms:
        try:
            return _decode(arm, value, path)
        except _ArgsError as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    raise _ArgsError(path, "; or ".join(e.detail for e in errors))


def _decode_sequence(kind: Any, params: tuple[Any, ...], value: Any, path: str) -> Any:
    if not isinstance(value, list | tuple):
        raise _ArgsError(path, f"must be a list, not {_show(value)}")
    build = _SEQUENCES[kind]
    if kind is tuple and params and not (len(params) == 2 and params[1] is Ellipsis):
        if len(value) != len(params):
            raise _ArgsError(path, f"must be a list of {len(params)} items, got {len(value)}")
        return tuple(
            _decode(p, v, f"{path}[{i}]")
            for i, (p, v) in enumerate(zip(params, value, strict=True))
        )
    item_type = params[0] if params else Any
    return build(_decode(item_type, v, f"{path}[{i}]") for i, v in enumerate(value))


def _decode_scalar(tp: type, value: Any, path: str) -> Any:
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _ArgsError(path, f"must be a boolean, not {_show(value)}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _ArgsError(path, f"must be an integer, not {_show(value)}")
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _ArgsError(path, f"must be a number, not {_show(value)}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise _ArgsError(path, f"must be a string, not {_show(value)}")
    if issubclass(tp, enum.Enum):
        for member in tp:
            if member.value == value and type(member.value) is type(value):
                return member
        allowed = ", ".join(repr(m.value) for m in tp)
        raise _ArgsError(path, f"must be one of {allowed}, not {_show(value)}")
    if attrs.has(tp):
        return _decode_class(tp, value, path)
    if isinstance(value, tp):
        return value
    raise _ArgsError(path, f"must be a {tp.__name__}, not {_show(value)}")


def _show(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)
