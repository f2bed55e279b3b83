"""The Fan-out page's stepper (SPEC-027 §1.1 T0-T3): each step of the partitioned and the naive run in
words, the naive step shown beside a partitioned one, and the frames of what a step holds.

Pure functions of the :class:`~crp_core.FanoutResult` the pipeline returned (``steps``, ``naive_steps``,
the runs' branches and duplicates): nothing is recomputed, only looked up and laid out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from crp_core import FANOUT_DUPLICATES, Corpus, CRPConfig, FanoutResult, FanoutRun, FanoutStep, Scenario

from .url_codec import parse_number

#: the stepper's URL parameter (1-based); one of ``url_codec.PAGE_PARAMS``, so the shell keeps it
URL_STEP = "step"

#: the time label of each step kind, in the style of SPEC-027 §1.1 (T0 read, T1 retrieve, T2 write, T3 merge)
STEP_TIME = {
    "parent": "T0",
    "partition": "T0",
    "snapshot": "T1",
    "retrieval": "T1",
    "additions": "T2",
    "merge": "T3",
    "dedup": "T3",
}


def step_time(step: FanoutStep) -> str:
    """T0..T3 of the step (the naive run carries its own label in ``detail.time``; 'Result' shows as T3)."""
    t = step.detail.get("time") if isinstance(step.detail, Mapping) else None
    if t:
        return "T3" if t == "Result" else str(t)
    return STEP_TIME.get(step.kind, "")


def actor(step: FanoutStep) -> str:
    """Who acts at this step: 'Branch k' or 'Parent'."""
    return "Parent" if step.branch is None else f"Branch {step.branch}"


def step_what(step: FanoutStep) -> str:
    """The step's title without the time / branch prefix (the row shows those separately)."""
    t = step.title
    for p in ("T0: ", "T1: ", "T2: ", "Result: "):
        if t.startswith(p):
            t = t[len(p) :]
    if step.branch is not None:
        for p in (f"Branch {step.branch}: ", f"branch {step.branch} "):
            if t.startswith(p):
                t = t[len(p) :]
    return t


def step_label(step: FanoutStep) -> str:
    """The compact timeline row: ``T<n> · Branch k · <what happened>`` (plain text)."""
    return f"{step_time(step)} · {actor(step)} · {step_what(step)}"


def naive_step_for(step: FanoutStep, naive_steps: Sequence[FanoutStep]) -> int:
    """The naive step shown beside a partitioned step: same phase, same branch.

    parent / partition / snapshot -> T0 (the naive branches read the shared set as it is); retrieval and
    additions of branch k -> the same of branch k; merge -> the last naive write; dedup -> the naive result.
    """
    if not naive_steps:
        return 0
    if step.kind in ("parent", "partition", "snapshot"):
        return 0
    if step.kind in ("retrieval", "additions"):
        for s in naive_steps:
            if s.kind == step.kind and s.branch == step.branch:
                return s.index
    if step.kind == "merge":
        adds = [s.index for s in naive_steps if s.kind == "additions"]
        return adds[-1] if adds else len(naive_steps) - 1
    return len(naive_steps) - 1


def chosen_by_several(run: FanoutRun) -> dict[str, tuple[int, ...]]:
    """Fact id -> the branches that chose it, for facts chosen by more than one branch."""
    by: dict[str, list[int]] = {}
    for b in run.branches:
        for fid in b.selected:
            by.setdefault(fid, []).append(b.branch)
    return {f: tuple(bs) for f, bs in by.items() if len(bs) > 1}


def duplicate_fact_ids(run: FanoutRun) -> frozenset[str]:
    """Every fact id named by a cross-branch duplicate of ``run`` (same fact or near-identical pair)."""
    return frozenset(run.duplicate_fact_ids)


def coverage_frame(step: FanoutStep, scenario: Scenario, config: CRPConfig) -> pd.DataFrame:
    """The Coverage Set visible at ``step``: one row per entry, ``added`` = new since the previous step.

    Depth and window are looked up, not computed: an addressed entry has the scenario's values, a branch
    addition has ``branch_depth_weight`` (what the branch writes, docs/reference/pipeline.md §5).
    """
    by_id = {sq.id: sq for sq in scenario.sub_queries}
    addressed = {a.id: a for a in scenario.addressed}
    added = set(step.added)
    rows = []
    for sid in step.coverage:
        a = addressed.get(sid)
        sq = by_id.get(sid)
        rows.append(
            {
                "entry": sid,
                "label": (sq.label or "") if sq else "",
                "depth_weight": float(a.depth_weight) if a else float(config.branch_depth_weight),
                "origin": "addressed" if a else "branch addition",
                "added": sid in added,
            }
        )
    return pd.DataFrame(rows, columns=["entry", "label", "depth_weight", "origin", "added"])


