"""Graph retrieval (CDGR, SPEC-025) of one run: anchors and connectors as a network with
edge weights and bridge values; selecting a connector shows which anchor pairs it bridges. The
run's contradiction pairs are drawn as edges between their members; facts stage 4 suppressed and
facts an operator re-marked are marked (legend), and so are they in the tables."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from crp_core import CRPError, PipelineResult, headers
from crp_ui import breakdown, charts, decisions, render, shell, state, tables

K = "crp.page.graph."
#: key of the drawn edges' table expander (closed at first, kept for the session; tests open it)
EDGES_OPEN = K + "edges_open"


def _on_connector(key: str) -> None:
    state.select_fact(state.recall(key))


def operator_statuses() -> dict[str, str]:
    """fact id -> the status an operator set, for the facts whose status differs from the CKF's."""
    kb = state.get_ckf()
    try:
        ds = decisions.decision_set()
    except CRPError:
        return {}
    if kb is None:
        return {}
    return {fid: new for fid, (_old, new) in decisions.applied_summary(ds, kb).remarked.items()}


def _metrics(result: PipelineResult, conns: pd.DataFrame) -> None:
    cdgr, config = result.cdgr, result.config
    c = st.columns(5)
    c[0].metric(
        "anchors",
        len(cdgr.anchors) + len(cdgr.extra_anchors),
        help=f"{len(cdgr.extra_anchors)} extra anchor(s) took unused connector slots",
    )
    c[1].metric("connectors selected", len(cdgr.selected_connectors))
    c[2].metric("bridging candidates", len(conns), help="connector candidates with bridge value > 0")
    c[3].metric(
        "walk candidates",
        len(cdgr.connectors.idx),
        help=f"connector candidates: facts within max_hops = {config.max_hops} of an anchor",
    )
    c[4].metric("bridge score", result.headers.get(headers.BRIDGE, "-"), help=f"the {headers.BRIDGE} header")


def _connector_picker(ids: list[str], current: str | None) -> str | None:
    """The connector select box (a click on a node selects too); the selected fact when it is one."""
    pick = current if current in ids else None
    wkey = f"{K}connector.{current}"
    st.selectbox(
        "Connector",
        ids,
        index=ids.index(pick) if pick in ids else None,
        key=wkey,
        format_func=render.plain,
        on_change=_on_connector,
        args=(wkey,),
        placeholder="choose a connector (or click a node)",
        help="Connector candidates with bridge value > 0, selected ones first.",
    )
    return pick


def _clicked(event: object, current: str | None) -> None:
    """A node clicked on the network becomes the selected fact (the app reruns)."""
    points = getattr(getattr(event, "selection", None), "points", None) or []
    for p in points:
        fid = p.get("customdata") if isinstance(p, dict) else None
        if isinstance(fid, list):
            fid = fid[0] if fid else None
        if fid and fid != current:
            state.select_fact(str(fid))
            st.rerun()


def _contradictions(nodes: pd.DataFrame, contra: pd.DataFrame) -> None:
    n_sup = int(nodes["suppressed"].sum())
    n_op = int(nodes["operator_status"].astype(bool).sum())
    if len(contra) or n_op:
        st.caption(
            f"{len(contra)} contradiction pair(s) drawn, {n_sup} suppressed fact(s), "
            f"{n_op} operator-marked fact(s) among the nodes."
        )
        if len(contra):
            render.dataframe(contra, hide_index=True, width="stretch", key=K + "contradictions")


def _selected_connector(result: PipelineResult, row: pd.Series, pick: str, marks: dict[str, str]) -> None:
    config = result.config
    st.subheader("Selected connector")
    m = st.columns(5)
    m[0].metric("bridge value", f"{row['bridge_value']:.4f}")
    m[1].metric("connector score", f"{row['connector_score']:.4f}")
    m[2].metric("hops to nearest anchor", int(row["hop_distance"]))
    m[3].metric("mean path weight", f"{row['mean_path_weight']:.4f}")
    m[4].metric("selected", "yes" if row["selected"] else "no")
    fact = result.corpus.kb.get(pick)
    assert fact is not None  # an id of this run's corpus
    breakdown.fact_card(fact)
    st.markdown(
        f"Touched anchors (graph distance 1 or 2): {render.md_escape(', '.join(row['touched_anchors']) or '-')}"
    )
    pairs = list(row["bridged_pairs"])
    st.markdown(f"**Bridged anchor pairs** (touched anchors with no direct edge): {len(pairs)}")
    bp = tables.with_marks(
        tables.with_marks(tables.bridged_pairs_frame(result, pick), marks, column="anchor_a", name="mark_a"),
        marks,
        column="anchor_b",
        name="mark_b",
    )
    render.dataframe(bp, hide_index=True, width="stretch", column_config=breakdown.column_config(bp), key=K + "pairs")
    st.caption(
        "bridge value = (bridged pairs) × (mean weight of the strongest shortest paths to the "
        "touched anchors) (SPEC-025 §2.4); connector score = bridge value × novelty × recency × "
        f"max(relevance, {config.min_connector_relevance:g})."
    )


