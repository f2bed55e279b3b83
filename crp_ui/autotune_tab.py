"""The Tuning page's Auto-tune tab: Optuna (``crp_core.tune``: TPE sampler, fixed seed, a bounded
number of trials) over the suite chosen in the Suite tab, the best trial against trial 0 (the sidebar
config), its regressions, the trials and a Pareto front of two suite metrics; the best config can be
downloaded or applied to the sidebar.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from crp_core import (
    ConfigError,
    Corpus,
    CRPConfig,
    CRPError,
    DecisionSet,
    Param,
    PreparedSuite,
    TrialRecord,
    TuneResult,
    default_space,
    no_feasible_message,
    objective_named,
    objective_names,
    tune,
    tuned_toml,
)

from . import cache, history_tab, render, state
from . import suite_view as sv
from .progress import Bar
from .suite_source import UPLOADED, K, choose_suite, ready, source, summary, uploaded
from .tune_space_editor import space_editor
from .tuning_widgets import frame, keep, kept, kept_result, sticky_index

K_TUNE = K + "tune"  # (inputs key, TuneResult)
K_APPLIED = K + "applied"  # the number of the trial whose values were applied to the sidebar
#: most trials one auto-tune run may ask for from the page
MAX_TRIALS = 200


def autotune_tab(corpus: Corpus, decisions: DecisionSet | None, dkey: str) -> None:
    """The Auto-tune tab over ``corpus`` with the pair ``decisions`` in force (``dkey``: their digest)."""
    st.caption(
        "Optuna (TPE sampler, fixed seed, a bounded number of trials) searches the keys of the search space "
        "(by default the TTL of every source type the CKF uses, the relevance gate, the contradiction "
        "similarity and the stale floor), running the whole suite at each trial. Trial 0 is the sidebar "
        "config, so the best is never worse than "
        "where you start. The suite is the one of every Tuning tab: chosen or uploaded here or in the Suite tab."
    )
    # open while there is something to do or to read: no upload yet, or the bundled suite over another CKF
    needs_eye = uploaded() is None if source() == UPLOADED else not state.get_ckf_sample()
    with st.expander(f"{summary()} (shared by the Tuning tabs)", expanded=needs_eye):
        suite = choose_suite("autotune")
    got = ready(corpus, suite, decisions, dkey)
    if got is None:
        return
    p, config, inputs = got
    obj, trials, seed = _study_inputs()
    try:
        default = default_space(p.corpus, config)
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return
    with st.expander("Search space: keys, ranges and scale", expanded=True):
        space = space_editor(default, K + "space_editor")
    if space is None:
        return
    if st.button(
        f"Run auto-tune ({trials} trials)", type="primary", key=K + "tune_run", help=f"{len(space)} keys searched"
    ):
        res = _run_tune(p, config, obj, trials, seed, space)
        if res is not None:
            state.remember(K_TUNE, (inputs, res))
            best = res.best
            history_tab.record_run(  # kept in the experiment history at its best trial (History tab)
                p,
                res.best_config,
                best.metrics,
                kind="tune",
                summary={"objective": res.objective.name, "trials": len(res.trials), "seed": res.seed,
                         "best_trial": best.number, "feasible": best.feasible, "best": dict(best.params)},
            )  # fmt: skip
    res = kept_result(
        K_TUNE,
        inputs,
        empty="No study yet: pick an objective and the number of trials, then **Run auto-tune**.",
        stale="The suite, the CKF or the sidebar config changed since this study "
        "ran: it shows the earlier inputs. Run it again to update it.",
    )
    if res is not None:
        _show_tune(res)


def _study_inputs() -> tuple[str, int, int]:
    """The objective, the number of trials and the seed; each starts from its value when last drawn."""
    c1, c2, c3 = st.columns([3, 1, 1])
    names = list(objective_names())
    k_obj, k_trials, k_seed = K + "objective", K + "trials", K + "seed"
    obj = keep(
        k_obj,
        str(
            c1.selectbox(
                "Objective",
                names,
                index=sticky_index(k_obj, names),
                key=k_obj,
                format_func=lambda n: f"{n}: {objective_named(n).description}",
            )
        ),
    )
    trials = keep(
        k_trials,
        int(
            c2.number_input(
                "trials", min_value=1, max_value=MAX_TRIALS, value=int(kept(k_trials, 20)), step=1, key=k_trials
            )
        ),
    )
    seed = keep(
        k_seed,
        int(c3.number_input("seed", min_value=0, max_value=2**31 - 1, value=int(kept(k_seed, 0)), step=1, key=k_seed)),
    )
    state.declare_settings(
        "the auto-tune settings",
        {"objective": obj, "trials": trials, "seed": seed},
        {"objective": names[0], "trials": 20, "seed": 0},
        whole=True,
    )
    return obj, trials, seed


def _run_tune(
    p: PreparedSuite, config: CRPConfig, obj: str, trials: int, seed: int, space: Sequence[Param]
) -> TuneResult | None:
    """The study, with its trials drawn as they finish (a table and the objective chart)."""
    bar = Bar(f"Auto-tune, {trials} trials", unit="trials")
    table = st.empty()
    chart = st.empty()
    done: list[TrialRecord] = []
    keys = [s.key for s in space]
    maximize = objective_named(obj).directions[0] == "maximize"

    def callback(t: TrialRecord, n: int, total: int) -> None:
        done.append(t)
        bar.step(n, total, f"objective {t.values[0]:.4g}")
        with table.container():
            render.dataframe(sv.trials_frame(done, keys), hide_index=True, width="stretch")
        chart.plotly_chart(sv.trials_figure(done, maximize=maximize, title="Trials so far"), width="stretch")

    try:
        return tune(
            p.corpus,
            p,
            config,
            obj,
            trials,
            seed,
            callback=callback,
            space=space,
            embedder=cache.embedder_for(p.corpus),
        )
    except CRPError as exc:
        st.error(f"Auto-tune refused: {render.md_escape(exc)}")
        return None
    finally:
        bar.empty()
        table.empty()
        chart.empty()


def _best(res: TuneResult) -> None:
    """The best trial against trial 0: its numbers, the searched values, its regressions."""
    best = res.best
    st.success(
        f"Best: trial {best.number} of {len(res.trials)} ({'feasible' if best.feasible else 'INFEASIBLE'}), "
        f"objective {', '.join(f'{v:.4g}' for v in best.values)} (trial 0: "
        f"{', '.join(f'{v:.4g}' for v in res.baseline.values)}) · {res.elapsed_ms / 1000:.1f} s, "
        f"seed {res.seed}, {render.md_escape(res.sampler)}"
    )
    left, right = st.columns(2)
    with left:
        st.markdown("**Best against trial 0 (the sidebar config)**")
        frame(sv.best_vs_base_frame(res), K + "best_vs_base")
    with right:
        st.markdown("**Searched values**")
        st.caption("Space: " + render.md_escape(", ".join(p.describe() for p in res.space)))
        frame(sv.params_frame(res), K + "params")
    why = no_feasible_message(res)
    if why is not None:
        st.warning(render.md_escape(why))
    regs = best.regressions
    if regs:
        st.warning(
            f"Trial {best.number} is worse than trial 0 in {len(regs)} (scenario, metric) pair(s): "
            "`crp-inspect check --baseline` with a baseline recorded at the sidebar config would fail on "
            "them. The no_regression objective counts them as violations."
        )
        render.dataframe(sv.regressions_frame(regs), hide_index=True, width="stretch", key=K + "regressions")
    elif best.number != 0:
        st.caption(f"Trial {best.number} is no worse than trial 0 in any scenario and metric.")
    if res.simplified is not None and res.simplified.reverted:
        st.caption(
            f"Left at the sidebar's values, as no suite metric moved with them (checked in "
            f"{res.simplified.runs} more suite runs): "
            + render.md_escape(", ".join(res.simplified.reverted))
            + ". The download and **Apply** carry only the other changes."
        )


def _apply_best(res: TuneResult) -> None:
    """Download the best config, or apply its searched values to the sidebar."""
    best = res.best
    b1, b2 = st.columns(2)
    b1.download_button(
        "Download the best config (TOML: the keys that differ from the defaults)",
        data=tuned_toml(res, kb=state.get_ckf_label(), suite=summary().removeprefix("Suite: ")),
        file_name="crp-config-tuned.toml",
        mime="application/toml",
        key=K + "best_toml",
        on_click="ignore",
    )
    if b2.button(
        "Apply the best config to the sidebar",
        key=K + "apply",
        type="primary",
        help="Sets the searched keys as sidebar edits (every page then runs with them).",
    ):
        err = state.apply_config_edits(res.best_params)
        if err:
            st.error(f"Not applied: {render.md_escape(err)}")
        else:
            state.remember(K_APPLIED, best.number)
            st.rerun()
    if state.recall(K_APPLIED) == best.number:
        st.caption(f"Trial {best.number}'s values are applied in the sidebar.")


def _show_tune(res: TuneResult) -> None:
    _best(res)
    _apply_best(res)
    maximize = res.objective.directions[0] == "maximize"
    st.plotly_chart(
        sv.trials_figure(
            res.trials, maximize=maximize, best=res.best.number, title=f"Objective {res.objective.name} by trial"
        ),
        width="stretch",
        key=K + "trials_fig",
    )
    st.markdown("**Pareto front of two suite metrics**")
    flat = sv.flat_metric_keys(res.best.metrics)
    c1, c2 = st.columns(2)
    x = c1.selectbox("x", flat, index=flat.index("recall.mean"), key=K + "pareto_x")
    y = c2.selectbox("y", flat, index=flat.index("tokens.mean"), key=K + "pareto_y")
    state.declare_unlinked(f"an auto-tune study's result ({len(res.trials)} trials; Pareto {x} x {y})")
    fig, front = sv.pareto_figure(res, x, y)
    st.plotly_chart(fig, width="stretch", key=K + "pareto_fig")
    st.caption(
        "On the front: trials " + ", ".join(str(t.number) for t in front)
        if front
        else "No feasible trial has both metrics defined."
    )
    with st.expander(f"All {len(res.trials)} trials (table)"):
        frame(sv.trials_frame(res.trials, [s.key for s in res.space]), K + "trials_table")