def coverage_tips(frame: pd.DataFrame) -> dict[str, str]:
    """Hover text of each Coverage Set chip: origin and depth weight (from :func:`coverage_frame`)."""
    return {
        r.entry: f"{r.origin}, depth {r.depth_weight:g}" + (f", label {r.label}" if r.label else "")
        for r in frame.itertuples(index=False)
    }


STEP_FACT_COLUMNS = (
    "fact_id",
    "also_chosen_by",
    "cdr_score",
    "relevance",
    "residual_pull",
    "novelty",
    "recency_factor",
    "content",
    "rank",
)


def step_facts_frame(
    step: FanoutStep, corpus: Corpus | None, *, duplicates: Mapping[str, Sequence[int]] | None = None
) -> pd.DataFrame:
    """The facts a retrieval step chose, with the branch's stored factors (partition-scoped relevance,
    residual pull, novelty against the snapshot / shared set, recency, CDR) and who else chose them."""
    scores = list(step.detail.get("scores", [])) if isinstance(step.detail, Mapping) else []
    dup = duplicates or {}
    rows = []
    for rank, sc in enumerate(scores, 1):
        fid = sc["fact_id"]
        fact = corpus.kb.get(fid) if corpus is not None else None
        others = [b for b in dup.get(fid, ()) if b != step.branch]
        rows.append(
            {
                "rank": rank,
                "fact_id": fid,
                "relevance": sc["relevance"],
                "residual_pull": sc["residual_pull"],
                "novelty": sc["novelty"],
                "recency_factor": sc["recency_factor"],
                "cdr_score": sc["cdr_score"],
                "also_chosen_by": ", ".join(f"branch {b}" for b in others),
                "content": fact.content if fact is not None else "",
            }
        )
    return pd.DataFrame(rows, columns=list(STEP_FACT_COLUMNS))


#: how long a fact's text is on a chip or in a table cell (the whole text is in the hover title)
SHORT_TEXT = 48
#: the two fates of a fan-in duplicate (SPEC-027 §1.6), as every view names them
REMOVED_AT_FAN_IN = "removed at fan-in"
REACHED_MODEL = "reached the model"


