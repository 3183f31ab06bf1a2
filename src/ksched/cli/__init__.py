"""The ``ksched`` command and what only it uses: input loading, rendering, plots."""

from ._main import main as main

__all__ = ["main"]
