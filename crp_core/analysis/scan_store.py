"""The whole-CKF scan's checked pairs (:class:`~crp_core.analysis.scan.CheckedPairs`: the pair search and the
text check, the part of a scan that neither ``now`` nor operator decisions change) persisted in a corpus's
cache folder, so a process that opens the same CKF again arbitrates them instead of scanning again.

A file is named by everything the checked pairs are a function of: the facts' ids and texts
(``KnowledgeBase.fingerprint``), the vectors (``Corpus.fingerprint``), which facts are retrievable, the
config fields the check reads (``CHECK_CONFIG_FIELDS``) and the detector (``detector_identity``: its rules,
lexicon and weights). It holds arrays only (``numpy.savez``, read without pickle), written atomically and
private to the user; each is checked on load (shapes, dtypes, rows in range, offsets in order, spans inside
their texts, tokens in UTF-8), and a damaged file is ignored with a warning (the scan runs again). A folder keeps
the :data:`KEPT_SCAN_FILES` files most recently written or read; a save removes the older ones.

Layout of the ``.npz`` (f conflicting pairs, d diffs, t tokens):
``pairs`` (m, 2) int64 and ``method``, ``products``, ``search_ms``, ``check_ms`` (0-d) of the pair search;
``rows`` (f, 2) int64 of the conflicting pairs (fact a the smaller id), ``learned`` (f,) bool, ``patterns``
(f,) uint8 (bit k: ``PATTERNS[k]``), ``diff_end`` (f,) int64 (cumulative diffs per pair); per diff
``diff_pattern`` (d,) uint8, ``spans`` (d, 4) int64 (span a, span b) and ``tokens_end`` (d, 2) int64
(cumulative tokens, side a then side b); ``token_end`` (t,) int64 (cumulative UTF-8 bytes) into
``token_bytes`` (uint8)."""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from crp_core.analysis.scan import CHECK_CONFIG_FIELDS, CheckedPairs, PairSearch, SearchMethod, scan_config_key
from crp_core.config import CRPConfig
from crp_core.corpus.index import mask_digest
from crp_core.corpus.prepared import Corpus
from crp_core.records import ValueConflict, ValueDiff
from crp_core.stages.contradictions.identity import detector_identity
from crp_core.stages.contradictions.lexicon import PATTERNS
from crp_core.support.digest import content_digest
from crp_core.support.files import write_cache_file

#: the layout's version (part of the file name: another layout is another file)
LAYOUT = 1
#: checked-pair files a cache folder keeps: the most recently written or read
KEPT_SCAN_FILES = 8
#: the search methods a file may name
METHODS: tuple[SearchMethod, ...] = ("gram", "centroid-pruned", "rows")


def checked_path(corpus: Corpus, config: CRPConfig) -> Path | None:
    """Where the checked pairs of ``corpus`` under ``config`` persist; None without a cache folder."""
    if corpus.cache_dir is None:
        return None
    key = (
        LAYOUT,
        corpus.kb.fingerprint,
        corpus.fingerprint,
        mask_digest(corpus.retrievable),
        scan_config_key(config, CHECK_CONFIG_FIELDS),
        detector_identity(),
    )
    return Path(corpus.cache_dir) / "scans" / f"checked-v{LAYOUT}-{content_digest(repr(key), length=32)}.npz"


def save_checked(corpus: Corpus, config: CRPConfig, checked: CheckedPairs) -> Path | None:
    """Persist ``checked`` (made from ``corpus`` under ``config``) where :func:`load_checked` finds it; the
    path, or None without a cache folder or when it cannot be written (a warning says why)."""
    path = checked_path(corpus, config)
    if path is None:
        return None
    arrays = _arrays(checked)

    def write(fh: BinaryIO) -> None:
        np.savez(fh, allow_pickle=False, **arrays)

    if not write_cache_file(path, write, "scan's checked pairs"):
        return None
    _prune(path.parent, path)
    return path


def load_checked(corpus: Corpus, config: CRPConfig) -> CheckedPairs | None:
    """The checked pairs persisted for ``corpus`` under ``config``; None when there are none, or when the file
    is damaged (a warning names it; the caller scans again)."""
    path = checked_path(corpus, config)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            got = _checked(dict(z.items()), corpus)
    except Exception as exc:  # noqa: BLE001 - any damage means: scan again
        warnings.warn(
            f"the scan's checked pairs in {path} were ignored ({exc}); scanning again", RuntimeWarning, stacklevel=2
        )
        return None
    with contextlib.suppress(OSError):  # read now: the newest to keep (:func:`_prune`)
        os.utime(path)
    return got


