"""Token estimates for image parts.

Transcripts keep images inline as base64 (Claude ``source.data``, chat ``data:`` URLs) or as
remote URLs. When the pixel size can be read from the first bytes of an inline PNG, JPEG, GIF or
WebP image we use OpenAI's tile formula; otherwise a flat estimate (openjiuwen-spec §1.2).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Mapping
from typing import Any

__all__ = ["IMAGE_DEFAULT_TOKENS", "IMAGE_LOW_DETAIL_TOKENS", "image_tokens", "image_size", "tile_tokens"]

IMAGE_DEFAULT_TOKENS = 1445
IMAGE_LOW_DETAIL_TOKENS = 85
_HEADER_B64_CHARS = 131_072  # enough base64 to reach a JPEG frame header behind EXIF data


def tile_tokens(width: int, height: int) -> int:
    """OpenAI high-detail cost: fit in 2048², short side to 768, 85 + 170 per 512-px tile."""
    if width <= 0 or height <= 0:
        return IMAGE_DEFAULT_TOKENS
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def image_tokens(part: Mapping[str, Any]) -> int:
    """Estimated tokens of one image part (chat, Codex or Anthropic shape)."""
    detail, data = _detail_and_data(part)
    if detail == "low":
        return IMAGE_LOW_DETAIL_TOKENS
    size = image_size(data) if data else None
    return tile_tokens(*size) if size else IMAGE_DEFAULT_TOKENS


def _detail_and_data(part: Mapping[str, Any]) -> tuple[str | None, str | None]:
    source = part.get("source")
    if isinstance(source, Mapping):  # Anthropic {"type": "image", "source": {"type": "base64", "data"}}
        data = source.get("data")
        return None, data if isinstance(data, str) else None
    url = part.get("image_url")
    detail = part.get("detail")
    if isinstance(url, Mapping):
        detail = url.get("detail", detail)
        url = url.get("url")
    if isinstance(url, str) and url.startswith("data:") and "," in url[:200]:
        return detail, url.split(",", 1)[1]
    return detail, None


def image_size(b64: str) -> tuple[int, int] | None:
    """(width, height) read from the header of base64 image data, or None."""
    head = b64[:_HEADER_B64_CHARS]
    head = head[: len(head) - len(head) % 4]
    try:
        raw = base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return None
    for reader in (_png, _gif, _webp, _jpeg):
        size = reader(raw)
        if size:
            return size
    return None


def _png(b: bytes) -> tuple[int, int] | None:
    if b[:8] == b"\x89PNG\r\n\x1a\n" and len(b) >= 24:
        return struct.unpack(">II", b[16:24])
    return None


def _gif(b: bytes) -> tuple[int, int] | None:
    if b[:6] in (b"GIF87a", b"GIF89a") and len(b) >= 10:
        return struct.unpack("<HH", b[6:10])
    return None


def _webp(b: bytes) -> tuple[int, int] | None:
    if b[:4] != b"RIFF" or b[8:12] != b"WEBP" or len(b) < 30:
        return None
    chunk = b[12:16]
    if chunk == b"VP8X":
        w = int.from_bytes(b[24:27], "little") + 1
        h = int.from_bytes(b[27:30], "little") + 1
        return w, h
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", b[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(b[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg(b: bytes) -> tuple[int, int] | None:
    if b[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(b):
        if b[i] != 0xFF:
            return None
        marker = b[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", b[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", b[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None
