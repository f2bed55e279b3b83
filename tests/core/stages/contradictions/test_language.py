"""Which facts read as another language than English (docs/decisions/languages.md): each rule of
``crp_core.stages.contradictions.language`` on sentences written for it, with near misses, the profile and
its note, and the blind corpora (tests/data/languages/) at their measured figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crp_core.model import Fact
from crp_core.stages.contradictions.language import (
    EXAMPLES,
    OTHER_LANGUAGES,
    OTHER_LATIN,
    fact_language,
    language_profile,
)
from crp_core.stages.contradictions.lexicon import COMMON_WORDS, FUNCTION_WORDS

CORPORA = Path(__file__).resolve().parents[3] / "data" / "languages"


@pytest.mark.parametrize(
    "text, language",
    [
        # function words of one language outnumber the English ones
        ("Der Zugang ist nur mit Ausweis möglich.", "German"),
        ("Le parking est gratuit le dimanche.", "French"),
        ("El acceso está cerrado durante las obras.", "Spanish"),
        ("Het loket is niet open op feestdagen.", "Dutch"),
        # English technical words do not make a sentence English
        ("Der Server startet mit dem Flag --verbose und Port 8080.", "German"),
        # another script: most letters, or a few with no English function word
        ("Вход только по пропускам.", "Cyrillic script"),
        ("Η είσοδος είναι δωρεάν.", "Greek script"),
        ("本店は月曜日休みです。", "Japanese"),
        ("本应用支持 iOS 和 Android 系统。", "Chinese characters"),
        ("서울역 3번 출구", "Korean (Hangul)"),
        # no English word at all, letters English has not
        ("Rökning förbjuden i hela byggnaden.", OTHER_LATIN),
        # English, with names, loanwords and terms of other languages
        ("The Rue de la Paix office opens at nine.", None),
        ("Los Angeles office closes at 6 pm.", None),
        ("Ingredients: crème fraîche and chives.", None),
        ("Señora Núñez chairs the committee.", None),
        ("The museum shop sells a catalogue in Russian (Каталог) too.", None),
        ("Weight: 1.2 kg", None),
        ("Bicycle parking: rear courtyard", None),
        # one function word of another language is not enough beside English ones
        ("The tour ends at the Place de la Concorde fountain.", None),
        # a sentence's first word, an article of another language, opens no name (German capitalises nouns)
        ("Das Büro ist am Freitag geschlossen.", "German"),
        ("Bitte warten. Das Update wird installiert.", "German"),
        # ... and alone it names no language: English names and titles opening with one stay English
        ("Das Boot is a 1981 film.", None),
        ("La Paz is the seat of government.", None),
        ("El Paso office opens at nine.", None),
    ],
)
def test_each_rule_and_its_near_misses(text, language):
    assert fact_language(text) == language


def test_no_listed_word_of_another_language_is_an_english_word():
    """A word English has too would count an English text as that language: none is listed."""
    for name, words in OTHER_LANGUAGES.items():
        assert not words & (FUNCTION_WORDS | COMMON_WORDS), name


def test_the_profile_counts_every_fact_and_names_the_first_ones():
    facts = [Fact(f"e{i}", "The gate opens at 9 am.") for i in range(3)]
    facts += [Fact(f"d{i}", "Das Tor ist ab 9 Uhr geöffnet und nicht vorher.") for i in range(EXAMPLES + 1)]
    facts += [Fact("r", "Ворота открываются в 9 утра.")]
    p = language_profile(facts)
    assert (p.n_facts, p.n_other) == (10, 7)
    assert dict(p.by_language) == {"German": 6, "Cyrillic script": 1}
    assert p.examples == ("d0", "d1", "d2", "d3", "d4")
    assert p.note == (
        "7 of 10 fact(s) do not read as English (German 6, Cyrillic script 1; e.g. d0, d1, d2, d3, d4, ...): the "
        "contradiction detector reads English, so a negation, a date or a changed name in another language is "
        "missed and its findings on them are incomplete"
    )
    assert language_profile(facts[:3]).note is None


def _corpus(name: str | Path) -> list[dict[str, str]]:
    with open(CORPORA / name, encoding="utf-8") as fh:  # an absolute path is read as it is
        return [json.loads(line) for line in fh if line.strip()]


#: per corpus: the English texts read as another language when the rules were frozen (holdout: five lists of
#: foreign dishes and an address, headed by one English word; docs/decisions/languages.md), and the other-language
#: texts recognised, of 200
MEASURED = {
    "dev.jsonl": ((), 164),
    "holdout.jsonl": (("M030", "M075", "M190", "M305", "M312"), 167),
    # labels and lists of foreign names headed by English words, the holdout's class
    "holdout2.jsonl": (("L2-018", "L2-040", "L2-157", "L2-159", "L2-161", "L2-253", "L2-348"), 149),
    "holdout3.jsonl": (("L3-036", "L3-291"), 165),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_blind_corpora_at_their_measured_figures(name):
    """Written blind (docs/decisions/languages.md): no English text is read as another language beyond the
    known ones (a warning about English facts would teach operators to ignore it), and no fewer texts of
    other languages are recognised than when measured."""
    rows = _corpus(name)
    wrong, found = MEASURED[name]
    assert tuple(r["id"] for r in rows if r["lang"] == "en" and fact_language(r["text"]) is not None) == wrong
    other = [r["text"] for r in rows if r["lang"] != "en"]
    assert len(other) == 200 and sum(fact_language(t) is not None for t in other) >= found


def test_the_detector_s_english_corpora_read_as_english_but_three_lists_of_names():
    """The detector's labelled pairs (tests/data/conflict_pairs/: dev, holdout, the blind batches and those in
    blind/scored/) are English. Of their texts (15,020 when this was written, at batch 72), two of blind batch 59
    (written after these rules were frozen) are named: a departure point given by Norwegian place names, and an
    examiner named with a "dan" grade; the class of the holdout's five (docs/decisions/languages.md). One text of
    batch 103 (still unread in blind/scored/, so not looked at) is named as well; the count is the language rules'
    figure on writing they never saw."""
    named = []
    count = 0
    for path in sorted((CORPORA.parent / "conflict_pairs").rglob("*.jsonl")):
        for row in _corpus(path):
            for text in (row[k] for k in ("a", "b") if k in row):
                count += 1
                if fact_language(text) is not None:
                    named.append(row["id"])
    assert count >= 15_020
    assert named == ["59-ent-03", "59-ent-09", "103-ent-08"]
