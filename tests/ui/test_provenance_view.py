"""The SDK provenance caption's Markdown (crp_ui.provenance.provenance_md), exactly: the fields present on
one line, the successor and the fields of the wrong type each on a line of their own, values inert."""

from __future__ import annotations

from crp_core import SdkProvenance
from crp_ui.provenance import provenance_md


def test_every_field():
    prov = SdkProvenance("win-1", None, 0.7169, 0, 4, "f-new", ("category",))
    assert provenance_md(prov) == (
        "SDK · window `win-1` · confidence 0\\.7169 · tier 0 \\(critical\\) · extraction stage 4 \\(relation "
        "triples\\)  \nsuperseded by `f-new`  \nwrong type\\, ignored\\: category"
    )


def test_only_wrong_types_and_nothing_set():
    assert provenance_md(SdkProvenance(invalid=("tier",))) == "SDK  \nwrong type\\, ignored\\: tier"
    assert provenance_md(SdkProvenance()) == "SDK · no field set"


def test_values_are_inert_and_cut():
    prov = SdkProvenance(source_window_id="a`b\nc", category="x" * 70, superseded_by="[l](javascript:x)")
    md = provenance_md(prov)
    assert md == ("SDK · window ``a`b c`` · category " + "x" * 59 + "…  \nsuperseded by `[l](javascript:x)`")
