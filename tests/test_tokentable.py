"""The token cache's table (tokentable.py): a fixed-size file of counts with least-recently-used eviction, damaged
files and slots turned into misses, the writers' lock, a file another process replaced, and several processes at
once. (Where the cache lives and when it is used: test_tokencache.py.)"""

from __future__ import annotations

import fcntl
import multiprocessing
import os

import pytest

from tcompact.counting import table as tokentable
from tcompact.counting.cache import LOCK, TABLE, WAYS, TokenCache, text_keys

HEADER, SLOT = 4096, 32


def _keys(n, prefix="k"):
    return text_keys(b"test", [f"{prefix}{i}" for i in range(n)])


def _full_bucket(folder, extra):
    """A table of one bucket (every key shares it) filled with keys 0..WAYS-1, key i stored at hour i with count i;
    the keys, with ``extra`` more not stored; the clock's hour, to be set by the test."""
    hour = [0]
    cache = TokenCache(folder, buckets=1, clock=lambda: hour[0] * 3600)
    keys = _keys(WAYS + extra)
    for i, key in enumerate(keys[:WAYS]):
        hour[0] = i
        assert cache.store([(key, i)]) == 1
    return cache, keys, hour


def test_a_full_bucket_gives_up_its_least_recently_used_count(tmp_path):
    cache, keys, hour = _full_bucket(tmp_path, 3)
    hour[0] = 100
    assert cache.lookup([keys[0], keys[1]]) == [0, 1]  # used again: now the most recent
    hour[0] = 101
    assert cache.store([(k, 50 + j) for j, k in enumerate(keys[WAYS:])]) == 3
    assert cache.lookup(keys) == [0, 1, None, None, None, 5, 6, 7, 50, 51, 52]
    assert os.path.getsize(tmp_path / TABLE) == 4096 + WAYS * 32  # the size never grows


def test_a_damaged_table_is_replaced_silently(tmp_path):
    keys = _keys(40)
    TokenCache(tmp_path, buckets=4).store([(k, i) for i, k in enumerate(keys)])
    table = tmp_path / TABLE
    data = bytearray(table.read_bytes())
    data[:8] = b"garbage!"
    table.write_bytes(bytes(data))
    again = TokenCache(tmp_path, buckets=4)
    assert again.lookup(keys[:3]) == [None, None, None] and again.rebuilt == 1
    assert again.store([(keys[0], 7)]) == 1 and again.lookup(keys[:1]) == [7]
    table.write_bytes(table.read_bytes()[:1000])  # cut short
    third = TokenCache(tmp_path, buckets=4)
    assert third.lookup(keys[:1]) == [None] and third.rebuilt == 1 and table.stat().st_size == 4096 + 4 * WAYS * 32


def test_a_damaged_slot_is_a_miss_and_the_others_still_answer(tmp_path):
    keys = _keys(2)
    cache = TokenCache(tmp_path, buckets=1)
    cache.store([(keys[0], 11), (keys[1], 22)])
    table = tmp_path / TABLE
    data = bytearray(table.read_bytes())
    at = data.find(keys[0])
    data[at + 16] ^= 0xFF  # its count, as a torn write or a bad sector would leave it
    table.write_bytes(bytes(data))
    assert TokenCache(tmp_path, buckets=1).lookup(keys) == [None, 22]


def _worker(args):
    folder, seed, rounds = args
    import random

    rng = random.Random(seed)
    cache = TokenCache(folder, buckets=8)
    wrong = 0
    for _ in range(rounds):
        ids = rng.sample(range(400), 60)
        keys = text_keys(b"test", [f"k{i}" for i in ids])
        cache.store([(k, i * 7) for k, i in zip(keys, ids)])
        found = cache.lookup(keys)
        wrong += sum(1 for n, i in zip(found, ids) if n is not None and n != i * 7)
    return wrong, cache.added


def _open_damaged(folder):
    cache = TokenCache(folder, buckets=8)
    found = cache.lookup(text_keys(b"test", ["k1"]))
    return found, cache.rebuilt, cache.store([(text_keys(b"test", ["k2"])[0], 2)])


def test_processes_that_find_the_table_damaged_at_once_make_one_sound_table(tmp_path):
    TokenCache(tmp_path, buckets=8).store([(text_keys(b"test", ["k1"])[0], 1)])
    (tmp_path / TABLE).write_bytes(b"damaged" * 100)
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        results = pool.map(_open_damaged, [tmp_path] * 3)
    assert [found for found, _, _ in results] == [[None]] * 3
    assert sum(rebuilt for _, rebuilt, _ in results) == 1  # the first to get the lock repairs; the others find it sound
    assert sum(written for _, _, written in results) == 1  # one of them stores the count, the others find it there
    final = TokenCache(tmp_path, buckets=8)
    assert final.lookup(text_keys(b"test", ["k1", "k2"])) == [None, 2] and final.rebuilt == 0


def test_several_processes_share_one_table(tmp_path):
    """Four writers and readers at once on a table too small for them (eviction all the time): every
    count read back is the right one, and the table is sound afterwards."""
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map(_worker, [(tmp_path, seed, 40) for seed in range(4)])
    assert [wrong for wrong, _ in results] == [0, 0, 0, 0]
    assert all(added > 0 for _, added in results)
    keys = text_keys(b"test", [f"k{i}" for i in range(400)])
    final = TokenCache(tmp_path, buckets=8)
    found = final.lookup(keys)
    assert final.rebuilt == 0 and sum(n is not None for n in found) == 8 * WAYS
    assert all(n == i * 7 for i, n in enumerate(found) if n is not None)


