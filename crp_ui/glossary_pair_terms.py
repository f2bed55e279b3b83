"""The glossary's entries for what a conflict pair shows beyond arbitration (the Conflicts page, the before /
after story), as plain tuples ``(name, short, definition, cite, aliases)``: :mod:`crp_ui.glossary_terms` makes
them terms, after "contradictory pair". Static text written here (no data), safe to render as Markdown."""

from __future__ import annotations

PAIR_TERMS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    (
        "near conflict",
        "Two packed facts whose texts give different values at a cosine just below contradiction_similarity: "
        "never arbitrated, both reach the model.",
        "Stage 4 arbitrates only the pairs whose cosine is above contradiction_similarity (default 0.85). A pair of "
        "the envelope whose cosine lies within near_conflict_margin (default 0.05) below it, and whose texts the "
        "detector reads as a value conflict, is a near conflict: nothing suppresses either fact, and the Conflicts "
        "page's Envelope conflicts tab names the pair with its cosine and pattern and decides it there: a dismissal "
        "(not a conflict) silences it everywhere it is reported, an accept or override has it arbitrated. Lowering "
        "contradiction_similarity lets authority decide it in every run.",
        "SPEC-027 §2.2; docs/decisions/near-conflicts.md",
        ("near conflicts", "near_conflicts", "near-conflict"),
    ),
    (
        "gap mark (∅)",
        "In the two texts of a pair, ∅ stands where the other fact has a word this one lacks (most often a negation).",
        "The texts of a conflict pair are shown with the values that differ highlighted. When the difference is a "
        "word only one of them has (a 'not', 'no' or 'never'), the other text shows ∅ where that word would stand: "
        "'Glass jars are ∅accepted' beside 'Glass jars are not accepted'. Its hover names the pattern (for example "
        "NEGATION_FLIP); the JSON reports give the same place as an empty span.",
        "SPEC-027 §2.2; docs/decisions/detector.md; docs/reference/reports.md",
        ("∅", "gap mark", "gap"),
    ),
)
