"""PodTopologySpreadArgs: reading, defaults and validation.

# pkg/scheduler/apis/config/v1/defaults.go SetDefaults_PodTopologySpreadArgs
# pkg/scheduler/apis/config/validation/validation_pluginargs.go ValidatePodTopologySpreadArgs
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from ..._errors import ConfigError
from ...api import LabelSelector, TopologySpreadConstraint
from ._common import DO_NOT_SCHEDULE, LABEL_HOSTNAME, LABEL_ZONE, SCHEDULE_ANYWAY

__all__ = [
    "LIST_DEFAULTING",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpreadArgs",
]

PLUGIN = "PodTopologySpread"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)
"""Spreading for pods without constraints of their own under ``defaultingType: System``."""


@attrs.frozen(kw_only=True)
class PodTopologySpreadArgs:
    """The plugin's args (kubescheduler.config.k8s.io/v1 PodTopologySpreadArgs)."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def from_dict(cls, args: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
        """Read ``args`` (YAML field names), apply the v1 defaults and validate."""
        if args is None:
            return cls()
        if not isinstance(args, Mapping):
            raise ConfigError(f"{PLUGIN}: args: must be a mapping, got {type(args).__name__}")
        _no_unknown(args, _ARGS_FIELDS, "")
        raw = args.get("defaultConstraints")
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            raise ConfigError(f"{PLUGIN}: args.defaultConstraints: must be a list")
        constraints = tuple(
            _read_constraint(item, f"defaultConstraints[{i}]") for i, item in enumerate(raw)
        )
        defaulting = args.get("defaultingType")
        if defaulting is None or defaulting == "":
            defaulting = SYSTEM_DEFAULTING
        if not isinstance(defaulting, str):
            raise ConfigError(f"{PLUGIN}: args.defaultingType: must be a string")
        parsed = cls(default_constraints=constraints, defaulting_type=defaulting)
        parsed.validate()
        return parsed

    def validate(self) -> None:
        """Raise ConfigError listing every problem (upstream ValidatePodTopologySpreadArgs)."""
        errors = _validate(self)
        if errors:
            raise ConfigError("; ".join(f"{PLUGIN}: args.{e}" for e in errors))


def _fail(path: str, message: str) -> ConfigError:
    return ConfigError(f"{PLUGIN}: args.{path}: {message}")


def _read_int(item: Mapping[str, Any], key: str, path: str, default: int | None) -> int | None:
    value = item.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{path}.{key}", f"must be an integer, got {value!r}")
    return value


def _read_str(item: Mapping[str, Any], key: str, path: str) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(f"{path}.{key}", f"must be a string, got {value!r}")
    return value


_ARGS_FIELDS = frozenset({"apiVersion", "kind", "defaultConstraints", "defaultingType"})
_CONSTRAINT_FIELDS = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)


def _no_unknown(data: Mapping[str, Any], known: frozenset[str], path: str) -> None:
    """Strict decoding: a field the args type does not have is an error."""
    for key in data:
        if key not in known:
            where = f"{path}.{key}" if path else str(key)
            raise ConfigError(f'{PLUGIN}: args: unknown field "{where}"')


def _read_constraint(item: Any, path: str) -> TopologySpreadConstraint:
    if not isinstance(item, Mapping):
        raise _fail(path, "must be a mapping")
    _no_unknown(item, _CONSTRAINT_FIELDS, path)
    keys = item.get("matchLabelKeys") or []
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise _fail(f"{path}.matchLabelKeys", "must be a list of strings")
    # Only the presence of a selector matters: validation forbids one.
    selector = LabelSelector() if item.get("labelSelector") is not None else None
    return TopologySpreadConstraint(
        max_skew=_read_int(item, "maxSkew", path, 0) or 0,
        topology_key=_read_str(item, "topologyKey", path) or "",
        when_unsatisfiable=_read_str(item, "whenUnsatisfiable", path) or "",
        label_selector=selector,
        min_domains=_read_int(item, "minDomains", path, None),
        node_affinity_policy=_read_str(item, "nodeAffinityPolicy", path),
        node_taints_policy=_read_str(item, "nodeTaintsPolicy", path),
        match_label_keys=tuple(keys),
    )


# ---- validation (apimachinery field.Error wording) -----------------------------------

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_DNS_SUBDOMAIN_RE = re.compile(f"^{_DNS_SUBDOMAIN_FMT}$")
_DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _qualified_name_errors(value: str) -> list[str]:
    """apimachinery validation.IsQualifiedName."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS_SUBDOMAIN_RE.match(prefix):
                errs.append(
                    "prefix part "
                    + _regex_error(_DNS_SUBDOMAIN_MSG, _DNS_SUBDOMAIN_FMT, "example.com")
                )
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.match(name):
        errs.append(
            "name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def _q(value: str) -> str:
    """Go's %q for the plain strings found here."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _validate(args: PodTopologySpreadArgs) -> list[str]:
    errors: list[str] = []
    dt = args.defaulting_type
    if dt not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errors.append(
            f"defaultingType: Unsupported value: {_q(dt)}: supported values: "
            f'"{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"'
        )
    elif dt == SYSTEM_DEFAULTING and args.default_constraints:
        errors.append(
            f"defaultingType: Invalid value: {_q(dt)}: when .defaultConstraints are not empty"
        )
    constraints = args.default_constraints
    for i, c in enumerate(constraints):
        path = f"defaultConstraints[{i}]"
        if c.max_skew <= 0:
            errors.append(
                f"{path}.maxSkew: Invalid value: {c.max_skew}: not in valid range (0, inf)"
            )
        if not c.topology_key:
            errors.append(f"{path}.topologyKey: Required value: can not be empty")
        else:
            errors.extend(
                f"{path}.topologyKey: Invalid value: {_q(c.topology_key)}: {msg}"
                for msg in _qualified_name_errors(c.topology_key)
            )
        wu = c.when_unsatisfiable
        if not wu:
            errors.append(f"{path}.whenUnsatisfiable: Required value: can not be empty")
        elif wu not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errors.append(
                f"{path}.whenUnsatisfiable: Unsupported value: {_q(wu)}: supported values: "
                f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"'
            )
        if c.label_selector is not None:
            errors.append(
                f"{path}.labelSelector: Forbidden: constraint must not define a selector, "
                "as they deduced for each pod"
            )
        for other in constraints[:i]:
            if (other.topology_key, other.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errors.append(
                    f"{path}: Duplicate value: "
                    + _q(f"{{{c.topology_key}, {c.when_unsatisfiable}}}")
                )
                break
    return errors