def _prune(folder: Path, keep: Path) -> None:
    """Remove the checked-pair files of ``folder`` beyond the :data:`KEPT_SCAN_FILES` most recently written or
    read (``keep`` stays): another CKF, detector or check setting leaves its file behind."""

    def age(p: Path) -> float:
        try:
            return -p.stat().st_mtime
        except OSError:
            return 0.0

    for old in sorted(folder.glob("checked-v*.npz"), key=age)[KEPT_SCAN_FILES:]:
        if old != keep:
            with contextlib.suppress(OSError):
                old.unlink()


# ---- writing ----------------------------------------------------------------------------------------------
def _arrays(checked: CheckedPairs) -> dict[str, np.ndarray]:
    found = checked.found
    diffs = [d for _, _, vc in found for d in vc.diffs]
    sides = [side for d in diffs for side in (d.tokens_a, d.tokens_b)]
    tokens = [t.encode("utf-8") for side in sides for t in side]
    return {
        "pairs": np.asarray(checked.search.pairs, dtype=np.int64).reshape(-1, 2),
        "method": np.array(checked.search.method),
        "products": np.array(checked.search.products, dtype=np.int64),
        "search_ms": np.array(checked.search_ms, dtype=np.float64),
        "check_ms": np.array(checked.check_ms, dtype=np.float64),
        "rows": np.array([(a, b) for a, b, _ in found], dtype=np.int64).reshape(-1, 2),
        "learned": np.array([vc.learned for _, _, vc in found], dtype=bool),
        "patterns": np.array([_bits(vc.patterns) for _, _, vc in found], dtype=np.uint8),
        "diff_end": np.cumsum([len(vc.diffs) for _, _, vc in found], dtype=np.int64),
        "diff_pattern": np.array([PATTERNS.index(d.pattern) for d in diffs], dtype=np.uint8),
        "spans": np.array([(*d.span_a, *d.span_b) for d in diffs], dtype=np.int64).reshape(-1, 4),
        "tokens_end": np.cumsum([len(s) for s in sides], dtype=np.int64).reshape(-1, 2),
        "token_end": np.cumsum([len(t) for t in tokens], dtype=np.int64),
        "token_bytes": np.frombuffer(b"".join(tokens), dtype=np.uint8),
    }


def _bits(patterns: tuple[str, ...]) -> int:
    return sum(1 << PATTERNS.index(p) for p in patterns)


# ---- reading ----------------------------------------------------------------------------------------------
#: each array's dtype and number of dimensions
SCHEMA: dict[str, tuple[Any, int]] = {
    "pairs": (np.int64, 2),
    "method": (np.str_, 0),
    "products": (np.int64, 0),
    "search_ms": (np.float64, 0),
    "check_ms": (np.float64, 0),
    "rows": (np.int64, 2),
    "learned": (np.bool_, 1),
    "patterns": (np.uint8, 1),
    "diff_end": (np.int64, 1),
    "diff_pattern": (np.uint8, 1),
    "spans": (np.int64, 2),
    "tokens_end": (np.int64, 2),
    "token_end": (np.int64, 1),
    "token_bytes": (np.uint8, 1),
}