def _selected_node(result: PipelineResult, nodes: pd.DataFrame, fid: str) -> None:
    """A drawn fact that is not a connector candidate (an anchor): its card."""
    node = nodes[nodes["fact_id"] == fid].iloc[0]
    st.subheader("Selected fact")
    score = "" if pd.isna(node["cdr_score"]) else f" · CDR score {node['cdr_score']:.4f}"
    st.caption(f"{render.md_escape(node['kind'])}{score}; its score step by step is on the Score breakdown page.")
    fact = result.corpus.kb.get(fid)
    assert fact is not None  # a node of this run's corpus
    breakdown.fact_card(fact)


def _candidates(conns: pd.DataFrame, marks: dict[str, str]) -> None:
    st.subheader("Connector candidates (bridge value > 0)")
    if not len(conns):
        st.info("No connector candidate bridges two anchors in this run.")
        return
    shown = tables.with_marks(conns.drop(columns=["touched_anchors"]), marks)
    shown["bridged_pairs"] = [", ".join(f"{a}-{b}" for a, b in ps) for ps in shown["bridged_pairs"]]
    cfg = breakdown.column_config(shown)
    cfg["mark"] = st.column_config.TextColumn(
        width=100, help="suppressed: lost a contradiction in stage 4; <STATUS> (operator): a status an operator set"
    )
    render.dataframe(shown, hide_index=True, width="stretch", column_config=cfg, key=K + "conns")


def _given_edges(given: pd.DataFrame, nodes: pd.DataFrame) -> None:
    """The edges an SDK snapshot gave (the producer's own edges, not similarity edges)."""
    if not len(given):
        return
    drawn = set(nodes["fact_id"].tolist())
    shown_given = given.assign(drawn=[a in drawn and b in drawn for a, b in zip(given["a"], given["b"])])
    st.caption(
        f"Dash-dot green: {int(shown_given['drawn'].sum())} of {len(given)} edge(s) the SDK snapshot "
        "gave (not similarity edges: drawn as given, when both facts are in this graph; hover the "
        "triangle for the relation type)."
    )
    with st.expander(f"Given edges (SDK snapshot, {len(given)})"):
        render.dataframe(shown_given, hide_index=True, width="stretch", key=K + "given")


def main() -> None:
    st.title("Graph (CDGR)")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    config = result.config
    if not config.graph_retrieval:
        st.info(
            "Graph retrieval is off (config `graph_retrieval = false`): anchors take the whole budget, "
            "there are no connectors."
        )
    conns = tables.memo(result, "connectors", lambda: tables.connectors_frame(result, only_bridging=True))
    _metrics(result, conns)
    linked, refused = state.view_number("candidates", 0)  # ?candidates=1
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    include = st.toggle(
        "also draw connector candidates with bridge value > 0 (not selected)", value=bool(linked), key=K + "candidates"
    )
    state.set_view_number("candidates", int(include), 0)
    current = state.selected_fact()
    pick = _connector_picker(conns["fact_id"].tolist(), current)
    row = conns[conns["fact_id"] == pick].iloc[0] if pick is not None else None
    pairs: list[tuple[str, str]] = list(row["bridged_pairs"]) if row is not None else []
    include = include or (row is not None and not bool(row["selected"]))
    marked = operator_statuses()
    mkey = tuple(sorted(marked.items()))
    marks = tables.fact_marks(result, marked)
    nodes, edges = tables.memo(
        result,
        ("cdgr", include, mkey),
        lambda: charts.cdgr_elements(result, include_candidates=include, operator_statuses=marked),
    )
    contra = tables.memo(result, "contradictions", lambda: charts.contradiction_edges(result))
    given = tables.memo(result, "given_edges", lambda: charts.given_edges_frame(result.corpus.kb))
    if len(nodes) == 0:
        st.info("No anchors in this run.")
        st.stop()
    fig = tables.memo(
        result,
        ("network", include, pick, mkey),
        lambda: charts.cdgr_network(
            nodes,
            edges,
            highlight=pick,
            bridged_pairs=pairs,
            edge_min=config.graph_edge_min,
            contradictions=contra,
            given=given,
        ),
    )
    event = st.plotly_chart(
        fig, width="stretch", key=f"{K}network.{include}.{pick}", on_select="rerun", selection_mode="points"
    )
    _clicked(event, current)
    st.caption(
        "Edge width and label: weight (cosine ≥ graph_edge_min "
        f"{config.graph_edge_min:g}). Diamonds: connectors, labelled with their bridge value. "
        "Dotted red: a contradiction pair of stage 4 (hover its midpoint for the outcome); a red "
        "cross marks the fact it suppressed, an amber square a fact whose status an operator set. "
        "Click a node to select its fact."
    )
    _contradictions(nodes, contra)
    if pick is not None and row is not None:
        _selected_connector(result, row, pick, marks)
    elif current is not None and current in set(nodes["fact_id"].tolist()):
        _selected_node(result, nodes, current)
    _candidates(conns, marks)
    _given_edges(given, nodes)
    drawn_edges = render.remembered_expander(f"Edges drawn ({len(edges)})", EDGES_OPEN)
    if drawn_edges.open:  # a table the browser builds only while it is open
        with drawn_edges:
            render.dataframe(
                edges, hide_index=True, width="stretch", column_config=breakdown.column_config(edges), key=K + "edges"
            )


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)
