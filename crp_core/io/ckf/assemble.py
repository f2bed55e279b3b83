"""The checks across a CKF's facts and the KnowledgeBase they build (docs/reference/ckf.md, SPEC-024 §2.5).

:func:`finish_load` takes what a reader found (:class:`~crp_core.io.ckf.facts.LoadState`): one
warning per unknown field, duplicate and look-alike ids, embeddings all-or-none with one dimension
and one model, then refuses the file (strict), or skips exactly the bad facts (lenient).
"""

from __future__ import annotations

import unicodedata
from collections import Counter

import numpy as np

from crp_core.config import TOKENIZED_CHARS_MAX
from crp_core.errors import Problem
from crp_core.io.ckf.facts import FACT_FIELDS, FactRecord, LoadState
from crp_core.io.ckf.source import DIR_FACTS, DIR_NPY, FILE_FIELD, refuse
from crp_core.model import META_SUPERSEDED_BY, Fact, KnowledgeBase


def finish_load(st: LoadState, *, source: str, fmt: str, lenient: bool, expected_model: str | None) -> KnowledgeBase:
    """The KnowledgeBase of the facts ``st`` holds, or :class:`CKFError` listing every problem."""
    _unknown_fields(st)
    _duplicate_ids(st.recs, st.warnings)
    rows, dim = _npy_rows(st) if st.npy is not None else _fact_rows(st)
    model = _model(st)
    has_emb = dim is not None
    if expected_model is not None and model is not None and has_emb and model != expected_model:
        st.file_problems.append(
            Problem(
                0,
                "embedding_model",
                f"embeddings are from {model!r} but the active model is "
                f"{expected_model!r}; embeddings never mix models "
                f"(SPEC-024 §2.5)",
            )
        )
    return _outcome(st, rows, model, has_emb, source=source, fmt=fmt, lenient=lenient)


def _unknown_fields(st: LoadState) -> None:
    """One warning per unknown field name."""
    for name, lines in st.unknown.items():
        more = f" and {len(lines) - 1} more fact(s)" if len(lines) > 1 else ""
        st.warnings.append(
            Problem(
                lines[0],
                name,
                f"unknown field, ignored (first at line {lines[0]}{more}); known fields: {', '.join(FACT_FIELDS)}",
            )
        )


def _duplicate_ids(recs: list[FactRecord], warnings: list[Problem]) -> None:
    """A duplicate id is an error of the later fact (the first occurrence is kept); ids that differ
    only by Unicode normalisation or spaces are a warning."""
    first: dict[str, int] = {}
    looks: dict[str, tuple[str, int]] = {}  # normalised id -> (first id, its line)
    for r in recs:
        if r.fact_id is None:
            continue
        norm = unicodedata.normalize("NFC", r.fact_id).strip()
        seen = looks.setdefault(norm, (r.fact_id, r.line))
        if seen[0] != r.fact_id:
            warnings.append(
                Problem(
                    r.line,
                    "fact_id",
                    f"id {r.fact_id!r} differs from {seen[0]!r} (line "
                    f"{seen[1]}) only by Unicode normalisation or spaces: "
                    "two facts, but a reader sees one id",
                    r.fact_id,
                )
            )
        if r.fact_id in first:
            r.errors.append(
                Problem(r.line, "fact_id", f"duplicate id {r.fact_id!r} (first at line {first[r.fact_id]})", r.fact_id)
            )
        else:
            first[r.fact_id] = r.line


