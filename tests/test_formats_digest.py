"""formats/_digest.py: the digests that vouch a file, or the part read before, is unchanged."""

from __future__ import annotations

import hashlib
import io

from tcompact.formats._digest import Digesting, digest_with_mark, file_digest


def test_a_files_digest_is_its_sha256_and_none_when_it_cannot_be_read(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    assert file_digest(path) == hashlib.sha256(b'{"a": 1}\n').digest()
    assert file_digest(tmp_path / "missing.jsonl") is None


def test_a_file_read_through_feeds_each_byte_once_however_it_is_read():
    data = b"line one\nline two\nline three\n"
    digest = hashlib.sha256()
    fh = Digesting(io.BytesIO(data), digest)
    assert fh.read(4) == b"line"
    fh.seek(0)  # read again from the start: the bytes already fed are not fed twice
    assert fh.readline() == b"line one\n"
    assert fh.read() == b"line two\nline three\n"
    assert digest.digest() == hashlib.sha256(data).digest()


def test_one_pass_gives_the_whole_digest_the_marks_and_the_bytes_after_a_kept_prefix(tmp_path):
    path = tmp_path / "s.jsonl"
    old, new = b'{"n": 1}\n{"n": 2}\n', b'{"n": 3}\n'
    path.write_bytes(old + new)
    mark = hashlib.sha256(old).digest()
    whole, at_mark, tail = digest_with_mark(path, len(old), mark, keep_from=9)
    assert (whole, at_mark, tail) == (hashlib.sha256(old + new).digest(), mark, b'{"n": 2}\n{"n": 3}\n')
    changed = digest_with_mark(path, len(old), b"other", keep_from=9)
    assert changed == (whole, mark, None)  # the prefix is not the one kept: no bytes handed over
    assert digest_with_mark(path, 10_000, mark) == (whole, None, None)  # the file is shorter than the mark
    assert digest_with_mark(path, None, None) == (whole, None, None)
    assert digest_with_mark(tmp_path / "missing.jsonl", 3, mark) is None
