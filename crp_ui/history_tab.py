"""The Tuning page's History tab (docs/decisions/history.md) and the record of a dashboard suite run.

* **Where**: the experiments live in the decision database of the triage log (the Conflicts page's
  "Decision database", else ``$CRP_INSPECT_TRIAGE_DB``, else ``.crp_triage.sqlite``), reached through the
  dashboard's shared store (:mod:`crp_ui.decision_store`); reading never creates a file.
* **The tab**: the runs kept (this knowledge base's or every one, by kind, newest first) as a table; the
  rows selected are compared side by side (what they were, every metric, the configuration keys changed
  from the defaults) and ringed on a chosen metric's line over time.
* **Recording**: :func:`record_suite_run` keeps each suite run of the Suite tab (kind ``suite-run``), by
  this session's operator under the team's identity mode (single mode without a typed name: the server's
  OS user), unless ``$CRP_INSPECT_HISTORY`` is ``off``.
* **The database away** (``TriageStoreUnavailable``): a banner says since when and why and the tab shows
  what it read last; a suite run that cannot be kept says so and is shown all the same. A database that is
  not usable (corrupt, another application's, a newer history) is said as an error, never a traceback.
"""

from __future__ import annotations

import getpass
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from crp_core import (
    EXPERIMENT_KINDS,
    Corpus,
    CRPConfig,
    CRPError,
    Experiment,
    ExperimentStore,
    PreparedSuite,
    SuiteMetrics,
    SuiteRun,
    TriageStoreUnavailable,
    decisions_record,
    experiment_inputs,
    history_enabled,
)

from . import decision_store, render, state, team
from . import history_view as hv
from .decision_store import shown_target
from .session import db_path, db_path_origin
from .tuning_widgets import frame

K = "crp.tuning.history."
K_AWAY = K + "away"  # (since, reason) while the database cannot be reached
K_LAST = K + "last"  # the last listing this session read
#: the scopes of the listing
THIS_KB, EVERY_KB = "this knowledge base", "every knowledge base"


def _away(exc: TriageStoreUnavailable) -> None:
    was = state.recall(K_AWAY)
    since = was[0] if isinstance(was, tuple) else time.time()
    state.remember(K_AWAY, (since, str(exc)))


def away_banner() -> None:
    """The banner shown while the history's database cannot be reached."""
    was = state.recall(K_AWAY)
    if not isinstance(was, tuple):
        return
    since = datetime.fromtimestamp(float(was[0]), UTC).strftime("%H:%M:%S UTC")
    st.error(
        f"The experiment history's database cannot be reached since {since} ({render.md_escape(was[1])}). "
        "The tab shows the runs as this session read them last; suite runs are not kept until it is back."
    )


def operator() -> str:
    """Who runs experiments in this session: the operator under the team's identity mode; in single mode
    without a typed name, the server's OS user; in a team mode without one, ``anonymous``."""
    who = team.identity()
    if who.operator:
        return who.operator
    if who.mode != "single":
        return "anonymous"
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError, ImportError):
        return "unknown"


def record_suite_run(p: PreparedSuite, config: CRPConfig, run: SuiteRun) -> Experiment | None:
    """Keep a completed Suite-tab run in the history (kind ``suite-run``); see :func:`record_run`."""
    return record_run(p, config, run.metrics, kind="suite-run")


def decisions_summary(p: PreparedSuite) -> dict[str, object]:
    """The operator decisions a dashboard run applied, as a command line's run keeps them
    (``crp-inspect history``): the database as shown, where it was named, how many name this CKF's facts,
    their digest."""
    if p.decisions is None:
        return decisions_record(None, None, 0, "")
    return decisions_record(shown_target(db_path()), db_path_origin(), *p.decisions.in_force_on(p.corpus.kb))


def record_run(
    p: PreparedSuite,
    config: CRPConfig,
    metrics: SuiteMetrics,
    *,
    kind: str,
    summary: Mapping[str, Any] | None = None,
) -> Experiment | None:
    """Keep a completed dashboard run (a suite run, an auto-tune study at its best trial, a 2-D sweep at its
    base point) in the history; None when not kept (switched off, or the database refused it: said on the
    page, the run is shown all the same)."""
    if not history_enabled():
        return None
    e = Experiment(
        kind=kind,
        recorded_by=operator(),
        metrics=metrics.flat(),
        origin="dashboard",
        summary={**(summary or {}), "operator_decisions": decisions_summary(p)},
        **experiment_inputs(state.session_kb(p.corpus.kb), p.suite, config),
    )
    try:
        done = ExperimentStore(decision_store.writable_store()).record(e)
    except TriageStoreUnavailable as exc:
        _away(exc)
        away_banner()
        return None
    except CRPError as exc:
        st.warning(f"This suite run was not kept in the experiment history: {render.md_escape(exc)}")
        return None
    state.forget(K_AWAY)
    st.toast(f"{kind} kept as experiment #{done.id} (Tuning → History)")
    return done


