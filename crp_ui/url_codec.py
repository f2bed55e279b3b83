"""The URL codec: the dashboard's view mirrored in ``st.query_params`` so a link reproduces it.

Parameters: ``ckf`` (the name of a CKF the sidebar lists: the bundled sample's folder, or the server's folder
under ``crp-inspect dashboard --ckf``; when not the default one), ``scenario`` (a scenario the sidebar lists),
``now`` (date, when it differs from the scenario's), ``cfg.<key>=value`` for every config key whose value
differs from the defaults under the scenario's own ``config`` table, ``fact`` (selected fact id), ``pair``
(the conflict pair selected on the Conflicts page, ``a|b``; written only on the pages of :data:`PAIR_PAGES`,
where it selects something). Parameters a page owns (:data:`PAGE_PARAMS`) are left alone by the shell:
``step`` (the Fan-out stepper, read and written through :func:`page_param` / :func:`set_page_param`), ``tab``
(the tabs of the Tuning and Conflicts pages, bound to their ``st.tabs`` with ``bind="query-params"``:
Streamlit writes and reads it, and refuses to let ``st.query_params`` set or delete it; :func:`tab_refusal`
says when it names no tab) and the bounded
numbers of :data:`VIEW_NUMBERS` (a page's own controls, :func:`view_number` / :func:`set_view_number`) and the
choices of :data:`VIEW_CHOICES` (:func:`view_choice` / :func:`set_view_choice`). Streamlit clears the URL's
parameters on a page switch, so a page's own parameters never follow the user to another page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import streamlit as st

from crp_core import CORPUS_KEYS, ConfigError, CRPConfig, Scenario, layered_config

from .ckf_state import active_ckf, clear_ckf_refusal, get_ckf_refusal, get_ckf_sample, load_sample, pending_load
from .config_state import get_config, set_config_error, set_config_values
from .decisions import parse_pair_param
from .samples import default_sample, list_samples, list_scenarios, samples_label, scenarios_label
from .scenario_state import (
    clear_scenario_refusal,
    get_scenario_name,
    get_scenario_refusal,
    load_scenario_file,
    scenario_edited,
    set_now,
    stored_scenario,
)
from .session import Refusal, select_fact, select_pair, selected_fact, selected_pair

#: a page's own numeric controls in the URL: name -> (lowest, highest, integer?); a value outside the
#: range, or not a number, is refused with a message and the control keeps its default
VIEW_NUMBERS: dict[str, tuple[float, float, bool]] = {
    "ba_width": (0, 12, True),  # Tuning -> Before / after: the fan-out width of that view
    "fo_width": (1, 8, True),  # Fan-out: the width of the page's fan-out
    "fo_depth": (0.0, 1.0, False),  # Fan-out: the branch depth weight of the page's fan-out
    "logx": (0, 1, True),  # Score breakdown: the recency curves on a log age axis (1)
    "candidates": (0, 1, True),  # Graph: also draw connector candidates that were not selected (1)
}
#: a page's own choices in the URL (a picker, a toggle): name -> what it selects; the value must be one
#: of the options the page offers at that moment, else it is refused with a message
VIEW_CHOICES: dict[str, str] = {
    "cols": "Conflicts -> Triage queue: `all` shows every column of the queue table",
    "qsort": "Conflicts -> Triage queue: the queue's order, `similarity`, `margin` or `decided` (absent: triage order)",
    "log": "Conflicts -> Export & audit log: `all` lists every knowledge base's decisions",
    "residual": "Fan-out: the ResidualSet, sub-query ids joined by `,` (absent: the scenario's)",
    "explain": "Tuning -> Compare: the fact whose rank change is explained",
    "metric": "Tuning -> History: the metric drawn over time",
}
#: URL parameters owned by a page (e.g. the Fan-out stepper's ``step``): the shell never deletes them
PAGE_PARAMS: frozenset[str] = frozenset({"step", "tab", *VIEW_NUMBERS, *VIEW_CHOICES})
#: the pages where ``pair`` selects something (URL paths); elsewhere it is not written
PAIR_PAGES: frozenset[str] = frozenset({"conflicts"})
#: session key of the URL path of the page this run draws ("" for the first page)
K_PAGE = "crp.url.page"
#: the defaults, built once: the URL is compared with them twice per rerun
_DEFAULTS = CRPConfig()


def format_value(v: object) -> str:
    """A config value as it appears in a ``cfg.*`` parameter (the CLI's ``--set`` syntax)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _unlinked_config(scenario: Scenario | None) -> CRPConfig:
    """The configuration a link's reader gets without any ``cfg.*``: the defaults under the scenario's own
    ``config`` table. The link names every key the view's configuration holds at another value, a key set back
    to its default over the scenario's value included."""
    try:
        return layered_config(None, scenario.config if scenario is not None else None)
    except ConfigError:
        return _DEFAULTS


def query_params_for_state() -> dict[str, str]:
    """The URL parameters that reproduce the current view (only what differs from defaults)."""
    out: dict[str, str] = {}
    sample = get_ckf_sample()
    if sample and sample != default_sample():
        out["ckf"] = sample
    name = get_scenario_name()
    if name:
        out["scenario"] = name
    s = stored_scenario()
    if s is not None and (scenario_edited() or not name) and s.now is not None:
        out["now"] = s.now.date().isoformat()
    # an uploaded or unnamed scenario does not travel with the link: its config table counts as edits
    for key, (_mine, theirs) in _unlinked_config(s if name else None).diff(get_config()).items():
        if key not in CORPUS_KEYS:
            out[f"cfg.{key}"] = format_value(theirs)
    fid = selected_fact()
    if fid:
        out["fact"] = fid
    pair = selected_pair()
    if pair and current_page() in PAIR_PAGES:
        out["pair"] = pair
    return out


def set_current_page(url_path: str) -> None:
    """Note the page this run draws (its URL path; the shell calls this before the sidebar)."""
    st.session_state[K_PAGE] = url_path


def current_page() -> str:
    """The URL path of the page this run draws ("" for the first page, or before the shell said)."""
    return str(st.session_state.get(K_PAGE, ""))


def sync_query_params() -> None:
    """Write the state into ``st.query_params`` (only the keys that changed)."""
    want = query_params_for_state()
    qp = st.query_params
    current = {k: qp.get(k) for k in qp.keys()}
    if current == want:
        return
    for k in list(current):
        if k not in want and k not in PAGE_PARAMS:
            del qp[k]
    for k, v in want.items():
        if current.get(k) != v:
            qp[k] = v


def current_params() -> dict[str, str]:
    """The URL parameters of this run (the last value of a repeated one)."""
    qp = st.query_params
    return {k: str(qp.get(k)) for k in qp.keys()}


def page_param(name: str) -> str | None:
    """A parameter a page owns (one of :data:`PAGE_PARAMS`), None when the URL has none."""
    got = st.query_params.get(name)
    return None if got is None else str(got)


def set_page_param(name: str, value: str) -> None:
    """Write a parameter a page owns into the URL (only when it changed)."""
    if st.query_params.get(name) != value:
        st.query_params[name] = value


def parse_view_number(name: str, raw: str | None) -> tuple[float | int | None, str]:
    """A :data:`VIEW_NUMBERS` parameter's value -> (the number or None, a warning or "")."""
    lo, hi, integer = VIEW_NUMBERS[name]
    return parse_number(name, raw, lo, hi, integer=integer)


def parse_number(name: str, raw: str | None, lo: float, hi: float, *, integer: bool) -> tuple[float | int | None, str]:
    """A numeric link parameter ``name`` bounded to ``lo..hi`` -> (the number or None, a warning or ""): a value
    that is not a number of its kind, or outside the bounds, is ignored with the warning every link parameter
    gives ("<name>=<value>: outside lo..hi; ignored")."""
    if raw is None or raw == "":
        return None, ""
    shown = shown_value(raw)
    try:
        if len(raw) > 40:
            raise ValueError(raw)
        value: float | int = int(raw) if integer else float(raw)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        return None, f"{name}={shown}: not {kind} between {lo:g} and {hi:g}; ignored"
    if not (lo <= value <= hi):  # NaN fails both comparisons
        return None, f"{name}={shown}: outside {lo:g}..{hi:g}; ignored"
    return value, ""


def view_number(name: str, default: float) -> tuple[float, str]:
    """The value of a page's own control named ``name`` (:data:`VIEW_NUMBERS`): the URL's when valid,
    else ``default``; with the warning to show when the URL's value was refused ("" otherwise)."""
    got, warning = parse_view_number(name, page_param(name))
    return (default if got is None else got), warning


def set_view_number(name: str, value: float, default: float) -> None:
    """Mirror a page's own control in the URL: written while it differs from ``default``, else removed."""
    _lo, _hi, integer = VIEW_NUMBERS[name]
    if float(value) == float(default):
        if name in st.query_params:
            del st.query_params[name]
        return
    set_page_param(name, str(int(value)) if integer else repr(float(value)))


def shown_value(raw: str) -> str:
    """A link parameter's value as a warning quotes it: as given when short and printable, else its first 40
    characters quoted (a line break or a control character is shown, never drawn)."""
    return raw if len(raw) <= 40 and raw.isprintable() else repr(raw[:40]) + "…"


def view_choice(name: str, options: Sequence[str], default: str) -> tuple[str, str]:
    """The value of a page's own choice named ``name`` (:data:`VIEW_CHOICES`): the URL's when it is one
    of ``options``, else ``default``; with the warning to show when the URL's value was refused."""
    raw = page_param(name)
    if raw is None or raw == "" or raw == default:
        return default, ""
    if raw in options:
        return raw, ""
    return default, f"{name}={shown_value(raw)}: not one of the choices this page offers; ignored"


def set_view_choice(name: str, value: str, default: str) -> None:
    """Mirror a page's own choice in the URL: written while it differs from ``default``, else removed."""
    if name not in VIEW_CHOICES:
        raise KeyError(name)
    if value == default:
        if name in st.query_params:
            del st.query_params[name]
        return
    set_page_param(name, value)


def view_subset(name: str, options: Sequence[str], default: Sequence[str]) -> tuple[list[str], str]:
    """A page's own multi-choice named ``name`` (:data:`VIEW_CHOICES`), its values joined by ``,`` in the
    URL: the URL's when every value is one of ``options`` (in the URL's order), else ``default``;
    with the warning to show when the URL's value was refused."""
    raw = page_param(name)
    if raw is None or raw == "":
        return list(default), ""
    got = raw.split(",")
    if len(got) == len(set(got)) and all(v in options for v in got):
        return got, ""
    return list(default), f"{name}={shown_value(raw)}: not a list of the choices this page offers; ignored"


def subset_linkable(values: Sequence[str]) -> bool:
    """True when ``values`` can be written as a :func:`view_subset` parameter (not empty, no ``,`` inside)."""
    return bool(values) and not any("," in v or v == "" for v in values)


def set_view_subset(name: str, values: Sequence[str], default: Sequence[str]) -> None:
    """Mirror a page's own multi-choice in the URL: written while it differs from ``default`` (and
    :func:`subset_linkable`), else removed."""
    if list(values) == list(default) or not subset_linkable(values):
        set_view_choice(name, "", "")
        return
    set_view_choice(name, ",".join(values), "")


#: session key prefix of a tab link's warning (+ the parameter's name), kept while the tab opened in its place is
K_TAB_REFUSED = "crp.url.tab_refused."


def tab_refusal(name: str, labels: Sequence[str]) -> str:
    """The warning for the link's ``name`` parameter of a tab set bound to it (``st.tabs(labels, key=name,
    bind="query-params")``, drawn after this call) when it names none of ``labels``: Streamlit drops such a
    value and opens the first tab. The warning stays while that first tab is open (the value is gone from the
    URL by the next run); "" once the user opened another tab or the tab set was not drawn in the last run
    (another page, a new visit)."""
    raw, kept = page_param(name), K_TAB_REFUSED + name
    if raw and raw not in labels:
        tabs = ", ".join(labels)
        st.session_state[kept] = f"{name}={shown_value(raw)}: not one of this page's tabs ({tabs}); ignored"
    elif raw or st.session_state.get(name) != (labels[0] if labels else None):
        st.session_state.pop(kept, None)
    return str(st.session_state.get(kept, ""))


def apply_query_params(params: Mapping[str, str]) -> list[str]:
    """Restore a view from URL parameters; returns a warning per parameter that could not apply.

    Order: the CKF and scenario first (``ckf``, ``scenario``; the defaults when absent), then
    what refines them (``now``, ``cfg.*``, ``fact``, ``pair``).
    """
    warnings = _apply_inputs(params)
    warnings += _apply_now(params.get("now"))
    for k, v in params.items():
        if k.startswith("cfg."):
            warnings += _apply_config_item(k, v)
    set_config_error(None)
    fid = params.get("fact")
    if fid:
        select_fact(fid)
    pair, note = parse_pair_param(params.get("pair"))
    if note:
        warnings.append(note)
    select_pair(pair)
    return warnings


def _apply_inputs(params: Mapping[str, str]) -> list[str]:
    """The linked CKF and scenario, else the first bundled ones; a warning per link that failed."""
    warnings: list[str] = []
    ckf = params.get("ckf")
    if ckf and not load_sample(ckf):
        warnings.append(_input_warning("ckf", ckf, list_samples(), samples_label(), get_ckf_refusal()))
        clear_ckf_refusal()
    name = params.get("scenario")
    if name and not load_scenario_file(name):
        warnings.append(_input_warning("scenario", name, list_scenarios(), scenarios_label(), get_scenario_refusal()))
        clear_scenario_refusal()
    if active_ckf() is None and pending_load() is None:
        samples = list_samples()
        if samples:
            load_sample(samples[0])
    if stored_scenario() is None:
        scen = list_scenarios()
        if scen:
            load_scenario_file(scen[0])
    return warnings


def _input_warning(param: str, name: str, listed: Sequence[str], label: str, refusal: Refusal | None) -> str:
    """A linked CKF or scenario that did not load: not one the sidebar lists (``label`` names where they come
    from: the bundled sample, or the server's folder), or refused (its first problem, else the refusal's message)."""
    if name not in listed:
        return f"{param}={shown_value(name)}: no such {label[0].lower()}{label[1:]}; ignored"
    if refusal is None:
        return f"{param}={shown_value(name)}: refused; ignored"
    problems = refusal.problems
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    why = f"{problems[0]}{more}" if problems else refusal.message
    return f"{param}={shown_value(name)}: refused ({why}); ignored"


def _apply_now(now: str | None) -> list[str]:
    if not now:
        return []
    try:
        set_now(date.fromisoformat(now))
    except ValueError:
        return [f"now={now}: not a date (YYYY-MM-DD)"]
    return []


def _apply_config_item(k: str, v: str) -> list[str]:
    """One ``cfg.<key>=value`` parameter, parsed like the CLI's ``--set``. A corpus key (the embedding
    model: a path on this server) never comes from a link: the server's operator sets it."""
    if k[4:] in CORPUS_KEYS:
        return [f"{k}: not taken from a link (it names a model folder on this server; set it in the configuration)"]
    current = get_config()
    try:
        # against the configuration in force, not the defaults: a value equal to its default still overrides
        # the scenario's own ``config`` table (the link of a view whose edit put a key back to its default)
        parsed = current.diff(current.with_set_args([f"{k[4:]}={v}"]))
    except ConfigError as exc:
        return [f"{k}={v if v.isprintable() else repr(v)}: {exc}"]  # a line break is shown, not drawn
    values = {key: theirs for key, (_current, theirs) in parsed.items()}
    err = set_config_values(values) if values else None
    return [f"{k}={v}: {err}"] if err else []
