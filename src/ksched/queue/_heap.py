"""A binary heap whose items are found, updated and removed by key.

# pkg/scheduler/backend/heap/heap.go: Heap (AddOrUpdate, Delete, Get, Peek, Pop)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["KeyedHeap"]

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    """Items ordered by ``less``, at most one per key; update and delete in O(log n)."""

    __slots__ = ("_index", "_items", "_key", "_less")

    def __init__(self, key: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._key = key
        self._less = less
        self._items: list[T] = []
        self._index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def get(self, key: str) -> T | None:
        i = self._index.get(key)
        return None if i is None else self._items[i]

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def add_or_update(self, item: T) -> None:
        """Insert ``item``, or replace the item with its key and restore the order."""
        key = self._key(item)
        i = self._index.get(key)
        if i is None:
            self._items.append(item)
            i = len(self._items) - 1
            self._index[key] = i
        else:
            self._items[i] = item
        self._fix(i)

    def delete(self, key: str) -> T | None:
        """Remove and return the item with ``key`` (None when absent)."""
        i = self._index.pop(key, None)
        if i is None:
            return None
        items = self._items
        item = items[i]
        last = items.pop()
        if i < len(items):
            items[i] = last
            self._index[self._key(last)] = i
            self._fix(i)
        return item

    def pop(self) -> T | None:
        """Remove and return the least item (None when empty)."""
        if not self._items:
            return None
        return self.delete(self._key(self._items[0]))

    def values(self) -> list[T]:
        """The items, in no particular order."""
        return list(self._items)

    def _fix(self, i: int) -> None:
        if not self._up(i):
            self._down(i)

    def _up(self, i: int) -> bool:
        items, less, index, key = self._items, self._less, self._index, self._key
        item = items[i]
        moved = False
        while i > 0:
            parent = (i - 1) >> 1
            above = items[parent]
            if not less(item, above):
                break
            items[i] = above
            index[key(above)] = i
            i = parent
            moved = True
        if moved:
            items[i] = item
            index[key(item)] = i
        return moved

    def _down(self, i: int) -> None:
        items, less, index, key = self._items, self._less, self._index, self._key
        n = len(items)
        item = items[i]
        start = i
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            right = child + 1
            if right < n and less(items[right], items[child]):
                child = right
            below = items[child]
            if not less(below, item):
                break
            items[i] = below
            index[key(below)] = i
            i = child
        if i != start:
            items[i] = item
            index[key(item)] = i
