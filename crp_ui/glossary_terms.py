"""The glossary's entries: every term the dashboard shows, defined once, with the spec section it comes
from. Static text written here (no data), safe to render as Markdown; :mod:`crp_ui.glossary` reads it."""

from __future__ import annotations

from dataclasses import dataclass

from .glossary_pair_terms import PAIR_TERMS
from .glossary_session_terms import SESSION_TERMS


@dataclass(frozen=True)
class Term:
    """One glossary entry: ``name``, a one-line ``short`` form (tooltips), a paragraph, the spec section."""

    name: str
    short: str
    definition: str
    cite: str
    aliases: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """A stable slug for links and tests."""
        return "".join(c if c.isalnum() else "-" for c in self.name.lower()).strip("-")


TERMS: tuple[Term, ...] = (
    Term(
        "CDR",
        "Coverage-Differential Retrieval score: importance x max(relevance, residual pull) x novelty x "
        "recency x (1 - n-gram penalty).",
        "The score that ranks candidate facts. It rewards facts that are relevant to the question or to the work "
        "still to do (residual pull), that add something not already covered (novelty), that are not out of date "
        "(recency factor) and that do not repeat earlier answers (n-gram penalty), weighted by the fact's "
        "importance. The anchors of the envelope are the facts with the best CDR scores.",
        "SPEC-024 §2.2, SPEC-027 §3.3; docs/reference/pipeline.md §2",
        ("cdr_score", "CDR score"),
    ),
    Term(
        "relevance",
        "Cosine similarity between the fact and the query (0-1).",
        "How close a fact's embedding is to the query's embedding (cosine similarity). Stage 1 gathers the "
        "nearest facts for the query and each sub-query; relevance is always measured against the query.",
        "docs/reference/pipeline.md §1",
    ),
    Term(
        "relevance gate",
        "Facts with relevance below cdr_min_relevance (default 0.55) are scored and listed but never selected.",
        "A minimum relevance to the query: a candidate whose relevance is below cdr_min_relevance (default 0.55; "
        "the sidebar shows the value in force, and a scenario's own config can set another) is gated out: it is "
        "still scored and listed (role gated, with its relevance and the threshold), and never selected, as an "
        "anchor or in the backfill. Relevance is measured against the whole query, not each sub-query: on a "
        "small knowledge base or short facts a lower gate may be needed (the Tuning page sweeps it).",
        "SPEC-024 §2.6; docs/reference/pipeline.md §1",
        ("gated", "gate"),
    ),
    Term(
        "ResidualSet",
        "The sub-queries still to cover: the scenario's sub-queries minus those already addressed.",
        "The work that remains in a retrieval session: the sub-queries not yet addressed. It pulls facts towards "
        "what is still missing (residual pull) and is what fan-out splits between branches.",
        "SPEC-024 §3.3",
        ("residual set",),
    ),
    Term(
        "residual pull",
        "Best cosine between the fact and a sub-query of the ResidualSet.",
        "How strongly a fact serves the remaining work: its highest cosine with any sub-query still in the "
        "ResidualSet. CDR uses max(relevance, residual pull), so a fact off the main query but needed later "
        "still scores. It is 0 when the Coverage Set or the ResidualSet is empty.",
        "SPEC-024 §2.2, §2.7; docs/reference/pipeline.md §2",
        ("residual_pull",),
    ),
    Term(
        "Coverage Set",
        "What the session has already covered: entries with a depth weight.",
        "The topics earlier windows already addressed, each with a depth weight (how thoroughly). Novelty is "
        "measured against it. In a fan-out each branch reads a snapshot of it.",
        "SPEC-024 §3",
    ),
    Term(
        "coverage score",
        "Depth-weighted mean cosine between the fact and the Coverage Set entries.",
        "How much of a fact is already covered: the mean of its cosines with the Coverage Set entries, weighted "
        "by their depth (0 when the Coverage Set is empty).",
        "SPEC-024 §2.2, §2.3",
        ("coverage_score",),
    ),
    Term(
        "coverage penalty",
        "The coverage score clamped to at most coverage_penalty_cap (0.80).",
        "The part of the coverage score that is taken off novelty: clamp(coverage score, 0, 0.80), so that even "
        "a well-covered fact keeps some chance.",
        "SPEC-024 §2.2",
        ("coverage_penalty",),
    ),
    Term(
        "novelty",
        "max(1 - coverage penalty, min_novelty_floor 0.20): what the fact adds to what is covered.",
        "How new a fact is for this session: 1 for a fact unlike anything covered, down to the floor of 0.20 for "
        "one that repeats covered ground.",
        "SPEC-024 §2.2, §2.4",
    ),
    Term(
        "n-gram penalty",
        "min(0.80, 0.15 x the fact's word 6-grams found in earlier outputs).",
        "A guard against repeating what the model already wrote: each distinct six-word sequence the fact shares "
        "with a prior output costs 0.15, up to 0.80. CDR multiplies by (1 - penalty).",
        "SPEC-024 §5; docs/reference/pipeline.md §2",
        ("ngram_penalty", "n-gram overlap"),
    ),
    Term(
        "recency factor",
        "1.0 while fresh, falling while ageing to the stale floor at the TTL, the floor once expired.",
        "How current a fact is: 1.0 until half its TTL (fresh), then falling in a straight line (ageing) down to "
        "the stale floor at the TTL, and the stale floor once it is older than its TTL or marked STALE (expired). "
        "Timeless and "
        "user-provided facts without a TTL keep 1.0. It multiplies CDR and authority.",
        "SPEC-027 §3.2; docs/reference/pipeline.md §2",
        ("recency_factor", "recency"),
    ),
    Term(
        "TTL",
        "Time to live: how long a fact stays current (explicit, or its source type's default).",
        "The age at which a fact counts as expired: the fact's own ttl, or the default of its source type "
        "(news 30 days, official documentation 1 year, regulatory 5 years...). 'none' means it never expires.",
        "SPEC-027 §3.5; docs/reference/pipeline.md §2",
        ("ttl_days", "ttl"),
    ),
    Term(
        "age",
        "Days between the fact's modified_at (else ingested_at) and the run's now.",
        "How old a fact is at the time the run treats as now; a future timestamp counts as 0 (with a warning), "
        "an unknown one leaves the recency factor at 1.0.",
        "SPEC-027 §3.2; docs/reference/pipeline.md §2",
        ("age_days",),
    ),
    Term(
        "stale floor",
        "The recency factor of an expired or STALE fact (stale_floor, default 0.30).",
        "The lowest recency factor: given to a fact older than its TTL or with status STALE. It weights the fact "
        "down without removing it.",
        "SPEC-027 §3.2",
        ("stale_floor",),
    ),
    Term(
        "expired vs ageing",
        "Expired: age >= TTL or status STALE (factor at the floor). Ageing: past half its TTL, floor < factor < 1.",
        "Two different states the demo keeps apart. An expired fact is past its TTL (or marked STALE) and "
        "weighted at the stale floor; an ageing fact is past the fresh half of its TTL but still within it, so it "
        "is only partly weighted down (for example 0.875). Where a card or a count says 'stale facts', it counts "
        "the expired ones only. In the data (CSV, JSON) the ageing rule's id is 'decay' and the status rule's "
        "'stale_status'.",
        "SPEC-027 §3.2; docs/decisions/suites.md §3",
        ("expired", "ageing", "decay", "stale_status"),
    ),
    Term(
        "importance",
        "The fact's importance_weight, else its source type's default.",
        "How much a fact matters regardless of the query: an explicit importance_weight, or the default of its "
        "source type (regulatory 0.90, official documentation 0.80...). It multiplies CDR and authority.",
        "SPEC-009 §4.4; docs/reference/pipeline.md §2",
        ("importance_weight",),
    ),
    Term(
        "anchor",
        "A fact chosen by CDR rank: the core of the envelope.",
        "The top floor(0.7 x envelope_fact_budget) facts by CDR score. Graph expansion starts from them and "
        "packing orders them in the primacy-recency sandwich.",
        "SPEC-025 §2.2; docs/reference/pipeline.md §3",
    ),
    Term(
        "connector",
        "A fact chosen because it links two or more anchors in the similarity graph.",
        "A fact within a couple of hops of the anchors that bridges anchors not directly linked. Connectors fill "
        "the rest of the budget by connector score and sit next to the anchor they bridge.",
        "SPEC-025 §1.2, §2.4, §2.6",
    ),
    Term(
        "bridge value",
        "Anchor pairs a connector links that have no direct edge, x mean path weight.",
        "What a connector adds to the graph: the number of pairs of its nearby anchors (1-2 hops) that are not "
        "directly connected, times the mean edge weight of its strongest paths to them; 0 if it touches fewer "
        "than two anchors.",
        "SPEC-025 §2.4; docs/reference/pipeline.md §3",
        ("bridge_value",),
    ),
    Term(
        "CDGR",
        "Coverage-Differential Graph Retrieval: anchors by CDR, then connectors from the graph.",
        "Retrieval over the similarity graph of the facts: seed with anchors, expand to their neighbours, score "
        "connectors by bridge value, so multi-hop answers get the facts that link their parts.",
        "SPEC-025 §2",
    ),
    Term(
        "Fact Authority Resolution",
        "Of two contradicting facts, the one with the higher authority wins.",
        "SPEC-027's fix for contradictions: when two selected facts are very similar (cosine > 0.85) but give "
        "different values, the fact with the lower authority is suppressed and the decision is logged. Equal "
        "authority is a tie: both stay, with a NOTE block.",
        "SPEC-027 §2.3-2.5; docs/reference/pipeline.md §4",
        ("authority resolution", "conflict loser"),
    ),
    Term(
        "authority",
        "source authority x recency factor x importance.",
        "The number Fact Authority Resolution compares; every component is kept and shown.",
        "SPEC-027 §2.3",
    ),
    Term(
        "source authority",
        "A weight per source type (regulatory 0.90 ... unverified 0.70).",
        "How much a kind of source is trusted when facts disagree; a component of authority.",
        "SPEC-027 §2.3; docs/reference/pipeline.md §2",
        ("source_authority",),
    ),
    Term(
        "contradictory pair",
        "Two facts giving different values for the same thing, both handed to the model.",
        "A value-conflicting pair (a changed number, entity, negation, date or magnitude) with both facts in the "
        "envelope. Without SPEC-027 the model gets both silently; with SPEC-027 only ties remain, each with a "
        "NOTE block.",
        "SPEC-027 §2.1-2.2, SPEC-005 §5.3",
        ("contradiction", "value conflict"),
    ),
    *(Term(*entry) for entry in PAIR_TERMS),  # near conflicts and the gap mark of a pair's texts
    Term(
        "tie / NOTE block",
        "Equal authority: both facts stay, with a NOTE telling the model they conflict.",
        "When two contradicting facts have the same authority, neither is suppressed; the envelope carries a "
        "NOTE block naming both so the model treats them with caution. A tied pair is packed as a unit.",
        "SPEC-027 §2.5; docs/reference/pipeline.md §4, §2.8",
        ("tie", "NOTE block", "tied"),
    ),
    Term(
        "SDK provenance",
        "Where a fact came from in a crprotocol SDK deployment: window, category, confidence, tier, stage.",
        "The SDK's own fields of a fact, kept in its metadata when a snapshot is read (and in a CKF exported from "
        "one), shown under each fact of a conflict pair, on the selected fact and by the conflicts command. They "
        "say who wrote a fact and how, not whether it is true: SPEC-027 arbitrates on the source type, which a "
        "mapping file can derive from them. A field of the wrong type is named and left out.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
        ("sdk_provenance",),
    ),
    Term(
        "source window",
        "The SDK window (one dispatch of a session) whose text the fact was extracted from.",
        "The SDK runs a session as a series of windows, each a context handed to the model and its answer. A "
        "fact the SDK extracted from a model's answer carries that window's id: an answer written back as a "
        "fact shows here. Facts of one window share one origin.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
        ("source_window_id",),
    ),
    Term(
        "SDK category",
        "The kind of fact the SDK's extractor said it is (config, policy, ...): free text, as recorded.",
        "A label chosen by the SDK's extraction or by the application that stored the fact. crp-inspect does not "
        "interpret it; a source-type mapping rule can match it exactly, and so set the fact's authority.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
    ),
    Term(
        "SDK confidence",
        "How sure the SDK's extraction was of the fact: a number from 0 to 1, as recorded.",
        "The extractor's own score of its reading of the text. It is not SPEC-027 authority and no stage uses "
        "it: a confidently extracted fact can still be stale, or an earlier answer written back.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
        ("extraction confidence",),
    ),
    Term(
        "SDK tier",
        "The SDK's memory tier of the fact: 0 critical, 1 hot, 2 warm, 3 cold.",
        "Where the SDK kept the fact in its state store, which decides what it keeps close at hand, not what is "
        "true. Shown as recorded; never scored.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
    ),
    Term(
        "extraction stage",
        "The SDK extraction stage that produced the fact: 1 regex, 2 statistical, 3 named entities, "
        "4 relation triples, 5 discourse, 6 LLM-assisted.",
        "The SDK extracts facts in up to six stages, from patterns to a language model. 0 means none was "
        "recorded (a fact stored directly). A source-type mapping rule can match it.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
        ("extraction_stage",),
    ),
    Term(
        "superseded_by",
        "The fact that replaced this one in the SDK; such a fact is loaded STALE.",
        "The SDK marks a fact it replaced with its successor's id. crp-inspect loads it STALE (stale-floor "
        "recency) and compares the SDK's choice with SPEC-027's arbitration (the Conflicts page's SDK column). "
        "In a CKF crp-inspect exported, it can be an operator's decision: the fact's metadata.triage says.",
        "docs/decisions/sdk-snapshots.md; docs/reference/ckf.md",
        ("superseded by",),
    ),
    Term(
        "fan-out",
        "Running several retrieval branches in parallel, each on part of the remaining work.",
        "Splitting the ResidualSet between parallel branches. Done naively, the branches race on one shared "
        "Coverage Set and pick the same facts; SPEC-027 gives each branch its own partition and a read-only "
        "snapshot.",
        "SPEC-027 §1.1, §1.3",
        ("fanout", "fan-out width"),
    ),
    Term(
        "partition",
        "The disjoint group of ResidualSet sub-queries one fan-out branch is given.",
        "One sub-query per branch when there are no more sub-queries than branches, else k-means clusters of "
        "their embeddings. Partitions never overlap and cover the whole ResidualSet.",
        "SPEC-027 §1.3-1.4; docs/reference/pipeline.md §5",
    ),
    Term(
        "snapshot",
        "A read-only copy of the Coverage Set a branch scores against.",
        "What each partitioned branch reads: the parent Coverage Set frozen at dispatch; writing to it raises an "
        "error, so branches cannot see or disturb each other.",
        "SPEC-027 §1.5",
    ),
    Term(
        "fan-in dedup",
        "At fan-in, the same fact (or a cosine > 0.92 twin) picked by two branches is kept once.",
        "The merge step after fan-out: the branches' facts are united and cross-branch duplicates are reported "
        "and kept once.",
        "SPEC-027 §1.6; docs/reference/pipeline.md §5",
        ("fan-in", "dedup", "similarity"),
    ),
    Term(
        "fan-out duplicates",
        "Cross-branch duplicates found at fan-in: one per fact picked by several branches, one per pair of "
        "near-duplicates by cosine (above fanin_dedup_similarity; their values may still differ). Those the "
        "fan-in dedup does not remove reach the model.",
        "The one duplicate count every view shows (FanoutRun.duplicate_count). Some of the facts involved may "
        "not reach the envelope, so the facts flagged in an envelope can be fewer than the count.",
        "SPEC-027 §1.1, §1.6",
        ("duplicates", "duplicate"),
    ),
    Term(
        "Jaccard / overlap",
        "Shared facts / facts in either envelope (1 = the same set).",
        "How alike two envelopes are: the number of facts both contain divided by the number in either. 1.0 "
        "means the same facts, 0 nothing in common.",
        "docs/decisions/suites.md §3",
        ("jaccard", "overlap"),
    ),
    Term(
        "envelope",
        "The packed context handed to the model: facts in order, within the token budget.",
        "The output of retrieval: the chosen facts, one line each, ordered so the most important sit at the "
        "start and end, with NOTE blocks for ties, within token_budget.",
        "SPEC-003 §7; docs/reference/pipeline.md §6",
        ("tokens",),
    ),
    Term(
        "primacy/recency bands",
        "The first two positions (primacy) and the final block (recency) of the envelope.",
        "Models attend most to the start and end of a context, so packing puts the best anchors there (the "
        "primacy-recency sandwich); supporting facts and connectors go in the middle.",
        "SPEC-003 §7.4; docs/reference/pipeline.md §6",
        ("band", "primacy", "recency band", "tier"),
    ),
    Term(
        "must_include/must_exclude",
        "A scenario's labels: facts its envelope must contain / must not contain.",
        "Expectations a suite checks: recall is the share of must_include facts packed; a must_exclude fact "
        "packed is a leak.",
        "docs/decisions/suites.md §2",
        ("must_include", "must_exclude", "recall"),
    ),
    Term(
        "leak",
        "A must_exclude fact that reached the envelope.",
        "A fact a scenario says must not be handed to the model (for example a superseded or wrong one) that was "
        "packed anyway.",
        "docs/decisions/suites.md §3",
        ("leaks",),
    ),
    Term(
        "wrong winner",
        "A packed fact that loses an expected conflict.",
        "For a labelled conflict, the fact that should lose was packed (whether or not the right winner was "
        "retrieved).",
        "docs/decisions/suites.md §3",
        ("wrong_winners",),
    ),
    Term(
        "SPEC-024 only",
        "The older retrieval: no recency factor, no contradiction resolution, naive fan-out.",
        "The baseline of the before / after view: the same pipeline with the three SPEC-027 fixes switched off.",
        "SPEC-027 §1.1, §2.1, §3.1; docs/decisions/tuning.md",
        ("baseline", "before"),
    ),
) + tuple(Term(*entry) for entry in SESSION_TERMS)  # the Session page's, kept in their own module
