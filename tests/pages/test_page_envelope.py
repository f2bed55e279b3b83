"""Envelope page: packed order, bands, connectors next to the anchors they bridge, NOTE blocks,
tokens, downloads."""

from __future__ import annotations

from tests.support.pages import expected_result, frame_with, metric, run_page, write_bridge_sample


def _open_table(at):
    """Open the packed-order table's expander and rerun, as a user clicking it would; the table is not
    built before (a closed expander's table would cost the browser a grid on every visit)."""
    from pages.envelope import TABLE_OPEN

    assert not [d for d in at.dataframe if "tokens" in d.value.columns]
    at.session_state[TABLE_OPEN + ".keep"] = True
    at.run()
    assert not at.exception
    return at


def test_envelope_order_tokens_and_note_block(ui_env):
    exp = expected_result(ui_env)
    at = _open_table(run_page("envelope"))
    table = frame_with(at, "position", "band", "tier", "tokens")
    assert list(table["fact_id"]) == [p.fact_id for p in exp.envelope.order]
    assert list(table["band"]) == [p.band for p in exp.envelope.order]
    assert list(table["tokens"]) == [p.tokens for p in exp.envelope.order]
    assert metric(at, f"tokens (budget {exp.envelope.token_budget})") == str(exp.envelope.tokens_used)
    assert metric(at, "NOTE blocks (ties)") == str(len(exp.envelope.notes))
    # the synthetic facts name different subjects ("Fact 3 about topic 0 ...", "Fact 9 ..."): no tie here;
    # NOTE blocks on the page are tested on the tied sample below (test_tie_group_*)
    texts = [t.value for t in at.text]
    for note in exp.envelope.notes:
        assert note in texts  # shown on its own, right after the later fact of the tied pair
    assert exp.envelope.text in texts  # the exact envelope text
    # no element of the frontend's large lazily loaded components (plotly, the code highlighter): a first
    # visit straight to the page paints as soon as the run ends
    assert not at.get("plotly_chart") and not at.code
    # token use as Streamlit progress bars: the whole envelope against the budget, then each band and the
    # NOTE blocks (their tokens as a share of the budget)
    bars = [e.proto for e in at.get("progress")]
    used, budget = exp.envelope.tokens_used, exp.envelope.token_budget
    assert bars[0].text == f"Token use: {used} / {budget}" and bars[0].value == int(100 * used / budget)
    packed = sum(p.tokens for p in exp.envelope.order)
    bands = sorted({p.band for p in exp.envelope.order}, key=["primacy", "middle", "recency"].index)
    assert [b.text.split(":")[0] for b in bars[1:]] == [f"{b} band" for b in bands] + (
        ["NOTE blocks"] if used > packed else []
    )
    if used > packed:  # the NOTE blocks' bar, when any NOTE was packed
        assert bars[-1].text == f"NOTE blocks: {used - packed} tokens"
    table_cfg = [d for d in at.dataframe if "tokens" in d.value.columns]
    assert table_cfg, "the packed-order table"
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download JSON report" in labels and "Download breakdown CSV" in labels
    assert [s.value for s in at.subheader][:1] == ["Primacy band (start)"]


