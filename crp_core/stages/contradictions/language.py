"""Which facts the detector can read: its rules and lexicons are English (docs/decisions/languages.md).

A fact in another language is read as words the detector does not know: a negation ("nicht", "n'est pas"),
a weekday or a changed name in it is missed, so the facts are named to the person who runs a scan instead
of being scanned silently. A fact reads as another language when

* most of its letters are of another script, or it has no English function word and a few letters of one;
* at least :data:`MIN_FOREIGN_WORDS` of its words are function words of one other language
  (``crp_core/data/lexicon/other_languages.tsv``) and they outnumber its English function words;
* it has no English word at all (neither a function word nor a common word) and either a function word of
  another language or a word with letters English has not (``Rökning förbjuden``).

A capitalised word followed by another, and a particle between two capitalised words, belong to a name ("Los
Angeles", "Rue de la Paix") and count for no language; a sentence's first word opens no name when it is a function
word of another language ("Das Gerät ...": German capitalises its nouns).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from crp_core.model import Fact

from .lexicon import COMMON_STEMS, COMMON_WORDS, FUNCTION_WORDS, stem

#: a fact names another language when at least this many of its words are that language's function words
MIN_FOREIGN_WORDS = 2
#: a fact is of another script when more than this share of its letters are outside the Latin script
OTHER_SCRIPT_SHARE = 0.5
#: ... or (with no English function word) when at least this many of its letters are
MIN_SCRIPT_LETTERS = 3
#: a text with no English word is read as another language only from this many words outside names
MIN_PLAIN_WORDS = 2
#: what a text of a Latin script with no English word, no listed function word but letters English has not
#: (ä, ø, ł, ç, ...) reads as
OTHER_LATIN = "another language (Latin script)"
#: fact ids a profile keeps as examples (the count is exact)
EXAMPLES = 5

_WORD = re.compile(r"[^\W\d_]+")
_OTHER_LANGUAGES = Path(__file__).resolve().parents[2] / "data" / "lexicon" / "other_languages.tsv"


def _load_other_languages() -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    with open(_OTHER_LANGUAGES, encoding="utf-8") as fh:
        for line in fh:
            if line.strip() and not line.startswith("#"):
                name, words = line.rstrip("\n").split("\t")
                out[name] = frozenset(words.split()) - FUNCTION_WORDS
    return out


def _languages_of_words(languages: Mapping[str, frozenset[str]]) -> dict[str, tuple[str, ...]]:
    """Word -> the languages whose function word it is ("de": French, Spanish, Portuguese, ...)."""
    out: dict[str, tuple[str, ...]] = {}
    for name, words in languages.items():
        for w in words:
            out[w] = (*out.get(w, ()), name)
    return out


#: language name -> its function words (none of them an English function word)
OTHER_LANGUAGES: Mapping[str, frozenset[str]] = _load_other_languages()
_FOREIGN = _languages_of_words(OTHER_LANGUAGES)


def _other_script(text: str, english: bool) -> str | None:
    """The script ``text`` is written in when it is not Latin (``Cyrillic script``): most of its letters
    are of it, or (with no English function word) at least :data:`MIN_SCRIPT_LETTERS` are; else None."""
    scripts: Counter[str] = Counter()
    letters = 0
    for ch in text:
        if not ch.isalpha():
            continue
        letters += 1
        if ord(ch) < 0x250 or 0x1E00 <= ord(ch) <= 0x1EFF:
            continue  # Basic Latin to Latin Extended-B, Latin Extended Additional
        scripts[unicodedata.name(ch, "OTHER").split()[0]] += 1
    other = sum(scripts.values())
    if not other or (other <= OTHER_SCRIPT_SHARE * letters and (english or other < MIN_SCRIPT_LETTERS)):
        return None
    if scripts["HIRAGANA"] or scripts["KATAKANA"]:
        return "Japanese"  # kana, with or without kanji (the CJK ideographs Chinese writes with too)
    name = scripts.most_common(1)[0][0]
    return {"CJK": "Chinese characters", "HANGUL": "Korean (Hangul)"}.get(name, f"{name.title()} script")


def _sentence_starts(text: str, spans: list[tuple[int, int]]) -> set[int]:
    """Positions of the words that open a sentence: the first, and each after ``.``, ``!``, ``?`` or ``:``."""
    starts = set()
    for i, (begin, _end) in enumerate(spans):
        before = text[spans[i - 1][1] : begin].strip() if i else ""
        if not i or before[-1:] in {".", "!", "?", ":"}:
            starts.add(i)
    return starts


def _name_words(words: list[str], starts: set[int]) -> set[int]:
    """Positions of words that belong to a name: a capitalised word followed by another capitalised word,
    and a lower-case word between two capitalised ones. A sentence's first word is capitalised whatever it is:
    when it is a function word of another language it opens no name (German capitalises every noun: in
    ``Das Gerät ...`` the article is the sentence's, not a name's)."""
    caps = [w[:1].isupper() for w in words]
    inside = set()
    for i in range(len(words)):
        if i in starts and words[i].lower() in _FOREIGN:
            continue
        if caps[i] and i + 1 < len(words) and caps[i + 1]:
            inside.add(i)
        elif not caps[i] and 0 < i < len(words) - 1 and caps[i - 1] and caps[i + 1]:
            inside.add(i)
    return inside


def _english_word(low: str) -> bool:
    return low in COMMON_WORDS or stem(low) in COMMON_STEMS


def fact_language(text: str) -> str | None:
    """The language or script ``text`` reads as when it is not English (``"German"``, ``"Cyrillic script"``,
    :data:`OTHER_LATIN`), or None (English, or too little to tell)."""
    found = list(_WORD.finditer(text))
    words = [m.group() for m in found]
    lows = [w.lower() for w in words]
    if text.isascii() and _FOREIGN.keys().isdisjoint(lows):
        return None  # no function word of another language and no letter outside English: nothing to weigh
    english = sum(1 for w in lows if w in FUNCTION_WORDS and len(w) > 1)  # "i", "a": conjunctions elsewhere
    if not text.isascii():
        script = _other_script(text, english > 0)
        if script is not None:
            return script
    names = _name_words(words, _sentence_starts(text, [m.span() for m in found]))
    plain = [w for i, w in enumerate(lows) if i not in names and len(w) > 1 and w not in FUNCTION_WORDS]
    foreign: Counter[str] = Counter(lang for w in plain for lang in _FOREIGN.get(w, ()))
    top, n = foreign.most_common(1)[0] if foreign else (None, 0)
    if n >= MIN_FOREIGN_WORDS and n > english:
        return top
    if english or len(plain) < MIN_PLAIN_WORDS or any(_english_word(w) for w in plain):
        return None
    # no English word at all: one function word of another language, or words with letters English has not
    if top is not None:
        return top
    return OTHER_LATIN if any(not w.isascii() for w in plain) else None


@dataclass(frozen=True)
class LanguageProfile:
    """The facts of a knowledge base that do not read as English, by language or script."""

    n_facts: int
    n_other: int
    by_language: Mapping[str, int] = field(default_factory=dict)  # most facts first
    examples: tuple[str, ...] = ()  # the first EXAMPLES such fact ids, in CKF order

    @property
    def note(self) -> str | None:
        """One sentence for the person who runs a scan, or None when every fact reads as English."""
        if not self.n_other:
            return None
        langs = ", ".join(f"{name} {n}" for name, n in self.by_language.items())
        more = ", ..." if self.n_other > len(self.examples) else ""
        return (
            f"{self.n_other} of {self.n_facts} fact(s) do not read as English ({langs}; e.g. "
            f"{', '.join(self.examples)}{more}): the contradiction detector reads English, so a negation, a "
            "date or a changed name in another language is missed and its findings on them are incomplete"
        )


def language_profile(facts: Iterable[Fact]) -> LanguageProfile:
    """:class:`LanguageProfile` of ``facts`` (a knowledge base's, every status)."""
    counts: Counter[str] = Counter()
    examples: list[str] = []
    n = 0
    for f in facts:
        n += 1
        lang = fact_language(f.content)
        if lang is None:
            continue
        counts[lang] += 1
        if len(examples) < EXAMPLES:
            examples.append(f.fact_id)
    ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return LanguageProfile(n, sum(counts.values()), ordered, tuple(examples))
