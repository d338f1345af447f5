"""Image estimates (images.py): OpenAI's tile formula, the pixel size read from the first bytes of inline PNG, GIF,
WebP and JPEG data (built here byte by byte after each format's specification), the three part shapes, and the
flat estimates when the size cannot be known."""

from __future__ import annotations

import base64
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.counting.images import IMAGE_DEFAULT_TOKENS, IMAGE_LOW_DETAIL_TOKENS, image_size, image_tokens, tile_tokens


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">II", width, height) + b"\x08\x06\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\x00" * 16


def gif(width: int, height: int, version: bytes = b"GIF89a") -> bytes:
    return version + struct.pack("<HH", width, height) + b"\xf7\x00\x00" + b"\x00" * 8


def _riff(chunk: bytes, body: bytes) -> bytes:
    body = body.ljust(18, b"\x00")
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(body)) + b"WEBP" + chunk + struct.pack("<I", len(body)) + body


def webp_vp8x(width: int, height: int) -> bytes:
    return _riff(b"VP8X", b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little"))


def webp_vp8(width: int, height: int) -> bytes:  # lossy: frame tag, start code, 14-bit sizes with a 2-bit scale
    return _riff(b"VP8 ", b"\x30\x01\x00\x9d\x01\x2a" + struct.pack("<HH", width | 0x4000, height | 0x8000))


def webp_vp8l(width: int, height: int) -> bytes:  # lossless: signature 0x2f, then 14 + 14 bits of size - 1
    bits = (width - 1) | ((height - 1) << 14)
    return _riff(b"VP8L", b"\x2f" + bits.to_bytes(4, "little"))


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg(width: int, height: int, *, sof: int = 0xC0, before: bytes = b"") -> bytes:
    jfif = _segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    frame = _segment(sof, b"\x08" + struct.pack(">HH", height, width) + b"\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01")
    return b"\xff\xd8" + jfif + before + frame + _segment(0xDA, b"\x00" * 10) + b"\x00" * 16


# ---- the tile formula --------------------------------------------------------------------------------


@pytest.mark.parametrize(("width", "height", "tokens"), [
    (1024, 1024, 765),  # OpenAI's worked examples: 768 × 768, 4 tiles
    (2048, 4096, 1105),  # 1024 × 2048, then 768 × 1536: 6 tiles
    (4096, 8192, 1105),
    (512, 512, 255),  # small images are not scaled up
    (100, 100, 255),
    (513, 100, 425),
    (768, 768, 765),
    (1, 10_000, 765),  # a sliver: fitted to 2048 tall, 4 tiles of one column
    (4000, 3000, 765),  # a photo: 2048 × 1536, then 1024 × 768
])
def test_tile_tokens(width, height, tokens):
    assert tile_tokens(width, height) == tokens == tile_tokens(height, width)


@pytest.mark.parametrize(("width", "height"), [(0, 100), (100, 0), (-5, 10), (0, 0)])
def test_a_size_that_is_no_size_gets_the_flat_estimate(width, height):
    assert tile_tokens(width, height) == IMAGE_DEFAULT_TOKENS == 1445


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(1, 20_000), st.integers(1, 20_000))
def test_tiles_are_at_most_those_of_a_2048_by_768_image(width, height):
    # fitted in 2048 × 2048 and 768 on the short side, an image has at most 4 × 2 tiles
    tokens = tile_tokens(width, height)
    assert 255 <= tokens <= 85 + 170 * 8 and (tokens - 85) % 170 == 0


# ---- sizes from the first bytes --------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "size"), [
    (png(1920, 1080), (1920, 1080)),
    (gif(320, 200), (320, 200)),
    (gif(16, 9, b"GIF87a"), (16, 9)),
    (webp_vp8x(4000, 3000), (4000, 3000)),
    (webp_vp8(640, 480), (640, 480)),
    (webp_vp8l(16_384, 1), (16_384, 1)),
    (jpeg(800, 600), (800, 600)),
    (jpeg(3024, 4032, sof=0xC2), (3024, 4032)),  # progressive
    # behind EXIF data (an APP1 segment of 60 KB) and a Huffman table (DHT, 0xC4, no frame header)
    (jpeg(1200, 900, before=_segment(0xE1, b"Exif\x00\x00" + b"\x00" * 60_000) + _segment(0xC4, b"\x00" * 20)),
     (1200, 900)),
])
def test_image_size_from_the_header(data, size):
    assert image_size(b64(data)) == size


