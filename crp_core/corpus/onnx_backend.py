"""The ONNX Runtime backend of the embedding models: a local export of a model's weights and its encoder.

The export (``torch.onnx.export``, once per weights digest, atomic) lives in the embedding cache
directory; the encoder tokenises with the model's ``tokenizer.json`` and mean-pools the transformer's
output over the attention mask, as sentence-transformers' MiniLM pipeline does (Transformer ->
Pooling(mean) -> Normalize, the normalisation done by the caller). docs/decisions/embedding-index.md.

The int8 variant (its own model id: its vectors are not within 1e-4 cosine of fp32, docs/reference/scenarios.md) is
made locally from a second export of the same weights (eager attention, so ONNX Runtime's transformer
optimizer can fuse attention, LayerNorm and GELU), then int8 weights per output channel (7-bit range for
CPUs without VNNI) and activations quantised per token, each token row with its own scale, so a text's
vector is a function of the text alone, whatever its batch-mates (the embedding cache's key, docs/reference/
§1.2); cached next to the fp32 export, atomically.

Scheduling: by default each of the embedder's threads runs whole batches on a one-thread session
(data parallelism, ``batches``); ``intra`` runs one batch at a time split over ONNX Runtime's intra-op
threads. Both give the same vectors bit for bit (a batch's rows are computed the same way whatever the
thread count).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import warnings
from collections import deque
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from crp_core.config import TOKENIZED_CHARS_MAX
from crp_core.corpus.embedding_cache import default_cache_dir
from crp_core.support.digest import file_digest
from crp_core.support.files import PRIVATE_FILE_MODE, replaced_atomically
from crp_core.support.memo import LRU

#: the ONNX export's opset and the graph's input names
_ONNX_OPSET = 17
_ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: the int8 recipe's version, part of its file name: a changed recipe never reuses an old file.
#: v1 (dynamic int8, one activation scale per batch tensor: a row depended on its batch-mates) is retired;
#: v2 quantises activations per token row (:func:`quantize_rows`)
INT8_RECIPE = "int8-v2"
#: int8 weight range of the v2 recipe: 7 bits (+-63), so AVX2's u8 x s8 pair sums (vpmaddubsw, no VNNI)
#: cannot saturate int16 with activations up to 255
_WEIGHT_QMAX = 63.0
#: how the embedder's threads share the work: whole batches per thread, or each batch over all threads
SCHEDULES: tuple[str, ...] = ("batches", "intra")
#: how the encoder turns token states into one vector: sentence-transformers' ``Pooling`` modes it runs
POOLINGS: tuple[str, ...] = ("mean", "cls")
#: MiniLM-L6's attention heads and hidden size (the transformer optimizer's fusion needs them)
_HEADS, _HIDDEN = 12, 384

#: weights digests by (weights file, size, modification time)
_WEIGHTS_DIGESTS: LRU[tuple[str, int, int], str] = LRU(64, locked=True)


def set_offline() -> None:
    """Keep the Hugging Face libraries from reaching the network: the model is the bundled copy."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


#: the transformer weights file names a model folder may hold, the preferred first
WEIGHTS_FILES: tuple[str, ...] = ("model.safetensors", "pytorch_model.bin")


def weights_file(model_path: str) -> Path:
    """The model folder's weights file (the first of :data:`WEIGHTS_FILES` present; the first name when none is)."""
    for name in WEIGHTS_FILES:
        if (Path(model_path) / name).is_file():
            return Path(model_path) / name
    return Path(model_path) / WEIGHTS_FILES[0]


def weights_digest(model_path: str) -> str:
    """sha256 over the weights file and the model config (hex): the key of the ONNX export.
    Memoised per (path, size, mtime) within the process."""
    weights = weights_file(model_path)
    st = weights.stat()
    return _WEIGHTS_DIGESTS.get_or_build(
        (str(weights), st.st_size, st.st_mtime_ns), lambda: file_digest(weights, Path(model_path) / "config.json")
    )


