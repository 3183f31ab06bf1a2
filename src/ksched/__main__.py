"""``python -m ksched``: the ``ksched`` command, for environments without its script."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
