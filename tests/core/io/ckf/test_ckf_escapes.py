"""Lone surrogates from JSON ``\\u`` escapes are refused in every string field, whatever the line around them;
lines without a ``\\u`` escape skip the Unicode checks and load the same facts (crp_core.io.ckf.facts.parse_fact
``escapes``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core.errors import CKFError
from crp_core.io.ckf import load_ckf_bytes
from crp_core.io.ckf.facts import LoadState, has_visible_char, parse_fact

GOOD = '{"fact_id": "g1", "content": "etcd listens on 2379"}'


def _jsonl(*lines: str) -> bytes:
    return "\n".join(lines).encode("utf-8")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"fact_id": "g\\ud800", "content": "x"}', "fact_id"),
        ('{"fact_id": "g2", "content": "bad \\udc80 text"}', "content"),
        ('{"fact_id": "g2", "content": "x", "source_id": "\\ud83d"}', "source_id"),
        ('{"fact_id": "g2", "content": "x", "community_label": "a\\udfff"}', "community_label"),
        ('{"fact_id": "g2", "content": "x", "metadata": {"k": ["\\ud800"]}}', "metadata"),
        ('{"fact_id": "g2", "content": "x", "metadata": {"\\udc00": 1}}', "metadata"),
    ],
)
def test_a_lone_surrogate_escape_is_refused_by_line_and_field(line, field):
    for name, data in (("f.jsonl", _jsonl(GOOD, line)), ("f.json", ("[" + GOOD + ",\n" + line + "]").encode())):
        with pytest.raises(CKFError) as ei:
            load_ckf_bytes(data, name)
        (p,) = ei.value.problems
        assert (p.line, p.field) == (2, field) and ("surrogate" in p.message or "Unicode" in p.message)


def test_escapes_that_are_not_surrogates_load_as_written():
    # a paired surrogate escape is one code point; "\\\\u" is a backslash and a "u", not an escape
    line = '{"fact_id": "g2", "content": "caf\\u00e9 \\ud83d\\ude00 C:\\\\users", "metadata": {"p": "\\\\ud800"}}'
    kb = load_ckf_bytes(_jsonl(GOOD, line), "f.jsonl")
    assert kb.facts[1].content == "café \U0001f600 C:\\users" and kb.facts[1].metadata == {"p": "\\ud800"}


_strings = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(
    fid=_strings.filter(lambda s: s.strip()),
    content=_strings,
    label=st.none() | _strings,
    meta=st.dictionaries(_strings, _strings | st.integers(), max_size=3),
)
def test_without_escapes_the_record_is_the_one_the_full_checks_give(fid, content, label, meta):
    obj = {"fact_id": fid, "content": content, "community_label": label, "metadata": meta}
    full = parse_fact(obj, 1, LoadState(), cells=False)
    fast = parse_fact(obj, 1, LoadState(), cells=False, escapes=False)
    assert fast.fact == full.fact and fast.errors == full.errors


@given(st.text(max_size=8))
def test_has_visible_char_is_any_character_that_draws(text):
    invisible = set("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")
    assert has_visible_char(text) == any(not c.isspace() and c not in invisible for c in text)


def test_load_gives_the_collector_back():
    import gc

    assert gc.isenabled()
    load_ckf_bytes(_jsonl(GOOD), "f.jsonl")
    assert gc.isenabled()
    with pytest.raises(CKFError):
        load_ckf_bytes(b"{", "f.jsonl")
    assert gc.isenabled()
