"""The address of an OpenAI-compatible endpoint: its host, whether it is api.openai.com, and the URL as it
may be shown (without the user info that may hold a password). Pure: no connection is made here."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["hostname", "is_official", "host_of", "safe_url"]


def hostname(url: str) -> str | None:
    """The host of an http(s) URL with a valid port, else None."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


def is_official(hostname: str) -> bool:
    """Whether the host is OpenAI's own (which says no window, and takes ``max_completion_tokens``)."""
    return hostname == "openai.com" or hostname.endswith(".openai.com")


def host_of(url: str) -> str:
    """``host[:port]`` of a URL, without user info."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def safe_url(url: str) -> str:
    """The URL without user info (which may hold a password)."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    return f"{scheme}{sep}{netloc.rsplit('@', 1)[-1]}{slash}{path}" if sep else url.rsplit("@", 1)[-1]
