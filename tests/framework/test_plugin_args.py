"""parse_plugin_args: pluginConfig args read into attrs classes, with named errors."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
import pytest

from ksched._errors import ConfigError
from ksched.framework import parse_plugin_args
from ksched.framework._plugin_args import yaml_key


class Strategy(enum.Enum):
    LEAST = "LeastAllocated"
    MOST = "MostAllocated"


@attrs.frozen(kw_only=True)
class Resource:
    name: str
    weight: int = 1


@attrs.frozen(kw_only=True)
class Args:
    mode: Literal["strict", "preferred"] = "strict"
    strategy: Strategy = Strategy.LEAST
    resources: tuple[Resource, ...] = ()
    labels: Mapping[str, str] = attrs.field(factory=dict)
    names: frozenset[str] = frozenset()
    order: Sequence[int] = ()
    pair: tuple[int, str] = (0, "")
    timeout_seconds: float = 30.0
    limit: int | None = None
    enabled: bool = True
    extra: Any = None
    percentage: int = attrs.field(default=50, validator=attrs.validators.le(100))


@attrs.frozen(kw_only=True)
class Required:
    target: str


def parse(raw: Mapping[str, Any] | None) -> Args:
    return parse_plugin_args(Args, raw, plugin="Demo")


def test_defaults_for_none_and_empty() -> None:
    assert parse(None) == Args()
    assert parse({}) == Args()
    # apiVersion/kind may accompany typed args in a KubeSchedulerConfiguration.
    assert parse({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DemoArgs"}) == Args()


def test_every_supported_type() -> None:
    args = parse(
        {
            "mode": "preferred",
            "strategy": "MostAllocated",
            "resources": [{"name": "cpu"}, {"name": "memory", "weight": 3}],
            "labels": {"team": "ml"},
            "names": ["a", "b", "a"],
            "order": [3, 1],
            "pair": [7, "x"],
            "timeoutSeconds": 5,
            "limit": None,
            "enabled": False,
            "extra": {"anything": [1]},
            "percentage": 100,
        }
    )
    assert args == Args(
        mode="preferred",
        strategy=Strategy.MOST,
        resources=(Resource(name="cpu"), Resource(name="memory", weight=3)),
        labels={"team": "ml"},
        names=frozenset({"a", "b"}),
        order=(3, 1),
        pair=(7, "x"),
        timeout_seconds=5.0,
        limit=None,
        enabled=False,
        extra={"anything": [1]},
        percentage=100,
    )
    assert isinstance(args.timeout_seconds, float)
    assert parse({"limit": 4}).limit == 4


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "Demo: args: must be a mapping, not a list"),
        ({"bogus": 1}, "Demo: args.bogus: unknown field; known fields: enabled, extra, "),
        (
            {"timeout_seconds": 1},
            "Demo: args.timeout_seconds: unknown field (did you mean 'timeoutSeconds'?)",
        ),
        ({"mode": "loose"}, "Demo: args.mode: must be one of 'strict', 'preferred', not 'loose'"),
        (
            {"strategy": "Balanced"},
            "Demo: args.strategy: must be one of 'LeastAllocated', 'MostAllocated', not 'Balanced'",
        ),
        ({"resources": {"name": "cpu"}}, "Demo: args.resources: must be a list, not a mapping"),
        ({"resources": [{"weight": 2}]}, "Demo: args.resources[0].name: required"),
        (
            {"resources": [{"name": "cpu", "weigth": 2}]},
            "Demo: args.resources[0].weigth: unknown field; known fields: name, weight",
        ),
        ({"resources": [{"name": 5}]}, "Demo: args.resources[0].name: must be a string, not 5"),
        ({"labels": {"team": 1}}, "Demo: args.labels.team: must be a string, not 1"),
        ({"order": [1, "2"]}, "Demo: args.order[1]: must be an integer, not '2'"),
        ({"pair": [1]}, "Demo: args.pair: must be a list of 2 items, got 1"),
        ({"timeoutSeconds": "5s"}, "Demo: args.timeoutSeconds: must be a number, not '5s'"),
        ({"timeoutSeconds": True}, "Demo: args.timeoutSeconds: must be a number, not True"),
        ({"limit": True}, "Demo: args.limit: must be an integer, not True"),
        ({"limit": 1.5}, "Demo: args.limit: must be an integer, not 1.5"),
        ({"enabled": "true"}, "Demo: args.enabled: must be a boolean, not 'true'"),
        ({"percentage": 101}, "Demo: args: 'percentage' must be <= 100: 101"),
    ],
)
def test_errors_name_plugin_and_field(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(raw)
    assert str(info.value).startswith(message)


def test_required_field() -> None:
    with pytest.raises(ConfigError, match=r"^Demo: args\.target: required$"):
        parse_plugin_args(Required, None, plugin="Demo")
    assert parse_plugin_args(Required, {"target": "n1"}, plugin="Demo") == Required(target="n1")


def test_union_of_types_reports_each() -> None:
    @attrs.frozen
    class Either:
        value: int | str = 0

    assert parse_plugin_args(Either, {"value": "x"}, plugin="P") == Either("x")
    with pytest.raises(ConfigError) as info:
        parse_plugin_args(Either, {"value": 1.5}, plugin="P")
    assert str(info.value) == (
        "P: args.value: must be an integer, not 1.5; or must be a string, not 1.5"
    )


def test_not_an_attrs_class_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="is not an attrs class"):
        parse_plugin_args(dict, {}, plugin="P")


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("mode", "mode"),
        ("rare_card_types", "rareCardTypes"),
        ("timeout_seconds", "timeoutSeconds"),
        ("_private", "private"),
    ],
)
def test_yaml_key(field: str, key: str) -> None:
    assert yaml_key(field) == key
