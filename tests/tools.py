"""Where the real components the tests drive are installed, and how a test asks for one.

``.ci/install.d/20-npm.sh`` installs each npm package version into its own prefix,
``$TCOMPACT_TOOLS_DIR/npm/<name>@<version>`` (default ``~/.cache/tcompact-ci``; the ``/`` of a
scoped name written ``+``), so that two versions of one client sit side by side. A test asks for
a binary with :func:`npm_bin`: on a machine without it the test is skipped and says why; when the
variable CI sets for that component is set, it fails instead, so CI cannot pass by skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NPM_REQUIRED = "TCOMPACT_REQUIRE_NPM"


def tools_dir() -> Path:
    """The folder the CI install steps fill and reuse between runs."""
    return Path(os.environ.get("TCOMPACT_TOOLS_DIR") or Path.home() / ".cache" / "tcompact-ci")


def npm_prefix(package: str, version: str) -> Path:
    """The npm prefix one package version is installed into."""
    return tools_dir() / "npm" / f"{package.replace('/', '+')}@{version}"


def missing(reason: str, required_by: str) -> None:
    """Skip with the reason, or fail when the CI variable ``required_by`` says the component must be here."""
    if os.environ.get(required_by):
        pytest.fail(f"{reason}, although {required_by} is set: the install step in .ci/install.d failed",
                    pytrace=False)
    pytest.skip(reason)


def npm_bin(package: str, version: str, binary: str) -> Path:
    """The installed binary ``binary`` of ``package@version`` (skips or fails when it is not installed)."""
    prefix = npm_prefix(package, version)
    path = prefix / "node_modules" / ".bin" / binary
    if not (prefix / ".installed").exists() or not path.exists():
        missing(f"{package}@{version} is not installed in {prefix} (.ci/install.d/20-npm.sh installs it with npm)",
                NPM_REQUIRED)
    return path
