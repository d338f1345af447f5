"""Benchmark: the token cache's own table against sqlite3 (the standard library's) for the same work.

The work a run gives its cache: look up the keys of every distinct text of a file (100 for a
small session, 20,000 for a 40 MB one) in a store already holding 200,000 counts, and add the
counts of the texts it had to tokenise (20,000 for a new 40 MB file). sqlite3 is set up as a
cache would be: WAL journal, ``synchronous=normal``, an ``INTEGER PRIMARY KEY`` table (the fastest
key it has; 16-byte BLOB keys were slower still), lookups by ``IN (...)`` in batches of 5,000 and
inserts in one transaction. Each figure is the median CPU time of ``--repeat`` rounds in this
process, from opening the store to closing it.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_token_cache.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

from _common import OUT_DIR, machine

from tcompact.counting.cache import TokenCache, text_keys

WORK = OUT_DIR / "token_cache"
STORED = 200_000


def keys(n: int, start: int = 0) -> list[bytes]:
    return text_keys(b"bench", [f"text {i}" for i in range(start, start + n)])


class Sqlite:
    def __init__(self, path: Path) -> None:
        self.con = sqlite3.connect(path, timeout=10, isolation_level=None)
        self.con.execute("pragma journal_mode=wal")
        self.con.execute("pragma synchronous=normal")
        self.con.execute("create table if not exists c (k integer primary key, n integer not null, u integer)")

    @staticmethod
    def _int(key: bytes) -> int:
        return int.from_bytes(key[:8], "little", signed=True)

    def lookup(self, ks: list[bytes]) -> list[int | None]:
        ints = [self._int(k) for k in ks]
        found: dict[int, int] = {}
        for s in range(0, len(ints), 5000):
            chunk = ints[s:s + 5000]
            found.update(self.con.execute(f"select k, n from c where k in ({','.join('?' * len(chunk))})", chunk))
        return [found.get(i) for i in ints]

    def store(self, items: list[tuple[bytes, int]]) -> None:
        self.con.execute("begin immediate")
        self.con.executemany("insert or replace into c values (?, ?, ?)", ((self._int(k), n, 0) for k, n in items))
        self.con.execute("commit")

    def close(self) -> None:
        self.con.close()


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        runs.append(time.process_time() - t)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    stored = keys(STORED)
    items = [(k, i % 5000) for i, k in enumerate(stored)]
    table = TokenCache(WORK / "table")
    table.store(items)
    db = Sqlite(WORK / "tokens.sqlite")
    db.store(items)
    db.close()
    fresh = keys(20_000, start=STORED)
    print(f"{machine()}; {STORED:,} counts stored; median CPU seconds of {args.repeat}")

    def table_lookup(n: int):
        def run():
            t = TokenCache(WORK / "table")
            assert sum(x is not None for x in t.lookup(stored[:n])) >= 0.95 * n  # a few lost to full buckets
            t.close()
        return run

    def sqlite_lookup(n: int):
        def run():
            d = Sqlite(WORK / "tokens.sqlite")
            assert all(x is not None for x in d.lookup(stored[:n]))
            d.close()
        return run

    def table_store():
        t = TokenCache(WORK / "table")
        t.store([(k, 1) for k in fresh])
        t.close()

    def sqlite_store():
        d = Sqlite(WORK / "tokens.sqlite")
        d.store([(k, 1) for k in fresh])
        d.close()

    rows = [("open + look up 100 keys", timed(table_lookup(100), args.repeat), timed(sqlite_lookup(100), args.repeat)),
            ("open + look up 20,000 keys", timed(table_lookup(20_000), args.repeat),
             timed(sqlite_lookup(20_000), args.repeat)),
            ("open + add 20,000 counts", timed(table_store, args.repeat), timed(sqlite_store, args.repeat))]
    print(f"{'work':<28} {'own table':>10} {'sqlite3':>10} {'sqlite/own':>10}")
    for name, own, lite in rows:
        print(f"{name:<28} {own:10.4f} {lite:10.4f} {lite / own:10.1f}x")
    print(f"files: own table {(WORK / 'table' / 'tokens-v1.bin').stat().st_size / 2**20:.0f} MiB (fixed), "
          f"sqlite {(WORK / 'tokens.sqlite').stat().st_size / 2**20:.1f} MiB (grows without a bound of its own)")
    shutil.rmtree(WORK, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
