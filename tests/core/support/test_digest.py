"""Digest.update_rows: the digest of the rows' concatenation, whatever the number of rows per part."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core.support import digest
from crp_core.support.digest import Digest


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6), max_size=40), st.integers(1, 5))
def test_rows_in_parts_are_the_digest_of_their_concatenation(rows, per_part):
    expected = hashlib.sha256("".join(rows).encode("utf-8")).hexdigest()
    one_by_one = Digest()
    for r in rows:
        one_by_one.update(r)
    old = digest.ROWS_PER_PART
    digest.ROWS_PER_PART = per_part
    try:
        assert Digest().update_rows(iter(rows)).hex() == expected == one_by_one.hex()
    finally:
        digest.ROWS_PER_PART = old


def test_surrogates_pass_only_when_asked():
    rows = ["a\ud800", "b"]
    assert Digest().update_rows(rows, "surrogatepass").hex() == hashlib.sha256(b"a\xed\xa0\x80b").hexdigest()
    with pytest.raises(UnicodeEncodeError):
        Digest().update_rows(rows)
