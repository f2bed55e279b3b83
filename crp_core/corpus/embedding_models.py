"""Which embedding model a configuration names (``embedding_model``, docs/reference/ckf.md "Embedding models"),
and its process-wide embedder (:func:`configured_embedder`).

A name is resolved, without any download, to a local sentence-transformers model folder:

1. empty: the bundled all-MiniLM-L6-v2 (resolved by :mod:`crp_core.corpus.embedding`, not here);
2. a path (it holds a path separator, starts with ``.`` or ``~``, or names an existing folder): that
   folder, relative to the working directory;
3. else the name of an installed package: an entry point of the group :data:`ENTRY_POINT_GROUP` of that
   name (its object is the folder, or a function giving it); else the distribution of that name (or the
   importable package of that name, ``-`` read as ``_``), searched for the one model folder it ships.

A model folder is a transformer (``config.json`` and a weights file) with, optionally,
sentence-transformers' ``modules.json`` naming its modules. Its id (stamped on every vector it makes)
is ``<label>@<digest>``: the package's or folder's name and the first 12 hex digits of a sha256 over
its weights, its transformer config and its module configs, so two folders holding one model share
an id and a changed model never passes for the old one.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crp_core.corpus import embedding
from crp_core.corpus.embedding import (
    BACKEND_ENV,
    INT8_MODEL_ID,
    INT8_V1_MODEL_ID,
    MINILM_IDS,
    MiniLMEmbedder,
    default_backend,
    default_embedder,
    embedder_for,
    minilm_model_path,
)
from crp_core.errors import ConfigError, EmbeddingModelMismatch
from crp_core.support.digest import content_digest, file_digest
from crp_core.support.memo import LRU

if TYPE_CHECKING:
    from crp_core.corpus.onnx_backend import OnnxEncoder

#: the entry-point group a package names its model folder under (``name = "pkg:MODEL_DIR"`` or a function)
ENTRY_POINT_GROUP = "crp_inspect.embedding_models"
#: hex digits of the model digest in a model id
ID_DIGEST_CHARS = 12
#: sentence-transformers' module classes read here, by class name (the module path of a type changed across
#: sentence-transformers versions: ``sentence_transformers.models.Pooling``,
#: ``sentence_transformers.sentence_transformer.modules.pooling.Pooling``, ...)
_TRANSFORMER, _POOLING, _NORMALIZE, _DENSE = "Transformer", "Pooling", "Normalize", "Dense"
#: the pooling flags of sentence-transformers' older Pooling config, each naming one mode of the newer
#: ``pooling_mode`` key (one word-dimension block of the output per mode)
_POOL_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
#: the model folders a package may ship, searched this deep below the package's root
_SEARCH_DEPTH = 4


@dataclass(frozen=True)
class ModelSpec:
    """One resolved embedding model folder."""

    #: the configured name
    name: str
    #: the model folder (sentence-transformers' root: ``modules.json``, or a plain transformer folder)
    path: str
    #: the id stamped on its vectors: ``<label>@<digest>``
    model_id: str
    #: where it came from: ``folder``, or ``package <distribution>``
    source: str
    #: the ONNX encoder's pooling (``mean`` / ``cls``); empty when only torch reproduces the model
    pooling: str
    #: the vector dimension read from the folder; None when only loading the model tells it
    dim: int | None
    #: why the ONNX backend cannot run this model (None: it can); such a model runs on torch
    onnx_blocker: str | None
    #: sha256 (hex) over the weights and the module configs
    digest: str


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"embedding model folder {path.parent}: cannot read {path.name} ({exc})") from None


def _modules(root: Path) -> list[dict[str, str]]:
    """sentence-transformers' module list (``modules.json``); a plain transformer folder is read as
    Transformer + mean Pooling, as sentence-transformers reads it."""
    if not (root / "modules.json").is_file():
        return [
            {"type": _TRANSFORMER, "kind": _TRANSFORMER, "path": ""},
            {"type": _POOLING, "kind": _POOLING, "path": ""},
        ]
    got = _read_json(root / "modules.json")
    if not isinstance(got, list) or not all(isinstance(m, dict) for m in got):
        raise ConfigError(f"embedding model folder {root}: modules.json is not a list of modules")
    return [
        {"type": str(m.get("type", "")), "kind": _kind(str(m.get("type", ""))), "path": str(m.get("path", ""))}
        for m in got
    ]


def _kind(module_type: str) -> str:
    """The class name of a sentence-transformers module type (empty for another library's module)."""
    return module_type.rsplit(".", 1)[-1] if module_type.startswith("sentence_transformers.") else ""


def _pool_modes(cfg: dict[str, object]) -> list[str]:
    """The pooling modes of a Pooling config: the newer ``pooling_mode`` (a name or a list of names), else
    the older ``pooling_mode_*`` flags."""
    mode = cfg.get("pooling_mode")
    if isinstance(mode, str):
        return [mode]
    if isinstance(mode, list):
        return [str(m) for m in mode]
    return [name for flag, name in _POOL_FLAGS.items() if cfg.get(flag)]


def _pooling(root: Path, module: dict[str, str], hidden: int | None) -> tuple[str, int | None, str | None]:
    """(ONNX pooling, output dimension, blocker) of a Pooling module."""
    cfg_file = root / module["path"] / "config.json"
    cfg = _read_json(cfg_file) if module["path"] and cfg_file.is_file() else {"pooling_mode": "mean"}
    cfg = cfg if isinstance(cfg, dict) else {}
    modes = _pool_modes(cfg)
    word = cfg.get("embedding_dimension", cfg.get("word_embedding_dimension", hidden))
    dim = word * len(modes) if isinstance(word, int) and modes else None
    if modes in (["mean"], ["cls"]):
        return modes[0], dim, None
    return "", dim, f"pooling {', '.join(modes) or '(none)'} has no ONNX path here"


def _dense_dim(root: Path, module: dict[str, str]) -> int | None:
    cfg = _read_json(root / module["path"] / "config.json") if module["path"] else {}
    out = cfg.get("out_features") if isinstance(cfg, dict) else None
    return out if isinstance(out, int) else None


def _module_digest_parts(root: Path, modules: list[dict[str, str]]) -> list[str]:
    """What each module contributes to the model digest: its type, and its folder's ``config.json`` and
    weights files (a Dense layer's weights decide the vectors as much as the transformer's)."""
    from crp_core.corpus.onnx_backend import WEIGHTS_FILES

    parts = []
    for m in modules:
        parts.append(m["kind"] or m["type"])
        if not m["path"]:
            continue  # the root: the transformer's config and weights are in its weights digest
        folder = root / m["path"]
        if (folder / "config.json").is_file():
            parts.append((folder / "config.json").read_text(encoding="utf-8", errors="replace"))
        parts.extend(file_digest(folder / w) for w in WEIGHTS_FILES if (folder / w).is_file())
    return parts


def inspect_folder(root: Path, name: str, label: str, source: str) -> ModelSpec:
    """The :class:`ModelSpec` of a model folder; :class:`ConfigError` naming what is missing."""
    from crp_core.corpus.onnx_backend import WEIGHTS_FILES, weights_digest

    if not root.is_dir():
        raise ConfigError(f"embedding_model {name!r}: {root} is not a folder")
    modules = _modules(root)
    transformer = next((m for m in modules if m["kind"] == _TRANSFORMER), None)
    if transformer is None:
        raise ConfigError(f"embedding_model {name!r}: {root} has no Transformer module in modules.json")
    hf = root / transformer["path"]
    if not (hf / "config.json").is_file() or not any((hf / w).is_file() for w in WEIGHTS_FILES):
        raise ConfigError(
            f"embedding_model {name!r}: {hf} is not a transformer model folder "
            f"(it needs config.json and {' or '.join(WEIGHTS_FILES)})"
        )
    cfg = _read_json(hf / "config.json")
    hidden = cfg.get("hidden_size") if isinstance(cfg, dict) else None
    hidden = hidden if isinstance(hidden, int) else None
    pooling, dim, blocker = "", hidden, None
    for m in modules:
        if m["kind"] == _POOLING:
            pooling, dim, why = _pooling(root, m, hidden)
            blocker = blocker or why
        elif m["kind"] == _DENSE:
            dim = _dense_dim(root, m)
            blocker = blocker or "a Dense module has no ONNX path here"
        elif m["kind"] not in (_TRANSFORMER, _NORMALIZE):
            dim = None
            blocker = blocker or f"module {m['type'] or '(untyped)'} has no ONNX path here"
    if transformer["path"]:
        blocker = blocker or "the transformer sits in a subfolder"
    if not (hf / "tokenizer.json").is_file():
        blocker = blocker or "no tokenizer.json (the ONNX backend reads the fast tokenizer)"
    if not pooling:
        blocker = blocker or "no Pooling module"
    digest = content_digest("\x00".join([weights_digest(str(hf)), *_module_digest_parts(root, modules)]))
    model_id = f"{label}@{digest[:ID_DIGEST_CHARS]}"
    return ModelSpec(name, str(root), model_id, source, pooling, dim, blocker, digest)


def looks_like_path(name: str) -> bool:
    """Whether ``name`` is read as a folder path (rule 2 of the module docstring)."""
    return os.sep in name or "/" in name or name.startswith((".", "~")) or Path(name).is_dir()


def _folders_in(files: list[Path]) -> list[Path]:
    """The model folders among a package's files: those holding ``modules.json``, else those holding a
    transformer's ``config.json`` beside a weights file."""
    from crp_core.corpus.onnx_backend import WEIGHTS_FILES

    names = {f.name for f in files}
    st = sorted({f.parent for f in files if f.name == "modules.json"})
    if st:
        return st
    if not names & {"config.json"}:
        return []
    weights = {f.parent for f in files if f.name in WEIGHTS_FILES}
    return sorted({f.parent for f in files if f.name == "config.json" and f.parent in weights})


def _distribution_files(name: str) -> tuple[str, list[Path]] | None:
    """(distribution name, its installed files) of the distribution ``name``, or None."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    files = [Path(str(dist.locate_file(f))) for f in (dist.files or ()) if "__pycache__" not in f.parts]
    return str(dist.metadata["Name"] or name), files


def _package_files(name: str) -> tuple[str, list[Path]] | None:
    """(import name, its files to :data:`_SEARCH_DEPTH`) of the importable package ``name`` (``-`` as
    ``_``), found without importing it, or None."""
    mod = name.replace("-", "_")
    if not mod.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(mod)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    files: list[Path] = []
    for base in spec.submodule_search_locations:
        root = Path(base)
        for dirpath, dirnames, filenames in os.walk(root):
            depth = len(Path(dirpath).relative_to(root).parts)
            if depth >= _SEARCH_DEPTH:
                dirnames[:] = []
            files.extend(Path(dirpath) / f for f in filenames)
    return mod, files


def _entry_point_folder(name: str) -> Path | None:
    """The folder an entry point of :data:`ENTRY_POINT_GROUP` named ``name`` gives (importing its module)."""
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name != name:
            continue
        try:
            obj = ep.load()
            got = obj() if callable(obj) else obj
        except Exception as exc:  # noqa: BLE001 - a third-party package's import may raise anything
            raise ConfigError(
                f"embedding_model {name!r}: the entry point {ep.value} failed ({type(exc).__name__}: {exc})"
            ) from None
        if not isinstance(got, (str, os.PathLike)):
            raise ConfigError(f"embedding_model {name!r}: the entry point {ep.value} gave no folder path")
        return Path(got)
    return None


def _package_folder(name: str) -> tuple[Path, str] | None:
    """(model folder, source) of the installed package ``name`` (rule 3), or None when no package has that name."""
    ep = _entry_point_folder(name)
    if ep is not None:
        return ep, f"package {name}"
    found = _distribution_files(name) or _package_files(name)
    if found is None:
        return None
    label, files = found
    folders = _folders_in(files)
    if not folders:
        raise ConfigError(
            f"embedding_model {name!r}: the installed package {label} ships no sentence-transformers model folder "
            "(no modules.json, nor a config.json beside model weights)"
        )
    if len(folders) > 1:
        shown = ", ".join(str(f) for f in folders[:5])
        raise ConfigError(
            f"embedding_model {name!r}: the installed package {label} ships {len(folders)} model folders "
            f"({shown}); give the one to use as a path"
        )
    return folders[0], f"package {label}"


#: resolved names by (name, working directory, folder modification time)
_RESOLVED: LRU[tuple[str, str, int], ModelSpec] = LRU(32, locked=True)


def resolve_model(name: str) -> ModelSpec:
    """The model folder a non-empty ``embedding_model`` names (the module docstring's rules 2 and 3);
    :class:`ConfigError` when it names neither a model folder nor an installed package shipping one.
    Nothing is downloaded."""
    name = name.strip()
    if not name:
        raise ConfigError("embedding_model: empty name (the bundled model needs no resolving)")
    if looks_like_path(name):
        root = Path(name).expanduser()
        if not root.is_dir():
            raise ConfigError(
                f"embedding_model {name!r}: no such folder; give a local sentence-transformers model folder or "
                "the name of an installed package that ships one (nothing is downloaded)"
            )
        root = root.resolve()
        return _memo(name, root, lambda: inspect_folder(root, name, root.name, "folder"))
    found = _package_folder(name)
    if found is None:
        raise ConfigError(
            f"embedding_model {name!r}: neither a local sentence-transformers model folder nor an installed "
            "package that ships one; nothing is downloaded: install the package, or give the model's folder"
        )
    root, source = found
    return _memo(name, root, lambda: inspect_folder(root.resolve(), name, name, source))


def _memo(name: str, root: Path, build: Callable[[], ModelSpec]) -> ModelSpec:
    """``build()`` once per (name, working directory, folder modification time)."""
    try:
        stamp = root.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return _RESOLVED.get_or_build((name, os.getcwd(), stamp), build)


# ---- the embedder of a configured model ---------------------------------------------------------------
class OnnxUnsupported(Exception):
    """The model has a part the ONNX encoder does not reproduce: it runs on torch."""


class SentenceModelEmbedder(MiniLMEmbedder):
    """Any sentence-transformers model folder (a :class:`ModelSpec`, the configuration's ``embedding_model``),
    on the MiniLM embedder's machinery: loaded lazily and offline, on ONNX Runtime where the model allows
    it (a transformer with mean or CLS pooling and a ``tokenizer.json``: exported once into the cache,
    keyed by its weights' digest), else on torch (sentence-transformers), with the reason in
    ``fallback_reason`` and a warning. Its vectors carry the spec's model id; its dimension is the
    model's (384, 768, ...). ``onnx-int8`` is MiniLM's alone."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        backend: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        backend = backend if backend is not None else default_backend()
        if backend == "onnx-int8":
            raise ConfigError(
                f"the onnx-int8 backend is all-MiniLM-L6-v2's only; embedding_model {spec.name!r} runs on onnx "
                f"or torch (unset {BACKEND_ENV}, or --backend onnx / torch)"
            )
        super().__init__(spec.path, backend=backend, cache_dir=cache_dir)
        self.spec = spec
        self.model_id = spec.model_id
        self.pooling = spec.pooling or "mean"
        if spec.dim is not None:
            self.dim = spec.dim
        else:  # a module only torch runs (a Dense layer of unknown width...): the loaded model tells
            self.backend = "torch"
            self.fallback_reason = spec.onnx_blocker
            model = self.load()
            self.dim = int(getattr(model, "get_sentence_embedding_dimension", lambda: 0)() or 0)

    def _load_onnx(self) -> OnnxEncoder:
        if self.spec.onnx_blocker is not None:
            raise OnnxUnsupported(self.spec.onnx_blocker)
        return super()._load_onnx()


#: the model digest of the bundled MiniLM folder, by its path
_BUNDLED: LRU[str, str] = LRU(2, locked=True)


def _bundled_digest() -> str:
    """The model digest of the bundled MiniLM folder (as :func:`resolve_model` computes one)."""
    path = minilm_model_path()
    return _BUNDLED.get_or_build(path, lambda: inspect_folder(Path(path), "", "", "bundled").digest)


def configured_embedder(name: str) -> MiniLMEmbedder:
    """The process-wide embedder of the configuration's ``embedding_model`` (docs/reference/ckf.md,
    embedding models): empty for the default MiniLM; a MiniLM model id for that MiniLM; else the model
    folder it resolves to (:func:`resolve_model`; a folder holding the bundled MiniLM is MiniLM, under
    its usual id). A name that resolves to nothing is a :class:`~crp_core.errors.ConfigError`; nothing
    is downloaded."""
    name = name.strip()
    if not name:
        return default_embedder()
    if name == INT8_V1_MODEL_ID:
        raise ConfigError(
            f"embedding_model {name!r}: that int8 recipe is retired; use {INT8_MODEL_ID!r} (crp-inspect embed "
            "--backend onnx-int8)"
        )
    if name in MINILM_IDS:
        got = embedder_for(name)
        assert got is not None  # a MiniLM id always has one
        return got
    spec = resolve_model(name)
    if spec.digest == _bundled_digest():
        return default_embedder()
    return embedding.EMBEDDERS.keyed(spec.model_id, lambda: SentenceModelEmbedder(spec))


def embedder_for_vectors(model_id: str, configured: str = "") -> MiniLMEmbedder | None:
    """The embedder of new texts for vectors of ``model_id``: MiniLM's for a MiniLM id
    (:func:`~crp_core.corpus.embedding.embedder_for`), else the ``configured`` model when it is that
    model; None otherwise (every text must then carry its own embedding)."""
    if model_id in MINILM_IDS or not configured.strip():
        return embedder_for(model_id)
    got = configured_embedder(configured)
    return got if got.model_id == model_id else None


def refuse_mixing(vectors_model: str, configured: str, what: str = "the CKF") -> None:
    """:class:`~crp_core.errors.EmbeddingModelMismatch` naming both ids when the configuration's
    ``embedding_model`` (``configured``, non-empty) is another model than the one ``what``'s vectors
    come from (SPEC-024 §2.5: embeddings of two models are never compared)."""
    if not configured.strip():
        return
    active = configured_embedder(configured).model_id
    if active != vectors_model:
        raise EmbeddingModelMismatch(
            f"{what}'s vectors come from {vectors_model!r} but embedding_model {configured.strip()!r} is "
            f"{active!r}; embeddings of two models cannot be compared (SPEC-024 §2.5). Re-embed with "
            "crp-inspect embed --model, or set embedding_model to the vectors' model"
        )
