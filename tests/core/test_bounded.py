from agentkit.core.bounded import BoundedStore


def test_a_full_store_is_emptied_before_the_next_thing_is_kept():
    store: BoundedStore[str, int] = BoundedStore(2)
    store.put("a", 1)
    store.put("b", 2)
    store.put("c", 3)
    assert list(store) == ["c"] and store.get("a") is None and store.get("c") == 3


def test_the_size_bound_empties_the_store_and_a_thing_over_a_sixteenth_is_not_kept():
    store: BoundedStore[str, str] = BoundedStore(100, size=160)
    store.put("big", "x", 11)  # over 160 // 16
    assert "big" not in store and store.used == 0
    for key in "abcdefghijklmnop":  # 16 things of 10: 160 units, full
        store.put(key, key, 10)
    assert len(store) == 16 and store.used == 160
    store.put("q", "q", 1)
    assert list(store) == ["q"] and store.used == 1


def test_an_emptied_copy_has_the_same_bounds_and_nothing_in_it():
    store: BoundedStore[str, int] = BoundedStore(3, size=48)
    store.put("a", 1, 2)
    fresh = store.emptied()
    assert (fresh.count, fresh.size, len(fresh), fresh.used) == (3, 48, 0, 0)
    assert store.get("a") == 1