@pytest.mark.parametrize("data", [
    b"",
    b"plain text, not an image at all",
    png(10, 10)[:20],  # cut inside the header
    gif(10, 10)[:8],
    webp_vp8x(10, 10)[:24],
    _riff(b"ALPH", b""),  # a WebP chunk that holds no size
    b"\xff\xd8" + b"\x00" * 40,  # a JPEG whose first segment does not start with 0xFF
    b"\xff\xd8" + _segment(0xE0, b"\x00" * 14),  # a JPEG cut before its frame header
])
def test_image_size_is_none_when_the_header_says_nothing(data):
    assert image_size(b64(data)) is None


@pytest.mark.parametrize("text", ["A===", "ab=c", "é" * 8, "!!!!not base64!!!!"])
def test_image_size_of_bad_base64_is_none(text):
    assert image_size(text) is None


def test_only_the_head_of_long_data_is_decoded():
    # the size is found in the first bytes however long the data is; a body that is no base64 does not matter
    assert image_size(b64(png(64, 32)) + "%" * 500_000) == (64, 32)


@settings(max_examples=100, deadline=None, database=None)
@given(st.integers(1, 2**31 - 1), st.integers(1, 2**31 - 1), st.integers(1, 65_535), st.integers(1, 65_535),
       st.integers(1, 2**24), st.integers(1, 2**24))
def test_every_representable_size_reads_back(pw, ph, gw, gh, ww, wh):
    assert image_size(b64(png(pw, ph))) == (pw, ph)
    assert image_size(b64(gif(gw, gh))) == (gw, gh)
    assert image_size(b64(jpeg(gw, gh))) == (gw, gh)
    assert image_size(b64(webp_vp8x(ww, wh))) == (ww, wh)


# ---- part shapes --------------------------------------------------------------------------------------


PNG_URL = f"data:image/png;base64,{b64(png(1024, 1024))}"


@pytest.mark.parametrize(("part", "tokens"), [
    ({"type": "image_url", "image_url": {"url": PNG_URL}}, 765),
    ({"type": "image_url", "image_url": {"url": PNG_URL, "detail": "high"}}, 765),
    ({"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}}, IMAGE_LOW_DETAIL_TOKENS),
    ({"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}, IMAGE_DEFAULT_TOKENS),
    ({"type": "image_url", "image_url": {"url": "https://example.invalid/a.png", "detail": "low"}}, 85),
    ({"type": "input_image", "image_url": PNG_URL}, 765),  # Codex
    ({"type": "input_image", "image_url": PNG_URL, "detail": "low"}, 85),
    ({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(png(512, 512))}}, 255),
    ({"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}, IMAGE_DEFAULT_TOKENS),
    ({"type": "image", "source": {"type": "base64", "data": None}}, IMAGE_DEFAULT_TOKENS),
    # a data URL whose comma is not near its start, and one that holds no image
    ({"type": "image_url", "image_url": {"url": "data:" + "x" * 300 + "," + b64(png(9, 9))}}, IMAGE_DEFAULT_TOKENS),
    ({"type": "image_url", "image_url": {"url": "data:text/plain;base64," + b64(b"hello there")}}, IMAGE_DEFAULT_TOKENS),
    ({"type": "image_url"}, IMAGE_DEFAULT_TOKENS),
    ({"type": "image_url", "image_url": 42}, IMAGE_DEFAULT_TOKENS),
])
def test_image_tokens_of_each_part_shape(part, tokens):
    assert image_tokens(part) == tokens


def test_the_flat_estimates():
    assert (IMAGE_DEFAULT_TOKENS, IMAGE_LOW_DETAIL_TOKENS) == (1445, 85)
