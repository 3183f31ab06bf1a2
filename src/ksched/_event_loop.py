"""The running event loop's own clock and checkpoints, looked up once rather than
dispatched by anyio on every call (a scheduling loop reads them per pod)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import sniffio

__all__ = ["Checkpoint", "loop_checkpoints", "loop_clock"]

Checkpoint = Callable[[], Awaitable[None]]


def _library() -> str:
    try:
        return sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return ""


def loop_clock() -> Callable[[], float]:
    """The running event loop's clock, as ``anyio.current_time`` reads it: trio's
    ``current_time`` (a MockClock included) or the asyncio loop's ``time``."""
    library = _library()
    if library == "trio":
        import trio

        return trio.current_time
    if library == "asyncio":
        import asyncio

        return asyncio.get_running_loop().time
    return anyio.current_time


def loop_checkpoints() -> tuple[Checkpoint, Checkpoint]:
    """``(checkpoint_if_cancelled, cancel_shielded_checkpoint)`` as anyio runs them:
    trio's own under trio, anyio's otherwise."""
    if _library() == "trio":
        import trio.lowlevel

        return trio.lowlevel.checkpoint_if_cancelled, trio.lowlevel.cancel_shielded_checkpoint
    return anyio.lowlevel.checkpoint_if_cancelled, anyio.lowlevel.cancel_shielded_checkpoint