def onnx_model_file(model_path: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the ONNX export of the weights at ``model_path`` lives: ``<cache>/onnx/<digest[:24]>/model.onnx``."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / "onnx" / weights_digest(model_path)[:24] / "model.onnx"


def int8_model_file(model_path: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the int8 model of these weights lives: next to the fp32 export, ``model-int8-v2.onnx``."""
    return onnx_model_file(model_path, cache_dir).with_name(f"model-{INT8_RECIPE}.onnx")


def export_onnx(model_path: str, out: Path, *, eager_attention: bool = False) -> Path:
    """Export the bundled weights (the transformer, output ``last_hidden_state``) to ONNX at ``out``,
    atomically (a temp file in the same folder, then a rename), offline. Needs torch, transformers
    and the ``onnx`` package; only run when no export exists for these weights' digest.
    ``eager_attention``: trace the plain attention (matmul, softmax) instead of the fused SDPA call, the
    pattern ONNX Runtime's transformer optimizer recognises (the int8 build uses it)."""
    set_offline()
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    extra = {"attn_implementation": "eager"} if eager_attention else {}
    bars_on = hf_logging.is_progress_bar_enabled()
    if bars_on:
        hf_logging.disable_progress_bar()  # no "Loading weights" bar from a one-off local build
    try:
        model = AutoModel.from_pretrained(model_path, **extra).eval()
    finally:
        if bars_on:
            hf_logging.enable_progress_bar()

    import inspect

    # the inputs the model's forward takes (BERT: all three; MPNet, RoBERTa-like: no token_type_ids)
    takes = inspect.signature(model.forward).parameters
    names = tuple(n for n in _ONNX_INPUTS if n in takes)

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*names, "last_hidden_state")}
    with (
        replaced_atomically(out, ".onnx", parents=True, mode=PRIVATE_FILE_MODE) as tmp,
        torch.no_grad(),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(model),
            dummy,
            tmp,
            input_names=list(names),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=_ONNX_OPSET,
            dynamo=False,
        )
    return out


def build_int8(model_path: str, out: Path) -> Path:
    """The int8 model at ``out``, made locally and offline: an eager-attention export of the weights,
    ONNX Runtime's transformer optimizer (``model_type='bert'``: Attention, SkipLayerNormalization,
    BiasGelu fused), then :func:`quantize_rows` (int8 weights per output channel, activations per token
    row, the QKV projection included). Intermediate files live in a temp folder beside ``out``; ``out``
    appears atomically, complete or not at all."""
    from onnxruntime.transformers import optimizer

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".int8-", dir=str(out.parent)) as work:
        fp32 = Path(work) / "eager.onnx"
        export_onnx(model_path, fp32, eager_attention=True)
        fused = optimizer.optimize_model(
            str(fp32), model_type="bert", num_heads=_HEADS, hidden_size=_HIDDEN, opt_level=1, use_gpu=False
        )
        fused_file = Path(work) / "fused.onnx"
        fused.save_model_to_file(str(fused_file))
        with replaced_atomically(out, ".onnx", parents=True, mode=PRIVATE_FILE_MODE) as tmp:
            quantize_rows(fused_file, Path(tmp))
    return out


