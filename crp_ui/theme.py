"""The dashboard's one stylesheet, and the colours its HTML and its Streamlit badges share.

What the dashboard draws with Streamlit's own elements (containers, metrics, dataframes, badges, plotly
charts) takes its look from Streamlit. The little HTML that remains (fact texts with their differing
tokens marked, the fan-out chips and timeline, a fact card inside a larger HTML block) carries classes
only, never a ``style=`` attribute: their look is :data:`CSS`, given to the browser once per run by
:func:`crp_ui.render.apply_stylesheet`. The CSS is static text built from the constants below; nothing
drawn from data reaches it.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the named colours Streamlit's Markdown badges take (``:green-badge[...]``); the same names are the
#: ``crp-badge-<tone>`` classes of an HTML badge
TONES: tuple[str, ...] = ("blue", "green", "orange", "red", "violet", "gray")

#: the tone of a fact's status (SPEC-009 statuses)
STATUS_TONES: Mapping[str, str] = {"ACTIVE": "green", "STALE": "orange", "DELETED": "gray", "QUARANTINED": "red"}

#: the tone of a fact's role in an arbitrated pair (SPEC-027 §2.3-2.5)
ROLE_TONES: Mapping[str, str] = {
    "winner": "green",
    "winner (override)": "green",
    "suppressed": "red",
    "tied": "orange",
    "kept": "blue",
    "dismissed": "gray",
}

#: the tone of a source type badge
SOURCE_TONE = "blue"

#: highlight colour of each value-conflict pattern (SPEC-005 §5.3 names)
PATTERN_COLOURS: Mapping[str, str] = {
    "NUMBER_CHANGED": "#ffd866",
    "ENTITY_SUBSTITUTED": "#ffb3c7",
    "NEGATION_FLIP": "#c9b6ff",
    "DATE_SHIFTED": "#9fe0c9",
    "MAGNITUDE_ALTERED": "#ffc59e",
}

#: background of an evidence row whose two values differ
DIFFERS_BACKGROUND = "#fff3c4"

#: fan-out branch colours (partition view, timeline), cycled beyond eight branches; the parent's is grey
BRANCH_COLOURS: tuple[str, ...] = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
)
PARENT_COLOUR = "#555555"

#: badge backgrounds by tone (white text on each)
_TONE_COLOURS: Mapping[str, str] = {
    "blue": "#3b5b92",
    "green": "#1b7f3b",
    "orange": "#a15c00",
    "red": "#b00020",
    "violet": "#6a4fb3",
    "gray": "#6b6b6b",
}


def branch_colour(branch: int | None) -> str:
    """The colour of fan-out branch ``branch`` (None: the parent)."""
    return PARENT_COLOUR if branch is None else BRANCH_COLOURS[int(branch) % len(BRANCH_COLOURS)]


_BASE = """
.crp-badge{color:#fff;border-radius:4px;padding:1px 6px;font-size:0.8em;margin-right:4px;background:#444}
div.crp-fact{border:1px solid rgba(49,51,63,0.2);border-radius:0.5rem;padding:8px 10px;margin-bottom:8px}
.crp-fact-meta{font-size:0.85em;color:#555;margin-top:2px}
.crp-fact-body{margin-top:6px;white-space:normal}
.crp-fact-text{line-height:1.6}
mark.crp-diff,mark.crp-gap{padding:0 2px;border-radius:3px;background:#ffd866;color:inherit}
span.crp-cov,span.crp-sq,span.crp-fact{display:inline-block;border:1px solid #ccc;border-radius:10px;
padding:0 7px;margin:1px 2px;font-family:monospace;font-size:0.82em;background:#f4f4f4}
span.crp-cov[data-hl="1"],span.crp-sq[data-hl="1"]{background:#fff3b0;border-color:#c9a400;font-weight:600}
span.crp-fact[data-hl="1"]{background:#ffd6d6;border-color:#c98a8a;font-weight:600}
.crp-empty{color:#888}
.crp-coverage{margin:4px 0 2px 0}
.crp-timeline-title{font-weight:600;margin-bottom:4px}
.crp-step{border-left:4px solid #555;padding:3px 8px;margin:2px 0;font-size:0.86em;color:#444}
.crp-step.crp-current{background:#eef4ff;color:inherit}
.crp-step-time{font-family:monospace;font-weight:700}
.crp-step-actor{font-weight:700}
.crp-step-line{margin-top:2px}
.crp-term{border:1px solid rgba(49,51,63,0.2);border-radius:0.5rem;padding:0.25rem 1rem 0.5rem 1rem;
margin-bottom:0.75rem}
.crp-term p{margin:0.5rem 0;line-height:1.6}
.crp-term p.crp-source{margin:0.25rem 0;font-size:0.875rem;color:rgba(49,51,63,0.6)}
.crp-connector{margin-left:1.2em;padding-left:0.6em;border-left:2px solid rgba(49,51,63,0.15)}
.crp-connector-note{font-size:0.85em;color:#6b6b6b;margin-bottom:2px}
.crp-outcome{margin:0.4em 0}
.crp-patterns{margin:0.2em 0}
"""


#: sidebar width in pixels: room for the scenario and config editors
SIDEBAR_WIDTH = 440
#: the key of the container around the CKF uploader (the browser sees the class ``st-key-<key>``); the
#: containers of the other uploads that state their own limit take keys starting with it
UPLOAD_BOX = "crp-ckf-upload"

#: below this viewport width the expanded sidebar takes at most NARROW_SIDEBAR of it and the page's side
#: margins shrink, so the page keeps room for its metrics and filters (a 1000 px window gave the sidebar 44 %)
NARROW_VIEWPORT, NARROW_SIDEBAR = 1400, "30vw"

#: layout rules: the sidebar starts at least SIDEBAR_WIDTH wide while expanded (it can still be dragged
#: wider or collapsed), at most NARROW_SIDEBAR of a narrow window; a metric's label wraps onto more lines
#: instead of being cut with an ellipsis (a cut name reads as another measure); the uploader's own
#: "<n>MB per file" line is hidden (the sidebar states the limit)
_LAYOUT = (
    f'section[data-testid="stSidebar"][data-collapsed="false"]{{min-width:{SIDEBAR_WIDTH}px}}\n'
    f"@media (max-width:{NARROW_VIEWPORT - 1}px){{"
    f'section[data-testid="stSidebar"][data-collapsed="false"]{{min-width:0;max-width:{NARROW_SIDEBAR}}}'
    '[data-testid="stMainBlockContainer"]{padding-left:1.5rem;padding-right:1.5rem}}\n'
    '[data-testid="stMetricLabel"] .stMarkdownEllipsis,[data-testid="stMetricLabel"] .stMarkdownEllipsis *'
    "{white-space:normal;overflow:visible;text-overflow:clip}\n"
    f'[class*="st-key-{UPLOAD_BOX}"] [data-testid="stFileUploaderDropzoneInstructions"]{{display:none}}\n'
)


def _rules() -> str:
    tones = "".join(f".crp-badge-{t}{{background:{c}}}\n" for t, c in _TONE_COLOURS.items())
    marks = "".join(
        f'mark.crp-diff[data-pattern="{p}"],mark.crp-gap[data-pattern="{p}"]{{background:{c}}}\n'
        for p, c in PATTERN_COLOURS.items()
    )
    branches = "".join(
        f'.crp-step[data-colour="{key}"]{{border-left-color:{c}}}\n'
        f'.crp-step[data-colour="{key}"] .crp-step-actor{{color:{c}}}\n'
        for key, c in [*((str(i), c) for i, c in enumerate(BRANCH_COLOURS)), ("parent", PARENT_COLOUR)]
    )
    return _LAYOUT + _BASE.lstrip() + tones + marks + branches


#: the stylesheet (static text: class rules only)
CSS: str = _rules()