def test_connector_is_shown_with_its_anchor(tmp_path, monkeypatch):
    d = write_bridge_sample(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    exp = expected_result(d)
    at = _open_table(run_page("envelope"))
    table = frame_with(at, "position", "band", "tier", "tokens")
    # A1 and A2 are the anchors (tied CDR): the primacy block (positions 1-2); C, the connector
    # bridging them, follows that block (docs/reference/pipeline.md §6)
    assert list(table["fact_id"]) == [p.fact_id for p in exp.envelope.order] == ["A1", "A2", "C"]
    assert table.loc[table["fact_id"] == "C", "bridges_anchor"].iloc[0] == "A1"
    # the connector's card sits under its arrow and anchor line, in the element of its band's cards
    (held,) = [m.value for m in at.markdown if 'class="crp-connector"' in m.value]
    assert "connector bridging anchor A1" in held and "<code>C</code>" in held
    assert metric(at, "connectors") == "1"
    # each score is named for its scale: an anchor's CDR, the connector's connector score (SPEC-027 §3.3)
    c = next(p for p in exp.envelope.order if p.fact_id == "C")
    connector_card = held[held.index('class="crp-connector"') :]
    assert "connector score" in connector_card and f"{c.score:.4f}" in connector_card
    (anchors,) = [m.value for m in at.markdown if "<code>A1</code>" in m.value]
    assert "<b>CDR</b>" in anchors and "connector score" not in anchors


def test_band_tokens_per_band_then_the_note_blocks():
    import pandas as pd

    from pages.envelope import band_tokens

    frame = pd.DataFrame(
        [
            {"position": 1, "fact_id": '<b>"x"</b>', "band": "primacy", "tokens": 30},
            {"position": 2, "fact_id": "y", "band": "recency", "tokens": 10},
            {"position": 3, "fact_id": "z", "band": "recency", "tokens": 5},
        ]
    )
    assert band_tokens(frame, 55) == [("primacy band", 1, 30), ("recency band", 2, 15), ("NOTE blocks", 0, 10)]
    assert band_tokens(frame, 45) == [("primacy band", 1, 30), ("recency band", 2, 15)]
    assert band_tokens(frame.iloc[0:0], 0) == []


def test_consecutive_fact_cards_are_one_markdown_element(ui_env):
    # each Markdown element costs the browser a render: the cards of one band between two NOTE blocks,
    # connectors included, are drawn as one element, in packed order, every card once
    from pages.envelope import notes_after

    exp = expected_result(ui_env)
    at = run_page("envelope")
    holders = [m.value for m in at.markdown if 'class="crp-fact"' in m.value]
    order = [p.fact_id for p in exp.envelope.order]
    shown = [fid for v in holders for fid in order if f"<code>{fid}</code>" in v]
    assert sorted(shown) == sorted(order) and sum(v.count('class="crp-fact"') for v in holders) == len(order)
    followed = {fid for fid in notes_after(exp) if fid}
    runs, band = 0, None
    for i, p in enumerate(exp.envelope.order):
        if p.band != band or i == 0 or order[i - 1] in followed:
            runs += 1
        band = p.band
    assert len(holders) == runs < len(order)


def _tie_page(tmp_path, monkeypatch, token_budget):
    from tests.support.tie_worlds import write_tie_sample

    d = write_tie_sample(tmp_path / "samples", n=5, token_budget=token_budget)
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    return expected_result(d), run_page("envelope")


def test_tie_group_cut_by_the_budget_is_listed_with_its_note(tmp_path, monkeypatch):
    """Five facts of 40 words, all tied (tests/support/tie_worlds.py), token_budget 400. Whole, the group
    needs 5 * 54 + 26 + 5 * 52 = 556; with k kept and the NOTE naming the rest 104 k + 52: k = 3 (364).
    The NOTE placed: 20 + 3 * 40 + 12 + 2 = 154 words -> 201 tokens; 3 * 54 + 201 = 363 used."""
    exp, at = _tie_page(tmp_path, monkeypatch, 400)
    env = exp.envelope
    (g,) = env.tie_groups
    assert len(env.order) == 3 and env.tokens_used == 363 and g.note_tokens == 201
    assert metric(at, "NOTE blocks (ties)") == "1" and metric(at, "facts packed") == "3"
    bars = [e.proto for e in at.get("progress")]  # the NOTE's tokens as a bar of their own, last
    assert bars[-1].text == f"NOTE blocks: {env.tokens_used - sum(p.tokens for p in env.order)} tokens"
    assert g.note in [t.value for t in at.text]  # the NOTE, naming the two left out, after the last packed fact
    assert g.note.endswith(f"left out of this envelope: {g.left_out[0]}, {g.left_out[1]}.")
    assert "Tie groups" in [s.value for s in at.subheader]
    table = frame_with(at, "group", "packed", "left out", "pairs covered")
    assert table.to_dict("records") == [
        {
            "group": 1,
            "facts": 5,
            "packed": ", ".join(g.packed),
            "left out": f"{g.left_out[0]} (budget), {g.left_out[1]} (budget)",
            "tied pairs": 10,
            "pairs covered": 3,
            "NOTE tokens": 201,
        }
    ]


def test_empty_envelope_says_why(tmp_path, monkeypatch):
    """token_budget 100: one fact and the NOTE naming the four others need 54 + 32 + 52 + 16 + 4 * 2 = 162."""
    from crp_ui import render

    exp, at = _tie_page(tmp_path, monkeypatch, 100)
    assert exp.envelope.order == ()
    (info,) = [i.value for i in at.info]
    assert info == render.md_escape(
        "The envelope is empty: none of the 5 selected facts fits token_budget 100 (the smallest needs 162 "
        "tokens, with its tie group's NOTE)"
    )
    table = frame_with(at, "group", "packed", "left out", "pairs covered")
    assert table["packed"].tolist() == [""] and table["pairs covered"].tolist() == [0]