def _listing(kb: str | None, limit: int) -> list[Experiment] | None:
    """The runs kept (None, with an error shown, for a database that is not usable)."""
    try:
        store = decision_store.open_store()
        got = [] if store is None else ExperimentStore(store).list(kb=kb, limit=limit)
    except TriageStoreUnavailable as exc:
        _away(exc)
        last = state.recall(K_LAST)
        return list(last) if isinstance(last, list) else []
    except CRPError as exc:
        st.error(f"The experiment history cannot be read: {render.md_escape(exc)}")
        return None
    state.forget(K_AWAY)
    state.remember(K_LAST, got)
    return got


def _selected(event: object, shown: Sequence[Experiment]) -> list[Experiment]:
    """The experiments of the rows selected in the runs table, in table order."""
    sel = getattr(event, "selection", None)
    rows = getattr(sel, "rows", None) if sel is not None else None
    if rows is None and isinstance(sel, dict):
        rows = sel.get("rows")
    return [shown[i] for i in sorted(int(r) for r in rows or ()) if 0 <= i < len(shown)]


def history_tab(corpus: Corpus) -> None:
    """The History tab over ``corpus`` (its fingerprint scopes "this knowledge base")."""
    st.caption(
        "Every suite run of the Suite tab and every `crp-inspect check`, `sweep` and `tune` is kept with its "
        "configuration's changes from the defaults, the knowledge base and suite fingerprints, its metrics, "
        f"when and by whom, in the decision database ({render.md_escape(decision_store.shown_target(db_path()))}). "
        "Select rows to compare them; docs/decisions/history.md says what is kept."
    )
    c1, c2, c3 = st.columns([2, 3, 1])
    scope = c1.radio("Runs of", [THIS_KB, EVERY_KB], key=K + "scope", horizontal=True)
    kinds = c2.multiselect("Kinds", list(EXPERIMENT_KINDS), default=list(EXPERIMENT_KINDS), key=K + "kinds")
    limit = int(c3.number_input("At most", min_value=10, max_value=1000, value=200, step=10, key=K + "limit"))
    state.declare_settings(
        "the history listing",
        {"runs of": scope, "kinds": list(kinds), "at most": limit},
        {"runs of": THIS_KB, "kinds": list(EXPERIMENT_KINDS), "at most": 200},
    )
    found = _listing(corpus.kb.fingerprint if scope == THIS_KB else None, limit)
    away_banner()
    if found is None:
        return
    shown = [e for e in found if e.kind in kinds]
    if not shown:
        st.info(
            "No runs kept yet"
            + (" for this knowledge base" if scope == THIS_KB else "")
            + ": run the suite in the Suite tab, or `crp-inspect check` / `tune` with the same database."
        )
        return
    event = render.dataframe(
        hv.runs_frame(shown),
        hide_index=True,
        width="stretch",
        key=K + "runs",
        on_select="rerun",
        selection_mode="multi-row",
        column_config={
            "id": st.column_config.NumberColumn("id", format="%d", width="small"),
            "recorded": st.column_config.DatetimeColumn("recorded (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "changed keys": st.column_config.NumberColumn(
                "changed keys", help="configuration keys that differ from the defaults", format="%d"
            ),
            **{m: st.column_config.NumberColumn(m, format="%.3f") for m in hv.TABLE_METRICS},
            "note": st.column_config.TextColumn("note", width="large"),
        },
    )
    picked = _selected(event, shown)
    if picked:
        _compare(picked)
    else:
        st.caption("Select rows (the boxes at the left of the table) to compare runs side by side.")
    keys = hv.metric_keys(shown)
    if keys:
        default = "recall.mean" if "recall.mean" in keys else keys[0]
        linked, refused = state.view_choice("metric", keys, default)  # ?metric=<metric key>
        if refused:
            st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
        metric = st.selectbox("Metric over time", keys, index=keys.index(linked), key=K + "metric")
        state.set_view_choice("metric", str(metric), default)
        st.plotly_chart(
            hv.metric_figure(shown, str(metric), selected=[e.id for e in picked if e.id is not None]),
            key=K + "figure",
            width="stretch",
        )


def _compare(picked: Sequence[Experiment]) -> None:
    st.markdown(f"**{len(picked)} run(s) side by side**")
    frame(
        hv.about_frame(picked),
        K + "about",
        column_config={
            "recorded": st.column_config.DatetimeColumn("recorded (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "note": st.column_config.TextColumn("note", width="large"),
        },
    )
    frame(
        hv.compare_frame(picked),
        K + "metrics",
        column_config={f"#{e.id}": st.column_config.NumberColumn(f"#{e.id}", format="%.4f") for e in picked},
    )
    diff = hv.config_frame(picked)
    if diff.empty:
        st.caption("Every run selected ran at the defaults.")
    else:
        st.markdown("**Configuration keys changed from the defaults**")
        frame(diff, K + "config")
