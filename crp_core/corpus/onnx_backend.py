"""The ONNX Runtime backend of MiniLM: a local export of the bundled weights and its encoder.

The export (``torch.onnx.export``, once per weights digest, atomic) lives in the embedding cache
directory; the encoder tokenises with the model's ``tokenizer.json`` and mean-pools the transformer's
output over the attention mask, as sentence-transformers' MiniLM pipeline does (Transformer ->
Pooling(mean) -> Normalize, the normalisation done by the caller). docs/decisions/embedding-index.md.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np

from crp_core.corpus.embedding import _set_offline, default_cache_dir
from crp_core.corpus.embedding_cache import replaced_atomically

#: the ONNX export's opset and the graph's input names
_ONNX_OPSET = 17
_ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

_digest_memo: dict[tuple[str, int, int], str] = {}


def weights_digest(model_path: str) -> str:
    """sha256 over the weights file and the model config (hex): the key of the ONNX export.
    Memoised per (path, size, mtime) within the process."""
    weights = Path(model_path) / "model.safetensors"
    st = weights.stat()
    memo_key = (str(weights), st.st_size, st.st_mtime_ns)
    got = _digest_memo.get(memo_key)
    if got is None:
        h = hashlib.sha256()
        for part in (weights, Path(model_path) / "config.json"):
            with part.open("rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        got = _digest_memo[memo_key] = h.hexdigest()
    return got


def onnx_model_file(model_path: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the ONNX export of the weights at ``model_path`` lives: ``<cache>/onnx/<digest[:24]>/model.onnx``."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / "onnx" / weights_digest(model_path)[:24] / "model.onnx"


def export_onnx(model_path: str, out: Path) -> Path:
    """Export the bundled weights (the transformer, output ``last_hidden_state``) to ONNX at ``out``,
    atomically (a temp file in the same folder, then a rename), offline. Needs torch, transformers
    and the ``onnx`` package; only run when no export exists for these weights' digest."""
    _set_offline()
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_path).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in _ONNX_INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_ONNX_INPUTS, "last_hidden_state")}
    with replaced_atomically(out, ".onnx") as tmp, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Hidden(model), dummy, tmp, input_names=list(_ONNX_INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=_ONNX_OPSET, dynamo=False)
    return out


def _max_seq_length(model_path: str) -> int:
    """sentence-transformers' truncation length for these weights (``sentence_bert_config.json``)."""
    try:
        cfg = json.loads((Path(model_path) / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(cfg.get("max_seq_length", 256))
    except (OSError, ValueError):
        return 256


class OnnxEncoder:
    """The exported transformer in ONNX Runtime, the model's own tokenizer (``tokenizer.json``
    through the ``tokenizers`` library) and mean pooling over the attention mask, as
    sentence-transformers' MiniLM pipeline (Transformer -> Pooling(mean) -> Normalize)."""

    def __init__(self, model_file: Path, model_path: str, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        self.session = ort.InferenceSession(str(model_file), so, providers=["CPUExecutionProvider"])
        tok = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(max_length=_max_seq_length(model_path))
        self.tokenizer = tok

    def encode(self, texts: list[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts)
        width = max(1, max(len(e.ids) for e in encs))
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        for r, e in enumerate(encs):
            ids[r, :len(e.ids)] = e.ids
            mask[r, :len(e.ids)] = 1
        hidden = self.session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                          "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        summed = (np.asarray(hidden, dtype=np.float32) * m).sum(axis=1)
        return summed / np.maximum(m.sum(axis=1), 1e-9)