def _npy_rows(st: LoadState) -> tuple[list[np.ndarray | None], int | None]:
    """The rows of a directory's ``embeddings.npy``, one per fact record, and their dimension."""
    recs, fp, npy = st.recs, st.file_problems, st.npy
    assert npy is not None
    rows: list[np.ndarray | None] = [None] * len(recs)
    if any(r.has_embedding for r in recs):
        fp.append(Problem(0, DIR_NPY, f'both {DIR_NPY} and per-fact "embedding" fields given; use one or the other'))
    if npy.shape[0] != len(recs):
        fp.append(
            Problem(
                0,
                DIR_NPY,
                f"{npy.shape[0]} rows but {DIR_FACTS} holds {len(recs)} fact record(s); one row per record, same order",
            )
        )
    dim = int(npy.shape[1])
    if st.dim is not None and st.dim != dim:
        fp.append(Problem(0, "manifest.dim", f"manifest says dim {st.dim} but {DIR_NPY} has {dim} columns"))
    if npy.shape[0] == len(recs):
        finite, nonzero = _npy_row_checks(npy)
        for i in np.flatnonzero(~finite).tolist():
            r = recs[i]
            r.errors.append(Problem(r.line, "embedding", f"{DIR_NPY} row {i} holds NaN or infinite values", r.fact_id))
        for i in np.flatnonzero(finite & ~nonzero).tolist():
            r = recs[i]
            r.errors.append(
                Problem(
                    r.line, "embedding", f"{DIR_NPY} row {i} is all zeros: an embedding needs a direction", r.fact_id
                )
            )
    return rows, dim


#: rows of ``embeddings.npy`` checked at a time (bounds the temporary boolean arrays of a memory-mapped file)
NPY_CHECK_ROWS = 65536


def _npy_row_checks(npy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) bool each: the row holds only finite values; the row holds a non-zero value (in bounded chunks)."""
    n = npy.shape[0]
    finite, nonzero = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
    for s in range(0, n, NPY_CHECK_ROWS):
        part = npy[s : s + NPY_CHECK_ROWS]
        finite[s : s + part.shape[0]] = np.isfinite(part).all(axis=1)
        nonzero[s : s + part.shape[0]] = np.any(part != 0, axis=1)
    return finite, nonzero


def _fact_rows(st: LoadState) -> tuple[list[np.ndarray | None], int | None]:
    """The per-fact embeddings, one per fact record (all or none, one dimension), and their dimension."""
    recs = st.recs
    rows: list[np.ndarray | None] = [None] * len(recs)
    with_e = [r for r in recs if r.has_embedding]
    if not with_e:
        if st.dim is not None:
            st.warnings.append(Problem(0, "dim", f"dim {st.dim} declared but no fact carries an embedding"))
        return rows, None
    objs = [r for r in recs if r.is_object]
    without = [r for r in objs if not r.has_embedding]
    if without:
        minority_has = len(with_e) < len(without)
        bad = with_e if minority_has else without
        msg = (
            f"{len(with_e)} of {len(objs)} facts carry an embedding; all or none must "
            f"({'this fact has one' if minority_has else 'this fact has none'})"
        )
        for r in bad:
            r.errors.append(Problem(r.line, "embedding", msg, r.fact_id))
    dim: int | None = None
    dims = Counter(len(r.embedding) for r in with_e if r.embedding is not None)
    if dims:
        dim = st.dim if st.dim is not None else dims.most_common(1)[0][0]
        why = "the declared dim" if st.dim is not None else "the most common dimension"
        for r in with_e:
            if r.embedding is not None and len(r.embedding) != dim:
                r.errors.append(
                    Problem(r.line, "embedding", f"dimension {len(r.embedding)}, expected {dim} ({why})", r.fact_id)
                )
    for i, r in enumerate(recs):
        rows[i] = r.embedding
    return rows, dim


def _model(st: LoadState) -> str | None:
    """The embedding model: the declared one, else the most common per-fact one; a fact naming
    another is an error."""
    models = Counter(r.model for r in st.recs if r.model is not None)
    model = st.model
    if model is None and models:
        model = models.most_common(1)[0][0]
    if model is not None:
        for r in st.recs:
            if r.model is not None and r.model != model:
                where = st.model_where or "most facts"
                r.errors.append(
                    Problem(
                        r.line,
                        "embedding_model",
                        f"{r.model!r} differs from {model!r} ({where}); embeddings never mix models",
                        r.fact_id,
                    )
                )
    return model


def _outcome(
    st: LoadState,
    rows: list[np.ndarray | None],
    model: str | None,
    has_emb: bool,
    *,
    source: str,
    fmt: str,
    lenient: bool,
) -> KnowledgeBase:
    """Refuse (file problems, or any bad fact when strict), else the KnowledgeBase of the good facts."""
    recs, fp = st.recs, st.file_problems
    bad_recs = [r for r in recs if r.errors or r.fact is None]
    fact_problems = [p for r in bad_recs for p in r.errors]
    if fp or (bad_recs and not lenient):
        refuse(source, sorted(fp, key=lambda p: p.line) + fact_problems)
    kept = [(i, r.fact) for i, r in enumerate(recs) if not r.errors and r.fact is not None]
    keep = [i for i, _ in kept]
    if not keep:
        refuse(source, fact_problems + [Problem(0, FILE_FIELD, "no valid fact left to load")])
    facts = tuple(f for _, f in kept)
    emb = None
    if has_emb:
        emb = _kept_embeddings(st.npy, rows, keep)
    elif model is not None:
        st.warnings.append(
            Problem(
                0,
                "embedding_model",
                f"embedding_model {model!r} named but no embeddings given; the active model will embed",
            )
        )
        model = None
    if has_emb and model is None:
        st.warnings.append(
            Problem(
                0,
                "embedding_model",
                "embeddings carry no embedding_model; they will be "
                "used only if their dimension matches the active model",
            )
        )
    st.warnings.extend(supersession_cycles(facts))
    for f in facts:
        if len(f.content) > TOKENIZED_CHARS_MAX:
            st.warnings.append(
                Problem(
                    f.line,
                    "content",
                    f"{len(f.content):,} characters: the model reads the first {TOKENIZED_CHARS_MAX:,} "
                    "(embedding and token count, the count scaled to the whole text)",
                    f.fact_id,
                )
            )
        if f.effective_modified_at is None:
            st.warnings.append(
                Problem(
                    f.line,
                    "modified_at",
                    "neither ingested_at nor modified_at given: age unknown, recency factor 1.0",
                    f.fact_id,
                )
            )
    return KnowledgeBase(
        facts=facts,
        embeddings=emb,
        embedding_model=model,
        source=source,
        fmt=fmt,
        skipped=tuple(fact_problems),
        warnings=tuple(st.warnings),
    )


def _kept_embeddings(npy: np.ndarray | None, rows: list[np.ndarray | None], keep: list[int]) -> np.ndarray:
    """The embeddings of the kept facts: a directory's ``embeddings.npy`` array itself (as read, or mapped:
    ``load_ckf``'s ``map_vectors``) when every row is kept, else a fresh float32 array of the kept rows."""
    if npy is not None:
        return npy if len(keep) == npy.shape[0] else np.ascontiguousarray(npy[keep], dtype=np.float32)
    # np.stack turns each row into an array with asanyarray; np.asarray does the same here
    return np.stack([np.asarray(rows[i]) for i in keep]).astype(np.float32, copy=False)  # a fresh array