@pytest.mark.parametrize("buckets", [0, -4, 3, 6, 1000])
def test_the_bucket_count_must_be_a_power_of_two(tmp_path, buckets):
    with pytest.raises(ValueError, match="^buckets must be a power of two$"):
        TokenCache(tmp_path, buckets=buckets)


def test_the_table_is_made_on_first_use_at_its_fixed_size(tmp_path):
    cache = TokenCache(tmp_path / "new" / "folder", buckets=16)
    assert not (tmp_path / "new").exists()  # nothing is made before it is used
    assert cache.ready() and cache.rebuilt == 0
    assert os.path.getsize(cache.path) == HEADER + 16 * WAYS * SLOT == tokentable._HEADER_SIZE + 16 * 256
    assert TokenCache(tmp_path, buckets=1 << 16)._size() == 16 * 1024 * 1024 + HEADER  # the default: 16 MiB


def test_counts_are_stored_once_and_only_when_they_fit_in_32_bits(tmp_path):
    cache = TokenCache(tmp_path, buckets=4)
    keys = _keys(5)
    assert cache.store([(keys[0], 0), (keys[1], 2**32 - 1), (keys[2], -1), (keys[3], 2**32)]) == 2
    assert cache.lookup(keys) == [0, 2**32 - 1, None, None, None]
    assert cache.store([(keys[0], 0), (keys[4], 9)]) == 1  # a key already held is not written again
    assert cache.store([]) == 0 and cache.lookup([]) == []
    assert (cache.looked_up, cache.found, cache.added) == (5, 2, 3)


@pytest.mark.parametrize(("used_again_at", "evicted"), [(10, 0), (30, 1)])
def test_a_hit_refreshes_its_slot_at_most_once_a_day(tmp_path, used_again_at, evicted):
    cache, keys, hour = _full_bucket(tmp_path, 1)
    hour[0] = used_again_at  # key 0, last used at hour 0, is read again: refreshed only when a day old
    assert cache.lookup(keys[:1]) == [0]
    hour[0] = used_again_at + 1
    cache.store([(keys[WAYS], 99)])
    found = cache.lookup(keys)
    assert [i for i, n in enumerate(found) if n is None] == [evicted]


@pytest.mark.parametrize("damage", ["header magic", "header crc", "other bucket count"])
def test_a_table_of_another_shape_or_a_broken_header_is_rebuilt(tmp_path, damage):
    keys = _keys(3)
    TokenCache(tmp_path, buckets=4).store([(k, 5) for k in keys])
    table = tmp_path / TABLE
    data = bytearray(table.read_bytes())
    buckets = 4
    if damage == "header magic":
        data[0] ^= 0xFF
    elif damage == "header crc":
        data[24] ^= 0x01  # the creation time, covered by the header's CRC-32
    else:
        buckets = 8  # a table made for 4 buckets, opened for 8: wrong size
    table.write_bytes(bytes(data))
    again = TokenCache(tmp_path, buckets=buckets)
    assert again.lookup(keys) == [None] * 3 and again.rebuilt == 1
    assert os.path.getsize(table) == HEADER + buckets * WAYS * SLOT


def test_a_table_another_process_replaced_is_followed(tmp_path):
    keys = _keys(3)
    first = TokenCache(tmp_path, buckets=4)
    first.store([(keys[0], 1)])
    (tmp_path / TABLE).unlink()  # as a second process rebuilding a damaged table does
    second = TokenCache(tmp_path, buckets=4)
    second.store([(keys[1], 2)])
    assert first.store([(keys[2], 3)]) == 1  # written into the table now at the path, not the unlinked one
    assert TokenCache(tmp_path, buckets=4).lookup(keys) == [None, 2, 3]


def test_a_writer_that_cannot_get_the_lock_stores_nothing_and_readers_go_on(tmp_path, monkeypatch):
    monkeypatch.setattr(tokentable, "_LOCK_WAIT", 0.05)
    keys = _keys(2)
    cache = TokenCache(tmp_path, buckets=4)
    cache.store([(keys[0], 1)])
    holder = os.open(tmp_path / LOCK, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another writer holds it
        assert cache.store([(keys[1], 2)]) == 0
        assert cache.lookup(keys) == [1, None] and cache.usable
    finally:
        os.close(holder)
    assert cache.store([(keys[1], 2)]) == 1 and cache.lookup(keys) == [1, 2]


def test_a_folder_that_cannot_be_made_turns_the_cache_off(tmp_path):
    (tmp_path / "file").write_text("x")
    cache = TokenCache(tmp_path / "file" / "cache")
    assert not cache.ready() and not cache.usable
    assert cache.lookup(_keys(2)) == [None, None] and cache.store([(_keys(1)[0], 1)]) == 0


def test_a_closed_table_is_opened_again_on_the_next_use(tmp_path):
    keys = _keys(1)
    cache = TokenCache(tmp_path, buckets=2)
    cache.store([(keys[0], 4)])
    cache.close()
    cache.close()  # closing twice is harmless
    assert cache.lookup(keys) == [4]


def test_a_broken_slot_is_taken_before_any_count_is_evicted(tmp_path):
    cache, keys, hour = _full_bucket(tmp_path, 1)
    table = tmp_path / TABLE
    data = bytearray(table.read_bytes())
    data[data.find(keys[5]) + 16] ^= 0xFF  # slot of key 5 torn
    table.write_bytes(bytes(data))
    hour[0] = 50
    assert cache.store([(keys[WAYS], 88)]) == 1
    assert cache.lookup(keys) == [0, 1, 2, 3, 4, None, 6, 7, 88]  # key 0, the least recently used, is still there
    assert cache.store([(keys[5], 5)]) == 1 and cache.lookup(keys[5:6]) == [5]  # its lost count can be stored again
