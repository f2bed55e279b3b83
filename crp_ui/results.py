"""What the session's inputs give: the prepared corpus of the active CKF and the pipeline run of the
active scenario, both with the operators' decisions in force (:mod:`crp_ui.decisions`) and both cached
(:mod:`crp_ui.cache`), so a rerun or a page switch never repeats the work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crp_core import Corpus, PipelineResult

from . import cache
from . import decisions as triage
from .ckf_state import active_ckf, active_corpus_key, get_ckf, get_ckf_label
from .config_state import get_config
from .scenario_state import get_now, get_scenario


def get_corpus(*, progress: bool = True, decisions: bool = True) -> Corpus | None:
    """The prepared corpus of the active CKF (embedded once, then cached).

    The active CKF's corpus is normally ready (a CKF becomes active when it is); otherwise (index
    parameters changed, or the corpus was evicted) the script waits for the background job with a
    progress bar (``progress=True``). With ``decisions`` (the default) the operators' triage statuses
    are applied (:func:`crp_ui.decisions.apply_decisions`); ``decisions=False`` gives the CKF as
    loaded. Returns None when no CKF is loaded; raises ``CRPError`` when the CKF cannot be prepared
    (or the decision database cannot be read).
    """
    kb = get_ckf()
    if kb is None:
        return None
    corpus = cache.prepared_corpus(kb, active_corpus_key(), get_config(), show_progress=progress, label=get_ckf_label())
    return triage.apply_decisions(corpus) if decisions else corpus


def corpus_ready() -> bool:
    """True when the active CKF's corpus is already prepared (nothing left to embed)."""
    kb = active_ckf()
    return kb is not None and cache.corpus_cached(active_corpus_key(), get_config(), kb)


def get_result(*, decisions: Mapping[str, Any] | None = None, decisions_key: str = "") -> PipelineResult | None:
    """The pipeline result for the active CKF, scenario, config and now (cached).

    ``decisions``: operator decisions for stage 4 (triage), with a ``decisions_key`` string that
    changes whenever they do (the cache key); by default the decisions in force in the triage
    database (:func:`crp_ui.decisions.pipeline_decisions`; their statuses come with the corpus).
    None when there is no CKF or scenario. Raises ``CRPError`` for input the pipeline refuses.
    """
    s = get_scenario()
    if s is None or get_ckf() is None:
        return None
    corpus = get_corpus()
    base = get_corpus(progress=False, decisions=False)
    if corpus is None or base is None:
        return None
    if decisions is None:
        decisions, decisions_key = triage.pipeline_decisions()
    known, known_key = triage.known_conflicts_in_force(base, get_config(), get_now())
    return cache.pipeline_result(
        corpus,
        s,
        get_config(),
        get_now(),
        decisions=decisions,
        decisions_key=decisions_key,
        known_conflicts=known,
        known_key=known_key,
    )
