"""KeyedHeap, as upstream pkg/scheduler/backend/heap/heap_test.go exercises Heap."""

from __future__ import annotations

import random

from ksched.queue._heap import KeyedHeap


def _heap() -> KeyedHeap[tuple[str, int]]:
    return KeyedHeap(lambda item: item[0], lambda a, b: a[1] < b[1])


def test_heap_basic() -> None:
    """TestHeapBasic: items come out in order."""
    h = _heap()
    values = list(range(1, 101))
    random.Random(7).shuffle(values)
    for v in values:
        h.add_or_update((f"k{v}", v))
    assert len(h) == 100
    assert [h.pop() for _ in range(100)] == [(f"k{v}", v) for v in range(1, 101)]
    assert h.pop() is None and h.peek() is None


def test_heap_add_or_update() -> None:
    """TestHeap_AddOrUpdate_Update: an update replaces the item and moves it."""
    h = _heap()
    for key, v in (("foo", 10), ("bar", 1), ("baz", 11)):
        h.add_or_update((key, v))
    h.add_or_update(("foo", 0))
    assert len(h) == 3
    assert h.get("foo") == ("foo", 0)
    assert h.pop() == ("foo", 0)
    h.add_or_update(("baz", -1))
    assert h.peek() == ("baz", -1)


def test_heap_delete() -> None:
    """TestHeap_Delete: deleting keeps the order; deleting twice is a no-op."""
    h = _heap()
    for key, v in (("foo", 10), ("bar", 1), ("bal", 31), ("baz", 11)):
        h.add_or_update((key, v))
    assert h.delete("bar") == ("bar", 1)
    assert h.delete("bar") is None
    assert "bar" not in h and "foo" in h
    assert h.pop() == ("foo", 10)
    assert h.delete("bal") == ("bal", 31)
    assert h.values() == [("baz", 11)]


def test_heap_random_operations_keep_order() -> None:
    rng = random.Random(11)
    h = _heap()
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
