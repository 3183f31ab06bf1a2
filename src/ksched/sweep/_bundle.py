"""A cell's input files as one content-addressed bundle, and a worker's cache of them.

The driver reads every input once and names it by the SHA-256 of its files. A worker
loads a bundle (writes its files into a folder of its own, parses them) the first time a
cell needs it and keeps it for the next cells: on a Dask cluster the bundle's bytes go to
each worker once (``Client.scatter(..., broadcast=True)``); local processes share the
disk, so they get the bundle without its bytes and read the files, checking the digest.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import KschedError

__all__ = ["Bundle", "loaded", "make_bundle"]


@attrs.frozen
class Bundle:
    """Files by name relative to ``root``; ``entries`` are the paths a cell is given."""

    digest: str
    root: str
    """The folder the names are relative to (how errors name the files)."""
    names: tuple[str, ...]
    entries: tuple[str, ...]
    data: tuple[bytes, ...] | None = attrs.field(default=None, repr=False, eq=False)
    """The files' bytes; None: read them from ``root`` (same disk)."""

    def without_data(self) -> Bundle:
        """The same bundle, its files to be read from disk by whoever loads it."""
        return attrs.evolve(self, data=None)

    def contents(self) -> tuple[bytes, ...]:
        """The files' bytes, read (and checked against the digest) when not carried."""
        if self.data is not None:
            return self.data
        data = tuple(Path(self.root, name).read_bytes() for name in self.names)
        if _digest(self.names, data) != self.digest:
            raise KschedError(f"{self.root}: the input files changed since the sweep began")
        return data


def _digest(names: Sequence[str], data: Sequence[bytes]) -> str:
    h = hashlib.sha256()
    for name, content in zip(names, data, strict=True):
        h.update(name.encode() + b"\0" + str(len(content)).encode() + b"\0")
        h.update(content)
    return h.hexdigest()


def make_bundle(entries: Sequence[Path], files: Sequence[Path]) -> Bundle:
    """The bundle of ``files`` (every file the ``entries`` stand for)."""
    absolute = [p.resolve() for p in files]
    tops = [p.resolve() for p in entries]
    root = Path(os.path.commonpath([p.parent for p in absolute] + [p.parent for p in tops]))
    names = tuple(str(p.relative_to(root)) for p in absolute)
    data = tuple(p.read_bytes() for p in absolute)
    return Bundle(
        digest=_digest(names, data),
        root=str(root),
        names=names,
        entries=tuple(str(p.relative_to(root)) for p in tops),
        data=data,
    )


_CACHE: dict[tuple[str, str], Any] = {}
_FOLDERS: list[str] = []


@atexit.register
def _remove_folders() -> None:
    for folder in _FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


def loaded(bundle: Bundle, what: str, load: Callable[[list[Path]], Any]) -> Any:
    """``load(entry paths)`` of the bundle written out, once per process and ``what``."""
    key = (bundle.digest, what)
    if key in _CACHE:
        return _CACHE[key]
    folder = _written(bundle)
    value = load([Path(folder, e) for e in bundle.entries])
    _CACHE[key] = value
    return value


def _written(bundle: Bundle) -> str:
    key = (bundle.digest, "")
    folder = _CACHE.get(key)
    if folder is None:
        folder = tempfile.mkdtemp(prefix="ksched-sweep-")
        _FOLDERS.append(folder)
        for name, content in zip(bundle.names, bundle.contents(), strict=True):
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        _CACHE[key] = folder
    return str(folder)


def folder_of(bundle: Bundle) -> str | None:
    """Where this process wrote the bundle (to name files as the user named them)."""
    value = _CACHE.get((bundle.digest, ""))
    return str(value) if value is not None else None
