"""Go-style durations (``1h30m``, ``250ms``), as configs and scenario steps write them."""

from __future__ import annotations

import re

__all__ = ["parse_duration"]

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float:
    """Seconds in a Go-style duration (``1h30m``, ``1.5s``, ``250ms``) or a number."""
    if isinstance(value, bool):
        raise ValueError(f"invalid duration {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"invalid duration {value!r}")
    pos, total = 0, 0.0
    for match in _DURATION.finditer(value):
        if match.start() != pos:
            raise ValueError(f"invalid duration {value!r}")
        total += float(match[1]) * _UNITS[match[2]]
        pos = match.end()
    if pos != len(value):
        raise ValueError(f"invalid duration {value!r}")
    return total