def quantize_rows(src: Path, out: Path) -> int:
    """Rewrite the weight products of ``src`` as int8 arithmetic whose rows are independent (docs/reference/
    §1.2: one text, one vector): each weight symmetric int8 per output column (+-63); each activation
    quantised per row of its last axis (one token's hidden vector) with its own scale ``max|x| / 127`` to
    uint8 around 128 (one per-axis ``QuantizeLinear`` over the rows, flattened to 2-D); ``MatMulInteger``
    (ONNX Runtime's u8 x s8 kernels), then the int32 product scaled back by the row's and the column's
    scales and reshaped to the activation's leading axes. Every MatMul with a constant 2-D weight is rewritten so,
    and every fused ``Attention`` becomes that product for its packed QKV weight, a ``Split`` and a
    ``MultiHeadAttention`` (the same bias, the same mask index; attention itself in fp32). An input
    shared by several products is quantised once. Returns the weights quantised."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    weights = {t.name: t for t in graph.initializer}
    consts: dict[str, np.ndarray] = {
        "rq.127": np.array(127.0, np.float32),
        "rq.tiny": np.array(1e-30, np.float32),
        "rq.zp": np.array(128, np.uint8),
        "rq.flat": np.array([-1], np.int64),
        "rq.col": np.array([-1, 1], np.int64),
        "rq.start": np.array([0], np.int64),
        "rq.stop": np.array([-1], np.int64),
    }
    added = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    nodes: list[onnx.NodeProto] = []
    done: dict[str, tuple[str, str, str]] = {}  # activation -> (its uint8 rows, their scales, its leading shape)
    dropped: set[str] = set()

    def product(x: str, w_name: str, y: str) -> None:
        """``y = x @ weight`` in per-row int8 (appended to ``nodes``)."""
        w = numpy_helper.to_array(weights[w_name]).astype(np.float32)
        if x not in done:
            p = f"{x}.rq"
            added.append(numpy_helper.from_array(np.array([-1, w.shape[0]], np.int64), f"{p}.rows"))
            zp = numpy_helper.from_array(np.array([128], np.uint8))
            nodes.extend(
                [
                    helper.make_node("Abs", [x], [f"{p}.abs"]),
                    helper.make_node("ReduceMax", [f"{p}.abs"], [f"{p}.max"], axes=[-1], keepdims=1),
                    helper.make_node("Div", [f"{p}.max", "rq.127"], [f"{p}.s0"]),
                    helper.make_node("Max", [f"{p}.s0", "rq.tiny"], [f"{p}.s"]),
                    helper.make_node("Reshape", [f"{p}.s", "rq.flat"], [f"{p}.sf"]),
                    helper.make_node("Reshape", [f"{p}.s", "rq.col"], [f"{p}.sc"]),
                    helper.make_node("Shape", [f"{p}.sf"], [f"{p}.n"]),
                    helper.make_node("ConstantOfShape", [f"{p}.n"], [f"{p}.zp"], value=zp),
                    helper.make_node("Reshape", [x, f"{p}.rows"], [f"{p}.x2"]),
                    helper.make_node("QuantizeLinear", [f"{p}.x2", f"{p}.sf", f"{p}.zp"], [f"{p}.u8"], axis=0),
                    helper.make_node("Shape", [x], [f"{p}.shape"]),
                    helper.make_node("Slice", [f"{p}.shape", "rq.start", "rq.stop"], [f"{p}.lead"]),
                ]
            )
            done[x] = (f"{p}.u8", f"{p}.sc", f"{p}.lead")
        xq, xs, lead = done[x]
        w_scale = (np.maximum(np.abs(w).max(axis=0), 1e-30) / _WEIGHT_QMAX).astype(np.float32)
        w_q = np.clip(np.round(w / w_scale), -_WEIGHT_QMAX, _WEIGHT_QMAX).astype(np.int8)
        added.extend(
            [
                numpy_helper.from_array(w_q, f"{w_name}.s8"),
                numpy_helper.from_array(w_scale, f"{w_name}.scale"),
                numpy_helper.from_array(np.array([w.shape[1]], np.int64), f"{w_name}.cols"),
            ]
        )
        dropped.add(w_name)
        nodes.extend(
            [
                helper.make_node("MatMulInteger", [xq, f"{w_name}.s8", "rq.zp"], [f"{y}.i32"]),
                helper.make_node("Cast", [f"{y}.i32"], [f"{y}.f"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{y}.f", xs], [f"{y}.fs"]),
                helper.make_node("Mul", [f"{y}.fs", f"{w_name}.scale"], [f"{y}.2d"]),
                helper.make_node("Concat", [lead, f"{w_name}.cols"], [f"{y}.shape"], axis=0),
                helper.make_node("Reshape", [f"{y}.2d", f"{y}.shape"], [y]),
            ]
        )

    for node in graph.node:
        w_name = node.input[1] if node.op_type in ("MatMul", "Attention") and len(node.input) > 1 else ""
        if w_name not in weights or len(weights[w_name].dims) != 2:
            nodes.append(node)
        elif node.op_type == "MatMul":
            product(node.input[0], w_name, node.output[0])
        else:  # Attention(x, qkv weight, qkv bias, mask index): its projection, then the attention alone
            heads = next(a.i for a in node.attribute if a.name == "num_heads")
            width = weights[w_name].dims[1] // 3
            y = node.output[0]
            product(node.input[0], w_name, f"{y}.qkv")
            split = numpy_helper.from_array(np.array([width] * 3, np.int64), f"{y}.split")
            added.append(split)
            nodes.extend(
                [
                    helper.make_node("Split", [f"{y}.qkv", split.name], [f"{y}.q", f"{y}.k", f"{y}.v"], axis=2),
                    helper.make_node(
                        "MultiHeadAttention",
                        [f"{y}.q", f"{y}.k", f"{y}.v", *node.input[2:4]],
                        [y],
                        name=node.name,
                        domain="com.microsoft",
                        num_heads=heads,
                    ),
                ]
            )
    kept = [t for t in graph.initializer if t.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return len(dropped)


def _json_file(path: Path) -> dict[str, object]:
    """A JSON object file, or an empty dict when it is missing or not a JSON object."""
    try:
        got = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def max_seq_length(model_path: str) -> int:
    """sentence-transformers' truncation length for these weights: ``max_seq_length`` of
    ``sentence_bert_config.json``, else the tokenizer's ``model_max_length`` (``tokenizer_config.json``),
    else 256; never above the positions the transformer has (``max_position_embeddings`` of ``config.json``)."""
    got = _json_file(Path(model_path) / "sentence_bert_config.json").get("max_seq_length")
    if not isinstance(got, int):
        got = _json_file(Path(model_path) / "tokenizer_config.json").get("model_max_length")
    length = got if isinstance(got, int) and 0 < got <= 1_000_000 else 256
    positions = _json_file(Path(model_path) / "config.json").get("max_position_embeddings")
    if isinstance(positions, int) and positions > 2:
        length = min(length, positions)
    return length


#: characters handed to the tokenizer in one call: it holds hundreds of bytes per character of its input
TOKENIZE_GROUP_CHARS = 1_000_000


def tokenizer_input(texts: Sequence[str]) -> list[str]:
    """The texts as the tokenizer takes them: each cut to :data:`~crp_core.config.TOKENIZED_CHARS_MAX`."""
    return [t if len(t) <= TOKENIZED_CHARS_MAX else t[:TOKENIZED_CHARS_MAX] for t in texts]


def char_bounded_groups(texts: Sequence[str], max_chars: int = TOKENIZE_GROUP_CHARS) -> list[tuple[int, int]]:
    """``[start, end)`` runs of ``texts`` of at most ``max_chars`` characters together (a longer text alone):
    tokenizing one run at a time bounds the tokenizer's memory by the run, not by the batch."""
    runs: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, t in enumerate(texts):
        if i > start and size + len(t) > max_chars:
            runs.append((start, i))
            start, size = i, 0
        size += len(t)
    if start < len(texts):
        runs.append((start, len(texts)))
    return runs


