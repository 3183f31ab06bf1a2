"""A binary heap whose items are found, updated and removed by key.

# pkg/scheduler/backend/heap/heap.go: Heap (AddOrUpdate, Delete, Get, Peek, Pop)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["KeyedHeap", "SortKeyHeap"]

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    """Items ordered by ``less``, at most one per key; update and delete in O(log n)."""

    __slots__ = ("_ids", "_index", "_items", "_key", "_less")

    def __init__(self, key: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._key = key
        self._less = less
        self._items: list[T] = []
        self._ids: list[str] = []
        """Item keys, parallel to ``_items`` (worked out once per item, not per move)."""
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
            self._ids.append(key)
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
        items, ids = self._items, self._ids
        item = items[i]
        last = items.pop()
        last_id = ids.pop()
        if i < len(items):
            items[i] = last
            ids[i] = last_id
            self._index[last_id] = i
            self._fix(i)
        return item

    def pop(self) -> T | None:
        """Remove and return the least item (None when empty)."""
        if not self._items:
            return None
        return self.delete(self._ids[0])

    def values(self) -> list[T]:
        """The items, in no particular order."""
        return list(self._items)

    def _fix(self, i: int) -> None:
        if not self._up(i):
            self._down(i)

    def _up(self, i: int) -> bool:
        items, less, ids, index = self._items, self._less, self._ids, self._index
        item, item_id = items[i], ids[i]
        moved = False
        while i > 0:
            parent = (i - 1) >> 1
            above = items[parent]
            if not less(item, above):
                break
            items[i], ids[i] = above, ids[parent]
            index[ids[i]] = i
            i = parent
            moved = True
        if moved:
            items[i], ids[i] = item, item_id
            index[item_id] = i
        return moved

    def _down(self, i: int) -> None:
        items, less, ids, index = self._items, self._less, self._ids, self._index
        n = len(items)
        item, item_id = items[i], ids[i]
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
            items[i], ids[i] = below, ids[child]
            index[ids[i]] = i
            i = child
        if i != start:
            items[i], ids[i] = item, item_id
            index[item_id] = i


class SortKeyHeap(Generic[T]):
    """Items ordered by a sort key worked out once per add, at most one per key.

    The heap is the standard library's (entries ``(sort key, key)``); a deleted or
    re-keyed item's entry stays until it surfaces and is dropped then, and the heap is
    rebuilt when stale entries outnumber the items. Sort keys must be distinct (activeQ's
    end in a sequence number), so items come out in the same order as from KeyedHeap.
    """

    __slots__ = ("_entries", "_key", "_live", "_sort_key")

    def __init__(self, key: Callable[[T], str], sort_key: Callable[[T], Any]) -> None:
        self._key = key
        self._sort_key = sort_key
        self._entries: list[tuple[Any, str]] = []
        self._live: dict[str, tuple[Any, T]] = {}
        """key -> (its current sort key, the item)."""

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: str) -> bool:
        return key in self._live

    def get(self, key: str) -> T | None:
        found = self._live.get(key)
        return None if found is None else found[1]

    def peek(self) -> T | None:
        entries, live = self._entries, self._live
        while entries:
            sort_key, key = entries[0]
            found = live.get(key)
            if found is not None and found[0] == sort_key:
                return found[1]
            heapq.heappop(entries)
        return None

    def add_or_update(self, item: T) -> None:
        """Insert ``item``, or replace the item with its key (re-ordered by its sort key)."""
        key = self._key(item)
        sort_key = self._sort_key(item)
        previous = self._live.get(key)
        self._live[key] = (sort_key, item)
        if previous is None or previous[0] != sort_key:
            heapq.heappush(self._entries, (sort_key, key))
            self._compact_if_stale()

    def delete(self, key: str) -> T | None:
        """Remove and return the item with ``key`` (None when absent)."""
        found = self._live.pop(key, None)
        if found is None:
            return None
        self._compact_if_stale()
        return found[1]

    def pop(self) -> T | None:
        """Remove and return the least item (None when empty)."""
        entries, live = self._entries, self._live
        while entries:
            sort_key, key = heapq.heappop(entries)
            found = live.get(key)
            if found is not None and found[0] == sort_key:
                del live[key]
                return found[1]
        return None

    def values(self) -> list[T]:
        """The items, in no particular order."""
        return [item for _, item in self._live.values()]

    def _compact_if_stale(self) -> None:
        if len(self._entries) > 2 * len(self._live) + 64:
            self._entries = [(sort_key, key) for key, (sort_key, _) in self._live.items()]
            heapq.heapify(self._entries)
