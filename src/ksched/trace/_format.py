"""The trace: an initial cluster, then timed changes (docs/trace-format.md).

Any source builds the same :class:`Trace`: ``ksched record`` (a real cluster), a scenario
file or a scheduler_perf workload (``ksched trace convert``), or another reader that
makes ``Trace(header, initial, events)`` itself. ``ksched replay`` reads only this.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

from .._errors import KschedError
from ..api import KubeObject

__all__ = [
    "API_VERSION",
    "FORMAT_VERSION",
    "KIND",
    "Op",
    "Trace",
    "TraceError",
    "TraceEvent",
    "TraceHeader",
]

API_VERSION = "ksched.io/v1alpha1"
KIND = "Trace"
FORMAT_VERSION = 1
"""The version this ksched writes; it reads this one and every older one."""


class TraceError(KschedError, ValueError):
    """A trace that cannot be read: the message names the file, the line and the field."""


class Op(enum.StrEnum):
    """What a trace record says happened."""

    INIT = "init"
    """An object of the initial cluster (``t`` 0): all of them come first."""
    CREATE = "create"
    UPDATE = "update"
    """The object as it is now (its whole stored form, not a patch)."""
    DELETE = "delete"
    BIND = "bind"
    """A pod was bound to ``node`` (by the scheduler named ``scheduler``)."""
    SCHEDULED = "scheduled"
    """The ``Scheduled`` Event of a pod: which controller reported the binding."""
    END = "end"
    """The recording stopped cleanly at ``t`` (absent: the trace was cut short)."""


OBJECT_OPS = frozenset({Op.INIT, Op.CREATE, Op.UPDATE})


@attrs.frozen(kw_only=True)
class TraceHeader:
    """The first line of a trace: what it is and where it came from."""

    source: str = "record"
    """Who made it: ``record``, ``scenario``, ``scheduler_perf``, ``openb``..."""
    start: str | None = None
    """Wall-clock time (RFC 3339, UTC) of ``t`` 0, when known."""
    cluster: str | None = None
    """The API server recorded (left out when anonymized)."""
    anonymized: bool = False
    name: str | None = None
    """A name for reports (a scenario's, a workload's)."""
    version: int = FORMAT_VERSION


@attrs.frozen(kw_only=True)
class TraceEvent:
    """One timed change. ``t`` is seconds since the start of the trace.

    ``object`` is set for init, create and update; ``kind`` and ``key`` (``namespace/name``
    or a cluster-scoped ``name``) name the object of every record but ``end``; ``node``,
    ``scheduler`` and ``controller`` belong to bind and scheduled records.
    """

    t: float
    op: Op
    object: KubeObject | None = None
    kind: str = ""
    key: str = ""
    node: str | None = None
    scheduler: str | None = None
    controller: str | None = None


@attrs.frozen
class Trace:
    """A trace as readers give it: the header, the initial objects, then the events.

    ``initial`` and ``events`` may be one-pass iterators over a file being read (see
    :func:`~ksched.trace.open_trace`): read ``initial`` first, then ``events``, once. A
    reader of another source builds one directly, e.g.
    ``Trace(TraceHeader(source="openb"), nodes, arrivals_and_deletions())``; events must
    come in non-decreasing ``t``.
    """

    header: TraceHeader
    initial: Iterable[KubeObject]
    events: Iterable[TraceEvent]
