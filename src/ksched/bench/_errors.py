"""The benchmark harness's error."""

from __future__ import annotations

from .._errors import KschedError

__all__ = ["WorkloadError"]


class WorkloadError(KschedError, ValueError):
    """A workload file, op, param or template ksched cannot run; the message names it."""
