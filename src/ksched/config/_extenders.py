"""The ``extenders:`` of a KubeSchedulerConfiguration.

# staging/src/k8s.io/kube-scheduler/config/v1/types.go (Extender),
# pkg/scheduler/extender.go (DefaultExtenderTimeout = 5 * time.Second when httpTimeout is
# zero or unset), pkg/scheduler/apis/config/validation/validation.go (validateExtenders)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._errors import ConfigError
from ..api import parse_duration

__all__ = ["DEFAULT_HTTP_TIMEOUT", "ExtenderConfig", "ManagedResource", "parse_extenders"]

DEFAULT_HTTP_TIMEOUT = 5.0
"""NewHTTPExtender's DefaultExtenderTimeout: 5 s when httpTimeout is unset or zero."""

_FIELDS = frozenset(
    {
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    }
)
_TLS_FIELDS = frozenset(
    {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
)


@attrs.frozen
class ManagedResource:
    """An extended resource the extender manages (it is interested in pods asking for it)."""

    name: str
    ignored_by_scheduler: bool = False


@attrs.frozen(kw_only=True)
class ExtenderConfig:
    """One extender: where it is, which verbs it serves, how it is called."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: Mapping[str, Any] = attrs.field(factory=dict)
    http_timeout: float = DEFAULT_HTTP_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False


def _fail(path: str, message: str) -> ConfigError:
    return ConfigError(f"KubeSchedulerConfiguration: {path}: {message}")


def _str(raw: Mapping[str, Any], key: str, path: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise _fail(f"{path}.{key}", f"expected a string, got {value!r}")
    return value


def _bool(raw: Mapping[str, Any], key: str, path: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise _fail(f"{path}.{key}", f"expected true or false, got {value!r}")
    return value


def _extender(raw: Any, path: str) -> ExtenderConfig:
    if not isinstance(raw, Mapping):
        raise _fail(path, f"expected a mapping, got {raw!r}")
    for key in raw:
        if key not in _FIELDS:
            raise ConfigError(f'KubeSchedulerConfiguration: unknown field "{path}.{key}"')
    url = _str(raw, "urlPrefix", path)
    if not url:
        raise _fail(f"{path}.urlPrefix", "Required value")
    weight = raw.get("weight", 0)
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise _fail(f"{path}.weight", f"expected an integer, got {weight!r}")
    timeout = DEFAULT_HTTP_TIMEOUT
    if raw.get("httpTimeout") is not None:
        try:
            timeout = parse_duration(raw["httpTimeout"]) or DEFAULT_HTTP_TIMEOUT
        except ValueError as exc:
            raise _fail(f"{path}.httpTimeout", str(exc)) from None
    tls = raw.get("tlsConfig") or {}
    if not isinstance(tls, Mapping):
        raise _fail(f"{path}.tlsConfig", f"expected a mapping, got {tls!r}")
    for key in tls:
        if key not in _TLS_FIELDS:
            raise ConfigError(f'KubeSchedulerConfiguration: unknown field "{path}.tlsConfig.{key}"')
    managed: list[ManagedResource] = []
    for j, item in enumerate(raw.get("managedResources") or ()):
        item_path = f"{path}.managedResources[{j}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise _fail(f"{item_path}.name", "Required value")
        managed.append(ManagedResource(item["name"], bool(item.get("ignoredByScheduler", False))))
    config = ExtenderConfig(
        url_prefix=url,
        filter_verb=_str(raw, "filterVerb", path),
        preempt_verb=_str(raw, "preemptVerb", path),
        prioritize_verb=_str(raw, "prioritizeVerb", path),
        bind_verb=_str(raw, "bindVerb", path),
        weight=weight,
        enable_https=_bool(raw, "enableHTTPS", path),
        tls_config=dict(tls),
        http_timeout=timeout,
        node_cache_capable=_bool(raw, "nodeCacheCapable", path),
        managed_resources=tuple(managed),
        ignorable=_bool(raw, "ignorable", path),
    )
    if config.prioritize_verb and config.weight <= 0:
        raise _fail(
            f"{path}.weight",
            f"Invalid value: {config.weight}: must have a positive weight applied to it",
        )
    return config


def parse_extenders(raw: Any, path: str = "extenders") -> tuple[ExtenderConfig, ...]:
    """The ``extenders`` list; ConfigError naming the field, as upstream's validation."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(path, f"expected a list, got {raw!r}")
    extenders = tuple(_extender(item, f"{path}[{i}]") for i, item in enumerate(raw))
    binders = sum(1 for e in extenders if e.bind_verb)
    if binders > 1:
        raise _fail(
            path,
            f'Invalid value: "found {binders} extenders implementing bind": '
            "only one extender can implement bind",
        )
    names = [r.name for e in extenders for r in e.managed_resources]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise _fail(
                path,
                f'Invalid value: "{name}": duplicate extender managed resource name',
            )
    return extenders
