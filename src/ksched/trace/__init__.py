"""Traces: an initial cluster plus timed changes, one format for every source.

``ksched record`` writes them from a real cluster, ``ksched trace convert`` from scenario
files and scheduler_perf workloads, and ``ksched replay`` runs them (docs/trace-format.md).
A reader of another source builds a :class:`Trace` itself and hands it to
``ksched.replay.replay``.
"""

from ._anonymize import KEPT_LABEL_VALUES as KEPT_LABEL_VALUES
from ._anonymize import Anonymizer as Anonymizer
from ._format import API_VERSION as API_VERSION
from ._format import FORMAT_VERSION as FORMAT_VERSION
from ._format import KIND as KIND
from ._format import Op as Op
from ._format import Trace as Trace
from ._format import TraceError as TraceError
from ._format import TraceEvent as TraceEvent
from ._format import TraceHeader as TraceHeader
from ._io import BufferedTraceWriter as BufferedTraceWriter
from ._io import TraceWriter as TraceWriter
from ._io import is_trace_file as is_trace_file
from ._io import open_trace as open_trace
from ._io import read_header as read_header
from ._io import record_line as record_line
from ._io import trace_lines as trace_lines
from ._strip import NEVER_RECORDED as NEVER_RECORDED
from ._strip import strip_object as strip_object

__all__ = [
    "API_VERSION",
    "FORMAT_VERSION",
    "KEPT_LABEL_VALUES",
    "KIND",
    "NEVER_RECORDED",
    "Anonymizer",
    "BufferedTraceWriter",
    "Op",
    "Trace",
    "TraceError",
    "TraceEvent",
    "TraceHeader",
    "TraceWriter",
    "is_trace_file",
    "open_trace",
    "read_header",
    "record_line",
    "strip_object",
    "trace_lines",
]
