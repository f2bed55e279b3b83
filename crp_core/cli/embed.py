"""``crp-inspect embed``: embed every fact of a CKF with MiniLM, or the model ``--model`` (or the
``--config`` file's ``embedding_model``) names, and write it with its embeddings stamped with that
model's id (SPEC-009 §3): a directory CKF (``facts.jsonl`` + ``embeddings.npy`` + ``manifest.json``) or, for an
``--out`` ending in ``.parquet``, a Parquet CKF. ``--engine ray`` embeds on a Ray cluster (Ray Data
actors loading the model once each); the local engine is the dashboard's own embedding path.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers


def add_engine_args(p: argparse.ArgumentParser, what: str) -> None:
    """``--engine local|ray``, ``--address``, ``--workers`` (shared with ``conflicts``)."""
    from crp_core.cli.common import positive_int
    from crp_core.engines import ENGINES

    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help=f"where {what} runs: this process (local, default) or Ray (needs the [ray] extra)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="an existing Ray cluster (ray://host:port or auto); default: a private local one",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=2,
        metavar="N",
        help="Ray workers (CPUs of the local cluster, embedding actors); default 2",
    )


def register(subparsers: Subparsers) -> None:
    from crp_core.cli.common import add_max_bytes_arg, cache_dir_arg, positive_int

    p = subparsers.add_parser(
        "embed",
        help="embed every fact of a CKF (MiniLM, or --model) and write the CKF with its embeddings",
        description="Embed every fact's content with MiniLM, or the model --model names (a local "
        "sentence-transformers model folder, or an installed package that ships one; nothing is downloaded), "
        "through the embedding cache, and write the CKF with its embeddings and the model's id: a directory "
        "CKF, or a Parquet CKF when --out ends in .parquet.",
    )
    p.add_argument("--ckf", required=True, metavar="PATH", help="CKF file (.jsonl/.json/.csv/.parquet) or directory")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory CKF, or a .parquet file")
    p.add_argument("--lenient", action="store_true", help="skip bad facts of the CKF instead of refusing it")
    add_max_bytes_arg(p)
    p.add_argument(
        "--model",
        default=None,
        metavar="NAME",
        help="the embedding model: a local sentence-transformers model folder, or the name of an installed "
        "package that ships one (default: the --config file's embedding_model, else all-MiniLM-L6-v2)",
    )
    p.add_argument(
        "--config", metavar="TOML", default=None, help="configuration file whose embedding_model is the model"
    )
    from crp_core.corpus.embedding import DEFAULT_BATCH

    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_BATCH,
        metavar="N",
        help=f"texts per model batch ({DEFAULT_BATCH})",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        type=cache_dir_arg,
        help="embedding cache directory (created if missing)",
    )
    p.add_argument(
        "--backend",
        choices=("onnx", "torch", "onnx-int8"),
        default=None,
        help="model backend (default: $CRP_EMBED_BACKEND, else onnx when installed and the model allows it); "
        "onnx-int8 (MiniLM only) is faster but lossy and writes the model id "
        "crp-inspect/all-MiniLM-L6-v2-onnx-int8-v2, which never mixes with the fp32 MiniLM vectors",
    )
    add_engine_args(p, "the embedding")
    p.set_defaults(handler=_handle)


def _check_out(out: str) -> str:
    if out.lower().endswith(".parquet"):
        from crp_core.cli.common import check_writable

        return check_writable(out, "--out")
    if os.path.splitext(out)[1]:
        raise ConfigError(f"--out: {out} has an extension; give a directory (no extension) or a .parquet file")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise ConfigError(f"--out: {out} exists and is not a folder")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise ConfigError(f"--out: cannot write {out}: the folder {parent} does not exist")
    return out


def _model_name(args: argparse.Namespace) -> str:
    """``--model``, else the ``--config`` file's ``embedding_model`` (empty: MiniLM); checked by the configuration."""
    from crp_core.config import CRPConfig

    if args.model is not None:
        return CRPConfig().with_overrides({"embedding_model": args.model}).embedding_model
    return CRPConfig.load(args.config).embedding_model if args.config else ""


def _handle(args: argparse.Namespace) -> int:
    from crp_core.engines import embed_kb
    from crp_core.io.ckf import load_ckf, write_ckf

    out = _check_out(args.out)
    if args.backend is not None:  # read by the process-wide embedder, made on the first embedding below
        from crp_core.corpus.embedding import BACKEND_ENV

        os.environ[BACKEND_ENV] = args.backend
    if args.engine == "ray":
        from crp_core.engines.ray_engine import require_ray

        require_ray()  # before loading anything: say at once how to install the extra
    model = _model_name(args)
    kb = load_ckf(args.ckf, lenient=args.lenient, max_bytes=args.max_bytes)
    if kb.skipped:
        print(f"lenient load: {len(kb.skipped)} bad fact(s) skipped", file=sys.stderr)
    done, run = embed_kb(
        kb,
        engine=args.engine,
        address=args.address,
        workers=args.workers,
        batch_size=args.batch_size,
        cache_dir=args.cache_dir,
        model=model,
    )
    write_ckf(done, out)
    embedded = run.texts - run.cached
    rate = f", {run.texts_per_second:.1f} texts/s" if embedded else ""
    print(
        f"embedded {embedded} of {run.texts} text(s) ({run.cached} from the cache) in {run.seconds:.1f} s"
        f"{rate} on the {run.engine} engine ({run.workers} worker(s)) with {done.embedding_model}; wrote {out}"
    )
    if run.engine == "local" and embedded:
        from crp_core.corpus.embedding_models import configured_embedder

        embedder = configured_embedder(model)
        if embedder.fallback_reason:
            print(f"(the model ran on torch: {embedder.fallback_reason})")
        if embedder.builds:
            print(
                f"(that time includes making the {embedder.backend} model from the weights, once: "
                "it is kept in the cache, so the next run encodes at once)"
            )
    return 0