def supersession_cycles(facts: tuple[Fact, ...] | list[Fact]) -> list[Problem]:
    """One warning per cycle of ``metadata.superseded_by`` (a -> b -> a): every fact of it is superseded
    by another of it, so none is the one in force. Said at the cycle's first fact in file order."""
    succ: dict[str, str] = {}
    line: dict[str, int] = {}
    for f in facts:
        nxt = f.metadata.get(META_SUPERSEDED_BY) if f.metadata else None
        line.setdefault(f.fact_id, f.line)
        if isinstance(nxt, str) and nxt and nxt != f.fact_id:
            succ[f.fact_id] = nxt
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    found: list[Problem] = []
    for start in succ:
        path: list[str] = []
        node: str | None = start
        while node is not None and node in succ and state.get(node) is None:
            state[node] = 1
            path.append(node)
            node = succ[node]
        if node is not None and state.get(node) == 1:  # back on this walk's own path: a cycle
            cycle = path[path.index(node) :]
            first = min(cycle, key=lambda i: line[i])
            k = cycle.index(first)
            ring = cycle[k:] + cycle[:k] + [first]
            found.append(
                Problem(
                    line[first],
                    f"metadata.{META_SUPERSEDED_BY}",
                    f"supersession cycle {' -> '.join(repr(i[:40]) for i in ring)}: each is superseded by another "
                    "of them, so none is in force; mark the one that is ACTIVE",
                    first,
                )
            )
        for visited in path:
            state[visited] = 2
    return found
