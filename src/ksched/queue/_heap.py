"""A binary heap whose items are found, updated and removed by key.

# pkg/scheduler/backend/heap/heap.go: Heap (AddOrUpdate, Delete, Get, Peek, Pop)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["KeyedHeap"]

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    """Items ordered by ``less``, at most one per key; update and delete in O(log n).

    With ``sort_key`` instead (``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``)
    each item's sort key is computed once, when it is added, and compared directly.
    """

    __slots__ = ("_ids", "_index", "_items", "_key", "_keys", "_less", "_sort_key")

    def __init__(
        self,
        key: Callable[[T], str],
        less: Callable[[T, T], bool] | None = None,
        *,
        sort_key: Callable[[T], Any] | None = None,
    ) -> None:
        if (less is None) == (sort_key is None):
            raise TypeError("give exactly one of less and sort_key")
        self._key = key
        self._sort_key = sort_key
        self._keys: list[Any] = []
        """Sort keys, parallel to ``_items`` (only with ``sort_key``)."""
        self._less: Callable[[T, T], bool] = less if less is not None else self._compare_sort_keys
        self._items: list[T] = []
        self._ids: list[str] = []
        """Item keys, parallel to ``_items`` (worked out once per item, not per move)."""
        self._index: dict[str, int] = {}

    def _compare_sort_keys(self, a: T, b: T) -> bool:
        assert self._sort_key is not None
        return bool(self._sort_key(a) < self._sort_key(b))

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
        sort_key = self._sort_key
        if i is None:
            self._items.append(item)
            self._ids.append(key)
            i = len(self._items) - 1
            self._index[key] = i
            if sort_key is not None:
                self._keys.append(sort_key(item))
        else:
            self._items[i] = item
            if sort_key is not None:
                self._keys[i] = sort_key(item)
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
        if self._sort_key is not None:
            keys = self._keys
            last_key = keys.pop()
            if i < len(keys):
                keys[i] = last_key
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
        if self._sort_key is not None:
            if not self._up_keyed(i):
                self._down_keyed(i)
        elif not self._up(i):
            self._down(i)

    def _up_keyed(self, i: int) -> bool:
        items, keys, ids, index = self._items, self._keys, self._ids, self._index
        item, item_key, item_id = items[i], keys[i], ids[i]
        moved = False
        while i > 0:
            parent = (i - 1) >> 1
            if not item_key < keys[parent]:
                break
            items[i], keys[i], ids[i] = items[parent], keys[parent], ids[parent]
            index[ids[i]] = i
            i = parent
            moved = True
        if moved:
            items[i], keys[i], ids[i] = item, item_key, item_id
            index[item_id] = i
        return moved

    def _down_keyed(self, i: int) -> None:
        items, keys, ids, index = self._items, self._keys, self._ids, self._index
        n = len(items)
        item, item_key, item_id = items[i], keys[i], ids[i]
        start = i
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            right = child + 1
            if right < n and keys[right] < keys[child]:
                child = right
            if not keys[child] < item_key:
                break
            items[i], keys[i], ids[i] = items[child], keys[child], ids[child]
            index[ids[i]] = i
            i = child
        if i != start:
            items[i], keys[i], ids[i] = item, item_key, item_id
            index[item_id] = i

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
