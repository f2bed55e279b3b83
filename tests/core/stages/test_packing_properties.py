"""Properties of stage 6 packing (docs/reference/pipeline.md §6) under random inputs (Hypothesis).

Two levels: random ``PackItem`` lists straight into ``pack_envelope``, and random small pipelines
(corpora with random vectors, near-twin facts with a changed number and equal authority so that
tied pairs occur) through ``run_pipeline``. Both check: the best anchor at position 1; no connector
at positions 1-2, nor last when at least three anchors are packed (with two, positions 1-2 are
theirs and the connectors follow); NOTE blocks in the text == tie groups with a packed fact; the header's
unresolved count = the tied pairs whose two facts are packed; tie groups are the connected components of
the tied pairs, each with one NOTE listing its packed facts and naming those left out; every packed tied
fact listed by exactly one NOTE; an empty envelope only with a stated reason; tokens within the budget;
determinism.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.headers import CONFLICTS
from crp_core.pipeline import run_pipeline
from crp_core.records import Envelope
from crp_core.report import dumps, run_report
from crp_core.stages.packing import PackItem, pack_envelope, tier_of, word_counter
from crp_core.stages.tie_groups import LEFT_OUT_LEAD, LEFT_OUT_SHOWN, NOTE_START, note_header
from tests.support.factories import fact, make_corpus, make_scenario

NOW = datetime(2026, 6, 1, tzinfo=UTC)
WORDS = [
    "etcd",
    "port",
    "client",
    "peer",
    "cluster",
    "state",
    "default",
    "is",
    "the",
    "uses",
    "on",
    "kubernetes",
    "api",
    "server",
]


def check_layout(env: Envelope, role: dict[str, str], score: dict[str, float], bridges: dict[str, set[str]]) -> None:
    """The order rules of docs/reference/pipeline.md §6 on one envelope (ids -> role / score / bridged anchor ids)."""
    order = [p.fact_id for p in env.order]
    packed_anchors = [f for f in order if role[f] == "anchor"]
    if not order:
        return
    # best anchor at position 1, every anchor tiered on CDR / best anchor CDR, connectors untiered
    assert role[order[0]] == "anchor"
    best = max(score[f] for f in packed_anchors)
    assert score[order[0]] == best
    for p in env.order:
        if p.role == "connector":
            assert p.tier is None and p.band == "middle"
        else:
            assert p.tier == tier_of(score[p.fact_id] / best if best > 0 else 1.0)
    # connectors: never at positions 1-2, never last once three anchors are packed, each with two
    # packed bridged anchors, connectors side by side in score order
    conn_pos = [i for i, f in enumerate(order) if role[f] == "connector"]
    event(f"connectors packed: {min(len(conn_pos), 2)}+, anchors packed: {min(len(packed_anchors), 3)}+")
    assert all(i >= 2 for i in conn_pos)
    if len(packed_anchors) >= 3:
        assert role[order[-1]] == "anchor"
    for i in conn_pos:
        assert len(bridges[order[i]] & set(packed_anchors)) >= 2
        if i + 1 < len(order) and role[order[i + 1]] == "connector":
            assert score[order[i]] >= score[order[i + 1]]
    assert env.tokens_used <= env.token_budget


def _connected(members: tuple[str, ...], pairs: tuple[tuple[str, str], ...]) -> bool:
    reach, todo = {members[0]}, [members[0]]
    while todo:
        f = todo.pop()
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                if x == f and y not in reach:
                    reach.add(y)
                    todo.append(y)
    return reach == set(members)


def check_ties(env: Envelope, ties: list[tuple[str, str]], offered: set[str]) -> None:
    """The tie-group rules of docs/reference/pipeline.md §6 on one envelope (``ties``: the distinct tied
    pairs whose facts were both offered)."""
    packed = {p.fact_id for p in env.order}
    groups = env.tie_groups
    # the groups are the connected components of the tied pairs
    assert sorted(f for g in groups for f in g.members) == sorted({f for t in ties for f in t})
    assert sorted(p for g in groups for p in g.pairs) == sorted(tuple(sorted(t)) for t in ties)
    for g in groups:
        assert _connected(g.members, g.pairs)
        assert sorted(g.packed + g.left_out) == sorted(g.members) and len(g.left_out) == len(g.left_out_reasons)
        assert set(g.packed) <= packed and not set(g.left_out) & packed
        assert (g.note is None) == (not g.packed)
        if g.note is not None:  # it lists its packed facts in envelope order and names every one left out
            order = [p.fact_id for p in env.order if p.fact_id in g.packed]
            assert list(g.packed) == order and g.note.startswith(note_header(len(g.packed)))
            assert (LEFT_OUT_LEAD in g.note) == bool(g.left_out)
            if g.left_out:
                assert all(f in g.note.splitlines()[-1] for f in g.left_out[:LEFT_OUT_SHOWN])
    # every packed tied fact is listed by exactly one NOTE, which is in the text
    for f in packed:
        listing = [g for g in groups if f in g.packed]
        assert len(listing) <= 1
        if any(f in t for t in ties):
            assert len(listing) == 1 and listing[0].note in env.text
    # one NOTE per group with a packed fact, in text order
    with_note = [g for g in groups if g.packed]
    assert tuple(g.note for g in with_note) == env.notes
    assert len(env.notes) == env.text.count(NOTE_START)
    positions = [env.text.index(n) for n in env.notes]
    assert positions == sorted(positions)
    # a tied pair is covered by its group's NOTE (both facts packed) or listed as dropped
    dropped = [frozenset((p.fact_a, p.fact_b)) for p in env.dropped_pairs]
    assert len(dropped) == len(set(dropped))
    covered = 0
    for a, b in ties:
        if a in packed and b in packed:
            assert env.note_covering(a, b) is not None and frozenset((a, b)) not in dropped
            covered += 1
        else:
            assert frozenset((a, b)) in dropped
    assert covered == sum(len(g.packed_pairs) for g in groups)
    assert len(dropped) == len(ties) - covered
    # an envelope is empty only with a stated reason; a packed one has none (the pipeline also names why
    # nothing was offered: no candidate, none past the gate, ...)
    assert env.empty_reason is None if env.order else (env.empty_reason is not None or not offered)
    cut = sum(1 for g in groups if g.packed and g.left_out)
    event(f"tie groups: {'some' if with_note else 'none'} packed, {'some' if cut else 'none'} cut")


# ---- random PackItem lists --------------------------------------------------------------------------
@st.composite
def pack_inputs(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_anchor = draw(st.integers(0, 9))
    n_conn = draw(st.integers(0, 6))
    n = n_anchor + n_conn + 2  # two rows never offered: bridged anchors that are absent
    # CDR scores, with repeats (ties in score order are broken by row)
    items = [PackItem(i, "anchor", float(rng.choice([rng.uniform(0, 1), 0.5]))) for i in range(n_anchor)]
    absent = [n - 2, n - 1]
    for j in range(n_conn):
        pool = list(range(n_anchor)) + (absent if rng.random() < 0.3 else [])
        if len(pool) < 2:
            pool = pool + absent
        k = int(rng.integers(2, min(4, len(pool)) + 1))
        bridged = tuple(int(x) for x in rng.choice(pool, size=k, replace=False))
        items.append(PackItem(n_anchor + j, "connector", float(rng.uniform(0, 20)), bridged))
    rows = [it.row for it in items]
    ties = []
    for _ in range(int(rng.integers(0, 7))):
        if len(rows) >= 2:
            a, b = (int(x) for x in rng.choice(rows, size=2, replace=False))
            ties.append((a, b))
    tokens = rng.integers(1, 30, size=n).tolist()
    # from a budget too small for anything to one that holds every fact and NOTE
    budget = 1 + int(rng.uniform(0.1, 1.4) * (sum(tokens) + 2 * n + 40 * len(ties)))
    order = rng.permutation(len(items)).tolist()
    return items, ties, tokens, budget, order


@settings(max_examples=300, deadline=None)
@given(pack_inputs())
def test_pack_envelope_properties(inp):
    items, ties, tokens, budget, perm = inp
    n = len(tokens)
    facts = [fact(f"r{i}", f"content {' '.join(['w'] * (i % 4))} of r{i}") for i in range(n)]
    corpus = make_corpus(facts, np.eye(n), token_counts=tokens)
    cfg = CRPConfig(token_budget=budget)
    env = pack_envelope(corpus, items, tied_pairs=ties, config=cfg, count_tokens=word_counter)

    def fid(r):
        return f"r{r}"

    role = {fid(it.row): it.role for it in items}
    score = {fid(it.row): it.score for it in items}
    bridges = {
        fid(it.row): {fid(b) for b in it.bridges if b < len(items) and items[b].role == "anchor"} for it in items
    }
    check_layout(env, role, score, bridges)
    distinct = [tuple(sorted(p)) for p in dict.fromkeys(frozenset((fid(a), fid(b))) for a, b in ties)]
    check_ties(env, distinct, set(role))
    # tokens: fact lines plus the NOTE blocks actually in the text, each as its group records it
    note_tokens = int(word_counter(list(env.notes)).sum()) if env.notes else 0
    assert env.tokens_used == sum(p.tokens for p in env.order) + note_tokens
    assert [g.note_tokens for g in env.tie_groups if g.packed] == word_counter(list(env.notes)).tolist()
    # every offered fact is packed or left out for a stated reason, once
    left = list(env.dropped_for_budget) + list(env.dropped_unbridged)
    assert sorted(left + [p.fact_id for p in env.order]) == sorted(role)
    # deterministic, and independent of the order the items are offered in
    again = pack_envelope(corpus, [items[i] for i in perm], tied_pairs=ties, config=cfg, count_tokens=word_counter)
    assert again == env


# ---- random pipelines ---------------------------------------------------------------------------
@st.composite
def worlds(draw):
    """Facts on 2-4 orthogonal topics: one topic (anchor material) or a mix of two (bridges between
    topics with no direct edge), plus near-twins with a changed number and equal authority (ties)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dim = 8
    k = int(rng.integers(2, 5))
    topics = np.linalg.qr(rng.normal(size=(dim, dim)))[0][:k]
    n = draw(st.integers(8, 24))
    vecs, facts = [], []
    for i in range(n):
        if rng.random() < 0.5:
            v = topics[rng.integers(k)]
        else:
            a, b = rng.choice(k, 2, replace=False)
            v = topics[a] + topics[b]
        vecs.append(v / np.linalg.norm(v) + float(rng.uniform(0.05, 0.4)) * rng.normal(size=dim) / np.sqrt(dim))
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(4, 10))))
        facts.append(
            fact(
                f"f{i}",
                f"{words} value {int(rng.integers(1, 9))}",
                modified_at=NOW - timedelta(days=float(rng.uniform(0, 800))),
                source_type=str(rng.choice(["official_documentation", "community", "regulatory"])),
            )
        )
    sources = rng.integers(0, n, size=2)  # twins of one or two facts: ties that share a fact form groups
    for t in range(int(rng.integers(0, 6))):
        src = int(rng.choice(sources))
        f0 = facts[src]
        facts.append(
            fact(
                f"t{t}",
                f0.content.rsplit(" ", 1)[0] + f" {int(rng.integers(10, 99))}",
                modified_at=f0.modified_at,
                source_type=f0.source_type,
            )
        )
        vecs.append(vecs[src] + 0.15 * rng.normal(size=dim) / np.sqrt(dim))
    query = topics[: int(rng.integers(1, k + 1))].sum(axis=0)
    cfg = CRPConfig(
        envelope_fact_budget=int(rng.integers(3, 12)),
        token_budget=int(rng.integers(20, 400)),
        graph_retrieval=bool(rng.random() < 0.85),
        graph_edge_min=float(rng.uniform(0.4, 0.7)),
        cdr_min_relevance=float(rng.uniform(0.0, 0.6)),
    )
    return facts, np.array(vecs), query, cfg


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_pipeline_packing_properties(world):
    facts, vecs, centre, cfg = world
    corpus = make_corpus(facts, vecs, cfg)
    scen = make_scenario(centre, now=NOW)
    r = run_pipeline(corpus, scen, cfg)
    env = r.envelope
    kb = corpus.kb
    cdr_of = {kb.facts[int(i)].fact_id: float(s) for i, s in zip(r.cdr.idx, r.cdr.cdr_score)}
    role = {p.fact_id: p.role for p in env.order}
    score = {p.fact_id: (cdr_of[p.fact_id] if p.role == "anchor" else p.score) for p in env.order}
    assert all(p.score == score[p.fact_id] for p in env.order)  # anchors carry their stage-2 CDR
    conn = r.cdgr.connectors
    bridges: dict[str, set[str]] = {}
    for i, row in enumerate(conn.idx.tolist()):
        bridges[kb.facts[row].fact_id] = {kb.facts[x].fact_id for pair in conn.bridged_pairs[i] for x in pair}
    check_layout(env, role, score, bridges)
    tied = [(p.fact_a, p.fact_b) for p in r.resolution.pairs if p.tied and not p.skipped]
    check_ties(env, tied, {kb.facts[x].fact_id for x in np.asarray(r.resolution.selected).tolist()})
    # the header and the envelope text agree: unresolved = the tied pairs the NOTE blocks cover
    header = r.headers[CONFLICTS]
    unresolved = int(header.split("unresolved=")[1]) if "unresolved=" in header else 0
    packed = {p.fact_id for p in env.order}
    assert unresolved == sum(1 for a, b in tied if a in packed and b in packed)
    assert unresolved == sum(len(g.packed_pairs) for g in env.tie_groups)
    assert len(env.notes) == sum(1 for g in env.tie_groups if g.packed)
    assert int(header.split(";")[0]) == r.resolution.detected - (len(tied) - unresolved)
    # an empty envelope while facts passed the gate: its reason is a warning too
    if not env.order and r.candidates.passed_gate.any():
        assert env.empty_reason is not None and env.empty_reason in r.warnings
    # no suppressed fact packed; no connector near-duplicate of an anchor chosen
    suppressed = {kb.facts[int(x)].fact_id for x in np.asarray(r.resolution.suppressed).tolist()}
    assert suppressed.isdisjoint(role)
    near = {int(x) for x, _, _ in r.cdgr.connector_near_duplicates}
    assert near.isdisjoint(r.cdgr.selected_connectors.tolist())
    assert env.tokens_used <= cfg.token_budget
    # deterministic, down to the bytes of the JSON report
    assert dumps(run_report(run_pipeline(corpus, scen, cfg))) == dumps(run_report(r))