class OnnxEncoder:
    """The exported transformer in ONNX Runtime, the model's own tokenizer (``tokenizer.json``
    through the ``tokenizers`` library) and the model's pooling (``pooling``: the mean over the attention
    mask, as sentence-transformers' MiniLM pipeline Transformer -> Pooling(mean) -> Normalize, or the first
    token's state, ``cls``, as bge's).

    ``schedule="batches"`` (data parallelism): one session with one intra-op thread, and up to
    ``threads`` batches in ``session.run`` at once from a small thread pool (ONNX Runtime's run is
    thread-safe and releases the GIL); ``"intra"``: one batch at a time over ``threads`` intra-op threads.
    ``rows_independent``: a row's output does not depend on its batch-mates (true of the fp32 export and
    of the int8-v2 model, whose activations are scaled per token; not of a model whose activation scale
    is the whole batch's), so a call of a single batch may be split over the threads without changing a bit."""

    def __init__(
        self,
        model_file: Path,
        model_path: str,
        threads: int,
        *,
        schedule: str = "batches",
        rows_independent: bool = False,
        pooling: str = "mean",
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
        self.pooling = pooling
        threads = max(1, threads)
        self.schedule = schedule
        #: batches in flight at once (1: the caller's thread runs them one after the other)
        self.workers = threads if schedule == "batches" else 1
        self.rows_independent = rows_independent
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1 if schedule == "batches" else threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        self.session = ort.InferenceSession(str(model_file), so, providers=["CPUExecutionProvider"])
        tok = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(max_length=max_seq_length(model_path))
        self.tokenizer = tok
        self._inputs = frozenset(i.name for i in self.session.get_inputs())
        self.runner = BatchRunner(self.encode_ids, self.workers, rows_independent)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text with special tokens, truncated as the model is: what :meth:`encode_ids` takes
        (the caller sorts by their length, so each batch pads only to its own longest text)."""
        texts = tokenizer_input(texts)
        ids: list[list[int]] = []
        for a, b in char_bounded_groups(texts):
            ids.extend(e.ids for e in self.tokenizer.encode_batch(texts[a:b]))
        return ids

    def encode_ids(self, rows: list[list[int]]) -> np.ndarray:
        """Pooled (not normalised) transformer output of token id rows, padded to the longest row: the mean
        over the attention mask, or the first token's state (``cls``)."""
        width = max(1, max(len(r) for r in rows))
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(["last_hidden_state"], {k: v for k, v in feed.items() if k in self._inputs})[0]
        if self.pooling == "cls":
            return np.asarray(hidden[:, 0, :], dtype=np.float32)
        m = mask[:, :, None].astype(np.float32)
        summed = (np.asarray(hidden, dtype=np.float32) * m).sum(axis=1)
        return summed / np.maximum(m.sum(axis=1), 1e-9)

    def encode_batches(self, batches: Sequence[list[list[int]]]) -> Generator[np.ndarray, None, None]:
        """:meth:`encode_ids` of each batch, yielded in order (:class:`BatchRunner`)."""
        return self.runner.encode_batches(batches)


class BatchRunner:
    """Runs ``encode_ids(rows)`` over a sequence of batches, handing the results back in batch order:
    up to ``workers`` batches at once from a small thread pool (made on first use), or, for a lone
    batch whose rows do not depend on each other (``rows_independent``), its rows in ``workers``
    slices at once."""

    def __init__(
        self, encode_ids: Callable[[list[list[int]]], np.ndarray], workers: int, rows_independent: bool
    ) -> None:
        self.encode_ids = encode_ids
        self.workers = max(1, workers)
        self.rows_independent = rows_independent
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="crp-embed")
            return self._pool

    def _encode_split(self, rows: list[list[int]]) -> np.ndarray:
        """One batch of rows-independent output over the workers: its rows in ``workers`` slices at once."""
        step = -(-len(rows) // self.workers)
        parts = [self._executor().submit(self.encode_ids, rows[i : i + step]) for i in range(0, len(rows), step)]
        return np.concatenate([f.result() for f in parts])

    def encode_batches(self, batches: Sequence[list[list[int]]]) -> Generator[np.ndarray, None, None]:
        """``encode_ids`` of each batch, yielded in order; with the ``batches`` schedule up to
        ``workers`` of them run at once (the next one is started before a result is handed back).
        Closing the iterator early (the caller's cancel) drops the batches not started and waits for the
        running ones, so no model work outlives the call."""
        if self.workers <= 1 or not batches:
            for rows in batches:
                yield self.encode_ids(rows)
            return
        if len(batches) == 1 and self.rows_independent and len(batches[0]) > 1:
            yield self._encode_split(batches[0])
            return
        pool = self._executor()
        pending: deque[Future[np.ndarray]] = deque()
        nxt = 0
        try:
            while nxt < len(batches) and len(pending) < self.workers:
                pending.append(pool.submit(self.encode_ids, batches[nxt]))
                nxt += 1
            while pending:
                got = pending.popleft().result()
                if nxt < len(batches):
                    pending.append(pool.submit(self.encode_ids, batches[nxt]))
                    nxt += 1
                yield got
        finally:
            for fut in pending:
                fut.cancel()
            wait(pending)
