"""DefaultPreemptionArgs: minCandidateNodesPercentage and minCandidateNodesAbsolute.

# pkg/scheduler/apis/config/v1/defaults.go, validation/validation_pluginargs.go
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..._errors import ConfigError

__all__ = ["NAME", "DefaultPreemptionArgs"]

NAME = "DefaultPreemption"


# ---- args -----------------------------------------------------------------------------


@attrs.frozen
class DefaultPreemptionArgs:
    """DefaultPreemptionArgs with the v1 defaults (10 %, 100 nodes)."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> DefaultPreemptionArgs:
        """Read the pluginConfig ``args`` (camelCase) and validate them as upstream."""
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{NAME}: args: must be a mapping, not {type(raw).__name__}")
        known = {"minCandidateNodesPercentage", "minCandidateNodesAbsolute", "apiVersion", "kind"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigError(f"{NAME}: args.{unknown[0]}: unknown field")
        args = cls(
            min_candidate_nodes_percentage=_int_arg(raw, "minCandidateNodesPercentage", 10),
            min_candidate_nodes_absolute=_int_arg(raw, "minCandidateNodesAbsolute", 100),
        )
        args.validate()
        return args

    def validate(self) -> None:
        """Upstream ValidateDefaultPreemptionArgs: raises ConfigError listing every problem."""
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        pct_path, abs_path = "args.minCandidateNodesPercentage", "args.minCandidateNodesAbsolute"
        errs: list[str] = []
        if not 0 <= pct <= 100:
            errs.append(f"{pct_path}: Invalid value: {pct}: not in valid range [0, 100]")
        if absolute < 0:
            errs.append(f"{abs_path}: Invalid value: {absolute}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            errs.append(
                f"{pct_path}: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesAbsolute"
            )
            errs.append(
                f"{abs_path}: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesPercentage"
            )
        if errs:
            raise ConfigError(f"{NAME}: " + "; ".join(errs))


def _int_arg(raw: Mapping[str, Any], key: str, default: int) -> int:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{NAME}: args.{key}: must be an integer, not {value!r}")
    return value
