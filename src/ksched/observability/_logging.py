"""Structured logs through the standard ``logging`` module, as klog's habits go.

Engine code logs with ``extra={"kv": {...}}``; the formatters write those pairs as
``key=value`` (the default, like klog's text output) or as one JSON object per line
(``--log-format json``, like klog's JSON format). Verbosity follows ``-v``: nothing but
warnings and the lines an operator acts on at 0 (one line per scheduling failure, never
one per node), ``-v`` adds what succeeded (binds), ``-vv`` debug detail.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import IO, Any

__all__ = ["JsonFormatter", "KeyValueFormatter", "configure_logging", "kv"]

_BASE = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}


def kv(**pairs: Any) -> dict[str, Mapping[str, Any]]:
    """``extra=`` for a log call: ``log.info("Bound", extra=kv(pod=key, node=name))``."""
    return {"kv": pairs}


def _pairs(record: logging.LogRecord) -> Mapping[str, Any]:
    pairs = getattr(record, "kv", None)
    return pairs if isinstance(pairs, Mapping) else {}


def _quote(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n\t'):
        return json.dumps(text)
    return text


class KeyValueFormatter(logging.Formatter):
    """``ts=... level=info logger=ksched.scheduler msg="..." pod=default/web node=n1``."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        parts = [
            f"ts={stamp}.{int(record.msecs):03d}Z",
            f"level={record.levelname.lower()}",
            f"logger={record.name}",
            f"msg={_quote(record.getMessage())}",
        ]
        parts.extend(f"{k}={_quote(v)}" for k, v in _pairs(record).items())
        if record.exc_info:
            parts.append(f"err={_quote(self.formatException(record.exc_info))}")
        return " ".join(parts)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg`` and the pairs."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": record.created,
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update({k: v if isinstance(v, int | float | bool) else str(v)
                    for k, v in _pairs(record).items()})  # fmt: skip
        if record.exc_info:
            out["err"] = self.formatException(record.exc_info)
        return json.dumps(out)


def configure_logging(verbosity: int, fmt: str = "text", stream: IO[str] | None = None) -> None:
    """Log ksched's records to ``stream`` (stderr) at the level ``-v`` asks for.

    0: warnings, errors and scheduling failures; 1: also binds and lifecycle; 2+: debug.
    """
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    root = logging.getLogger("ksched")
    root.handlers[:] = [handler]
    root.propagate = False
    root.setLevel(logging.DEBUG if verbosity >= 2 else logging.INFO)
    logging.getLogger("ksched.scheduler.binding").setLevel(
        logging.INFO if verbosity >= 1 else logging.WARNING
    )
    logging.getLogger("httpx").setLevel(logging.INFO if verbosity >= 2 else logging.WARNING)