def _checked(z: dict[str, np.ndarray], corpus: Corpus) -> CheckedPairs:
    """The checked pairs of a file's arrays ``z``, or ``ValueError`` naming what is wrong."""
    _check_schema(z)
    n, f = corpus.n, z["rows"].shape[0]
    method = str(z["method"])
    if method not in METHODS:
        raise ValueError(f"unknown search method {method!r}")
    for name in ("pairs", "rows"):
        a = z[name]
        if a.shape[1] != 2 or (a.size and (a.min() < 0 or a.max() >= n)):
            raise ValueError(f"{name}: rows outside the CKF's {n} facts")
    if z["pairs"].size and not (z["pairs"][:, 0] < z["pairs"][:, 1]).all():
        raise ValueError("pairs: a pair not in row order")
    if z["learned"].shape != (f,) or z["patterns"].shape != (f,) or z["diff_end"].shape != (f,):
        raise ValueError("per-pair arrays of different lengths")
    if f and (z["patterns"].min() == 0 or z["patterns"].max() >= 1 << len(PATTERNS)):
        raise ValueError("patterns: an empty or unknown pattern set")
    d = _offsets(z["diff_end"], None, "diff_end")
    if z["diff_pattern"].shape != (d,) or z["spans"].shape != (d, 4) or z["tokens_end"].shape != (d, 2):
        raise ValueError("per-diff arrays of different lengths")
    if d and z["diff_pattern"].max() >= len(PATTERNS):
        raise ValueError("diff_pattern: an unknown pattern")
    t = _offsets(z["tokens_end"].reshape(-1), None, "tokens_end")
    _offsets(z["token_end"], t, "token_end")
    if (int(z["token_end"][-1]) if t else 0) != z["token_bytes"].size:
        raise ValueError("token_end: offsets past the token bytes")
    _check_spans(z, corpus)
    search = PairSearch(z["pairs"].copy(), method, int(z["products"]))
    return CheckedPairs(search, _found(z), float(z["search_ms"]), float(z["check_ms"]), from_cache=True)


def _check_schema(z: dict[str, np.ndarray]) -> None:
    for name, (dtype, ndim) in SCHEMA.items():
        a = z.get(name)
        if a is None:
            raise ValueError(f"no array {name!r}")
        if not np.issubdtype(a.dtype, dtype) or a.ndim != ndim:
            raise ValueError(f"{name}: {a.dtype} with {a.ndim} dimension(s), expected {np.dtype(dtype)} with {ndim}")


def _offsets(ends: np.ndarray, count: int | None, name: str) -> int:
    """The total of cumulative counts ``ends`` (non-decreasing, from 0 up), equal to ``count`` when given."""
    if ends.size and (ends[0] < 0 or (np.diff(ends) < 0).any()):
        raise ValueError(f"{name}: offsets out of order")
    total = int(ends[-1]) if ends.size else 0
    if count is not None and ends.size != count:
        raise ValueError(f"{name}: {ends.size} entries for {count}")
    return total


def _check_spans(z: dict[str, np.ndarray], corpus: Corpus) -> None:
    """Every diff's spans inside the texts of its pair (span a in fact a's text, span b in fact b's)."""
    spans = z["spans"]
    if not spans.size:
        return
    owner = np.repeat(np.arange(z["rows"].shape[0]), np.diff(z["diff_end"], prepend=0))
    ends = z["rows"][owner]
    lengths = np.array([[len(corpus.kb.facts[a].content), len(corpus.kb.facts[b].content)] for a, b in ends.tolist()])
    starts, stops = spans[:, [0, 2]], spans[:, [1, 3]]
    if (starts < 0).any() or (stops < starts).any() or (stops > lengths).any():
        raise ValueError("spans: a span outside its text")


def _found(z: dict[str, np.ndarray]) -> tuple[tuple[int, int, ValueConflict], ...]:
    blob = z["token_bytes"].tobytes()
    cuts = [0, *z["token_end"].tolist()]
    tokens = [blob[cuts[k] : cuts[k + 1]].decode("utf-8") for k in range(len(cuts) - 1)]
    side_cuts = [0, *z["tokens_end"].reshape(-1).tolist()]
    sides = [tuple(tokens[side_cuts[k] : side_cuts[k + 1]]) for k in range(len(side_cuts) - 1)]
    spans = z["spans"].tolist()
    diffs = [
        ValueDiff(PATTERNS[p], sides[2 * k], sides[2 * k + 1], (s[0], s[1]), (s[2], s[3]))
        for k, (p, s) in enumerate(zip(z["diff_pattern"].tolist(), spans, strict=True))
    ]
    diff_cuts = [0, *z["diff_end"].tolist()]
    out = []
    for k, ((a, b), learned, bits) in enumerate(zip(z["rows"].tolist(), z["learned"].tolist(), z["patterns"].tolist())):
        patterns = tuple(sorted(PATTERNS[j] for j in range(len(PATTERNS)) if bits >> j & 1))
        out.append((a, b, ValueConflict(patterns, tuple(diffs[diff_cuts[k] : diff_cuts[k + 1]]), learned)))
    return tuple(out)


__all__ = ["LAYOUT", "METHODS", "SCHEMA", "checked_path", "load_checked", "save_checked"]
