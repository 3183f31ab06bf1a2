"""KeyedHeap and SortKeyHeap, as upstream pkg/scheduler/backend/heap/heap_test.go
exercises Heap (SortKeyHeap with distinct sort keys: activeQ's end in a sequence)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from ksched.queue._heap import KeyedHeap, SortKeyHeap

Heap = KeyedHeap[tuple[str, int]] | SortKeyHeap[tuple[str, int]]


def _keyed() -> Heap:
    return KeyedHeap(lambda item: item[0], lambda a, b: a[1] < b[1])


def _sort_keyed() -> SortKeyHeap[tuple[str, int]]:
    # (value, key): distinct even where two values are equal
    return SortKeyHeap(lambda item: item[0], lambda item: (item[1], item[0]))


@pytest.fixture(params=[_keyed, _sort_keyed], ids=["KeyedHeap", "SortKeyHeap"])
def make_heap(request: pytest.FixtureRequest) -> Callable[[], Heap]:
    maker: Callable[[], Heap] = request.param
    return maker


def test_heap_basic(make_heap: Callable[[], Heap]) -> None:
    """TestHeapBasic: items come out in order."""
    h = make_heap()
    values = list(range(1, 101))
    random.Random(7).shuffle(values)
    for v in values:
        h.add_or_update((f"k{v}", v))
    assert len(h) == 100
    assert [h.pop() for _ in range(100)] == [(f"k{v}", v) for v in range(1, 101)]
    assert h.pop() is None and h.peek() is None


def test_heap_add_or_update(make_heap: Callable[[], Heap]) -> None:
    """TestHeap_AddOrUpdate_Update: an update replaces the item and moves it."""
    h = make_heap()
    for key, v in (("foo", 10), ("bar", 1), ("baz", 11)):
        h.add_or_update((key, v))
    h.add_or_update(("foo", 0))
    assert len(h) == 3
    assert h.get("foo") == ("foo", 0)
    assert h.pop() == ("foo", 0)
    h.add_or_update(("baz", -1))
    assert h.peek() == ("baz", -1)


def test_heap_delete(make_heap: Callable[[], Heap]) -> None:
    """TestHeap_Delete: deleting keeps the order; deleting twice is a no-op."""
    h = make_heap()
    for key, v in (("foo", 10), ("bar", 1), ("bal", 31), ("baz", 11)):
        h.add_or_update((key, v))
    assert h.delete("bar") == ("bar", 1)
    assert h.delete("bar") is None
    assert "bar" not in h and "foo" in h
    assert h.pop() == ("foo", 10)
    assert h.delete("bal") == ("bal", 31)
    assert h.values() == [("baz", 11)]


def test_heap_random_operations_keep_order(make_heap: Callable[[], Heap]) -> None:
    rng = random.Random(11)
    h = make_heap()
    model: dict[str, int] = {}
    for step in range(2000):
        key = f"k{rng.randrange(50)}"
        if rng.random() < 0.3 and model:
            victim = rng.choice(sorted(model))
            assert h.delete(victim) == (victim, model.pop(victim))
        else:
            model[key] = rng.randrange(1000)
            h.add_or_update((key, model[key]))
        if step % 100 == 0:
            head = h.peek()
            assert head is not None and head[1] == min(model.values())
    drained = [h.pop() for _ in range(len(model))]
    assert [item[1] for item in drained if item is not None] == sorted(model.values())


def test_sort_key_heap_pops_in_keyed_heap_order_and_drops_stale_entries() -> None:
    """Random adds, re-keys and deletes: both heaps give the same items in the same
    order, and SortKeyHeap's stale entries stay bounded."""
    rng = random.Random(5)
    keyed: Heap = KeyedHeap(lambda item: item[0], lambda a, b: (a[1], a[0]) < (b[1], b[0]))
    lazy = _sort_keyed()
    for step in range(20_000):
        key = f"k{rng.randrange(300)}"
        roll = rng.random()
        if roll < 0.25:
            assert keyed.delete(key) == lazy.delete(key)
        elif roll < 0.35:
            assert keyed.pop() == lazy.pop()
        else:
            item = (key, rng.randrange(100))
            keyed.add_or_update(item)
            lazy.add_or_update(item)
        assert len(keyed) == len(lazy)
        assert keyed.get(key) == lazy.get(key)
        if step % 500 == 0:
            assert keyed.peek() == lazy.peek()
            assert sorted(keyed.values()) == sorted(lazy.values())
            assert len(lazy._entries) <= 2 * len(lazy) + 65
    assert [keyed.pop() for _ in range(len(keyed))] == [lazy.pop() for _ in range(len(lazy))]
    assert lazy.pop() is None and lazy.peek() is None
