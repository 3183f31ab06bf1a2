"""Text forms shared by the table views: cpu, bytes, simulated time, phase colours."""

from __future__ import annotations

__all__ = ["PHASE_STYLES", "format_bytes", "format_cpu", "format_time"]

PHASE_STYLES = {
    "Bound": "green",
    "Unschedulable": "red",
    "Pending": "yellow",
    "Waiting": "cyan",
    "Gated": "magenta",
}
_BINARY = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def format_cpu(cores: float) -> str:
    """``2``, ``1.5``, ``250m``: cores as Kubernetes writes them."""
    if cores and cores < 1:
        return f"{round(cores * 1000)}m"
    return f"{cores:g}"


def format_bytes(amount: float) -> str:
    """``512Mi``, ``1.5Gi``: bytes in binary units, one decimal at most."""
    for suffix, size in _BINARY:
        if abs(amount) >= size:
            return f"{amount / size:.1f}".removesuffix(".0") + suffix
    return f"{amount:g}"


def format_time(seconds: float) -> str:
    """Simulated seconds since the start as ``HH:MM:SS.mmm``."""
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}"
