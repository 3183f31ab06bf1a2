"""The running event loop's checkpoints, looked up once rather than on every call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.lowlevel
import sniffio

__all__ = ["Checkpoint", "loop_checkpoints"]

Checkpoint = Callable[[], Awaitable[None]]


def loop_checkpoints() -> tuple[Checkpoint, Checkpoint]:
    """``(checkpoint_if_cancelled, cancel_shielded_checkpoint)`` as anyio's run them:
    trio's own under trio (the same calls, without anyio's dispatch on every pop of a
    large run), anyio's otherwise."""
    try:
        library = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        library = ""
    if library == "trio":
        import trio.lowlevel

        return trio.lowlevel.checkpoint_if_cancelled, trio.lowlevel.cancel_shielded_checkpoint
    return anyio.lowlevel.checkpoint_if_cancelled, anyio.lowlevel.cancel_shielded_checkpoint