def short_text(text: object, limit: int = SHORT_TEXT) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    s = " ".join(("" if text is None else str(text)).split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def fact_texts(fan: FanoutResult, corpus: Corpus | None) -> dict[str, str]:
    """Fact id -> its content, for every fact either run chose (a fact missing from the corpus: its id)."""
    ids = dict.fromkeys(f for run in (fan.partitioned, fan.naive) for b in run.branches for f in b.selected)
    out = {}
    for fid in ids:
        fact = corpus.kb.get(fid) if corpus is not None else None
        out[fid] = fact.content if fact is not None else fid
    return out


def fact_tips(texts: Mapping[str, str]) -> dict[str, str]:
    """Hover text of a fact chip: its id, then its text."""
    return {fid: f"{fid}: {short_text(t, 240)}" for fid, t in texts.items()}


def fact_labels(texts: Mapping[str, str], limit: int = SHORT_TEXT) -> dict[str, str]:
    """What a fact chip shows: the fact's text, shortened; followed by its id where two facts' shortened
    texts read the same (two chips must not look like one fact twice)."""
    short = {fid: short_text(t, limit) for fid, t in texts.items()}
    seen = Counter(short.values())
    return {fid: label if seen[label] == 1 else f"{label} ({fid})" for fid, label in short.items()}


DEDUP_COLUMNS = ("fate", "facts", "kind", "branches", "similarity", "kept", "fact_ids")


def dedup_frame(run: FanoutRun, texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The cross-branch dedup report: one row per duplicate: its facts as (shortened) text, its fate at
    fan-in (:data:`REMOVED_AT_FAN_IN` or :data:`REACHED_MODEL`, read off the record), which branches, the
    fact kept, and the ids last."""
    tx = texts or {}
    rows = []
    for d in run.duplicates:
        rows.append(
            {
                "fate": REMOVED_AT_FAN_IN if d.removed_at_fan_in else REACHED_MODEL,
                "facts": " ~ ".join(short_text(tx.get(f, f)) for f in d.fact_ids),
                "kind": "same fact" if len(d.fact_ids) == 1 else "near-duplicates by cosine",
                "branches": ", ".join(str(b) for b in d.branches),
                "similarity": float(d.similarity),
                "kept": (d.kept or "-") if d.removed_at_fan_in else "every copy",
                "fact_ids": " ~ ".join(d.fact_ids),
            }
        )
    return pd.DataFrame(rows, columns=list(DEDUP_COLUMNS))


def duplicates_sentence(run: FanoutRun) -> str:
    """One run's duplicates in words, true at every width: how many reach the model, how many the fan-in
    dedup caught (SPEC-027 §1.6)."""
    n, reaching, removed = run.duplicate_count, run.reaching_model, run.removed_at_fan_in
    if not run.fan_in_dedup:
        return f"{reaching} of {n} duplicate(s) reach the model (the race has no fan-in dedup)"
    return f"{reaching} duplicate(s) reach the model; {removed} caught and removed at fan-in"


def dedup_report_text(run: FanoutRun) -> str:
    """The headline of a run's cross-branch dedup report: the duplicates and where they ended."""
    n, kept = run.duplicate_count, f"{len(run.merged)} distinct facts"
    if n == 0:
        return f"Cross-branch dedup report: 0 duplicates ({kept}); 0 reach the model."
    if not run.fan_in_dedup:
        return (
            f"Cross-branch dedup report: {n} duplicate(s), {run.reaching_model} reaching the model: the race "
            f"has no fan-in dedup ({kept})."
        )
    return (
        f"Cross-branch dedup report: {n} duplicate(s), {run.removed_at_fan_in} caught and removed at fan-in "
        f"(one copy kept each), {run.reaching_model} reaching the model ({kept})."
    )


def same_step(steps: Sequence[FanoutStep], kind: str, branch: int | None) -> tuple[int, str]:
    """The index of the step of ``kind`` for ``branch`` in ``steps`` (a run of another width), and a note
    when there is no such step: the same kind for the last branch there is, else step 1."""
    for s in steps:
        if s.kind == kind and s.branch == branch:
            return s.index, ""
    same_kind = [s for s in steps if s.kind == kind]
    if same_kind:
        last = same_kind[-1]
        return last.index, f"branch {branch} does not run at this width; showing branch {last.branch}"
    return 0, f"no {kind} step in this run; showing step 1"


def branches_frame(run: FanoutRun) -> pd.DataFrame:
    """One row per branch: its sub-queries and picks (naive: round-robin assignment)."""
    return pd.DataFrame(
        [
            {
                "branch": b.branch,
                "sub_queries": ", ".join(b.sub_queries),
                "selected": len(b.selected),
                "facts": ", ".join(b.selected),
            }
            for b in run.branches
        ],
        columns=["branch", "sub_queries", "selected", "facts"],
    )


def picks(run: FanoutRun) -> int:
    """Facts chosen over all branches, with repeats."""
    return sum(len(b.selected) for b in run.branches)


#: the comparison strip's duplicate measures: the fan-out duplicates split by their fate at fan-in
REACHING_MODEL = "duplicates reaching the model"
REMOVED = "duplicates removed at fan-in"
#: the comparison strip's measures: (name, how it is read off a run)
COMPARISON_MEASURES: tuple[tuple[str, Callable[[FanoutRun], int]], ...] = (
    (FANOUT_DUPLICATES, lambda r: r.duplicate_count),
    (REACHING_MODEL, lambda r: r.reaching_model),
    (REMOVED, lambda r: r.removed_at_fan_in),
    ("distinct facts covered", lambda r: len(r.merged)),
    ("coverage entries after merge", lambda r: int(r.coverage_depth)),
    ("facts chosen (with repeats)", picks),
)


def comparison_frame(fan: FanoutResult) -> pd.DataFrame:
    """The comparison strip: naive vs partitioned, read from the two runs.

    ``fan-out duplicates`` (``FanoutRun.duplicate_count``, the cross-branch duplicates found at fan-in, the
    count the before / after view shows; the strip states it in words, not as a card) splits into
    ``duplicates reaching the model``
    (``FanoutRun.reaching_model``) and ``duplicates removed at fan-in`` (``FanoutRun.removed_at_fan_in``);
    ``distinct facts covered`` = facts
    kept after the fan-in dedup (``merged``); ``coverage entries after merge`` = parent Coverage Set size
    after fan-in (``coverage_depth``); ``facts chosen`` = picks over all branches, repeats included.
    """
    rows = [
        {"measure": name, "naive": int(get(fan.naive)), "partitioned": int(get(fan.partitioned))}
        for name, get in COMPARISON_MEASURES
    ]
    return pd.DataFrame(rows, columns=["measure", "naive", "partitioned"])


def parse_step_param(value: object, n_steps: int) -> tuple[int, str]:
    """The URL ``step`` (1-based, as the page shows it) -> (0-based index, warning or ""): a value that is not
    a step of this run is ignored with the warning every link parameter gives (:func:`crp_ui.url_codec.parse_number`),
    and the stepper starts at step 1."""
    if value is None or n_steps <= 0:
        return 0, ""
    k, warning = parse_number(URL_STEP, str(value), 1, n_steps, integer=True)
    return (0 if k is None else int(k) - 1), warning
