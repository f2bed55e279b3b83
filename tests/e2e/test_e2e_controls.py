"""Every page control reaches the link or the notice (docs/reference/snapshot.md), in a real browser.

Page by page (and tab by tab), the test ENUMERATES the input widgets Streamlit draws in the main area
(their ``data-testid``: stSelectbox, stMultiSelect, stSlider, stNumberInput, stTextInput, stTextArea,
stCheckbox (also st.toggle), stRadio, stDateInput, the stTab buttons; file uploaders and data editors
are enumerated too, to hold them to the allow-list), moves each one, and fails when the view changed
but neither the URL nor the sidebar's "This link does not carry" notice changed. The sidebar's
visible controls are walked once, on the Overview.

"The view" is what the main area shows outside the input widgets themselves: the text of every leaf
element (metrics, captions, tables' accessible cells, chart labels), timings left out. A control
that cannot be moved generically, or whose change is an input of an action not yet taken, is in
:data:`ALLOWED` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from tests.support.browser import assert_no_exception, open_page, wait_idle

SCENARIO = "payments_api_migration.json"
#: the input widgets, by the data-testid Streamlit gives their outer element
INPUTS = (
    "stSelectbox",
    "stMultiSelect",
    "stSlider",
    "stNumberInput",
    "stTextInput",
    "stTextArea",
    "stCheckbox",
    "stRadio",
    "stDateInput",
    "stFileUploader",
    "stDataFrameGlideDataEditor",
)
#: widgets that are never moved here: (page path prefix or "*", testid, label pattern) -> why
ALLOWED: dict[tuple[str, str, str], str] = {
    ("*", "stFileUploader", ".*"): "an upload cannot be made generically; what it loads reaches the notice "
    "(uploaded CKF, scenario, SDK audit trail) or is a snapshot being opened",
    ("*", "stDataFrameGlideDataEditor", ".*"): "a grid editor drawn on a canvas; the sidebar's editors change "
    "the scenario or configuration, which reach cfg.* or the notice (tests/ui cover them)",
    ("*", "stTextInput", "Operator name"): "who records decisions; nothing shown depends on it",
    ("/conflicts", "stSelectbox", "Winner|Fact|New status|Decision to take back"): "an input of a triage "
    "decision (or revert) not yet recorded; a recorded decision reaches the notice",
    ("/conflicts", "stRadio", "Decision"): "an input of a triage decision not yet recorded",
    ("/conflicts", "stTextArea", "Note.*"): "an input of a triage decision not yet recorded",
    ("/conflicts", "stTextInput", "Reason.*"): "an input of a revert not yet recorded",
    ("/session", "stTextInput", "Note.*"): "an input of a write-back not yet recorded",
}


#: sidebar pickers walked last (they switch the knowledge base or the scenario)
LAST = re.compile(r"Bundled sample|Knowledge base on the server|Bundled scenario|Scenario on the server")


@dataclass(frozen=True)
class Widget:
    testid: str
    label: str
    nth: int  # among the widgets of the same testid and label


def _q(e2e_sample_dir: Path) -> str:
    return f"scenario={SCENARIO}" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""


def _tab(label: str) -> str:
    return "tab=" + quote(label, safe="")


TUNING_TABS = ("Sweep", "Suite", "Auto-tune", "Compare", "Before / after", "History")
CONFLICT_TABS = (
    "Triage queue (whole CKF)",
    "Envelope conflicts (current run)",
    "Detector quality",
    "Export & audit log",
)
VIEWS: list[Any] = [
    pytest.param("/story", id="story"),
    pytest.param("/overview", id="overview"),
    pytest.param("/breakdown", id="breakdown"),
    pytest.param("/graph", id="graph"),
    pytest.param("/envelope", id="envelope"),
    *[pytest.param(f"/conflicts?{_tab(t)}", id=f"conflicts-{i}") for i, t in enumerate(CONFLICT_TABS)],
    pytest.param("/session", id="session"),
    pytest.param("/fanout", id="fanout"),
    *[pytest.param(f"/tuning?{_tab(t)}", id=f"tuning-{t.split()[0].lower()}") for t in TUNING_TABS],
    pytest.param("/glossary", id="glossary"),
    pytest.param("/home", id="home"),
]

#: the text of the main area outside the input widgets: every leaf element container's text
_VIEW_JS = """(inputs) => {
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return '';
  const sel = inputs.map(t => `[data-testid="${t}"]`).join(',') + ',[data-testid="stTabs"] [role="tablist"]';
  const leaves = [...main.querySelectorAll('[data-testid="stElementContainer"]')]
    .filter(e => !e.querySelector('[data-testid="stElementContainer"]'))
    .filter(e => !e.matches(sel) && !e.querySelector(sel));
  return leaves.map(e => e.textContent).join('\\n');
}"""


def _read_view(page: Any) -> str:
    text = page.evaluate(_VIEW_JS, list(INPUTS))
    text = re.sub(r"\d[\d,.]*\s?(ms|s|seconds)\b", "<t>", text)
    return re.sub(r"\d\d:\d\d(:\d\d)?", "<hh:mm>", text)


def _view(page: Any) -> str:
    """The view once it stopped changing (a chart may still be drawing when the script run ended)."""
    last = _read_view(page)
    for _ in range(10):
        page.wait_for_timeout(300)
        now = _read_view(page)
        if now == last:
            return now
        last = now
    return last


def _query(page: Any) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(page.url).query))


def _notice(page: Any) -> str:
    box = page.get_by_test_id("stSidebar").get_by_test_id("stAlert").filter(has_text="This link does not carry")
    return box.first.inner_text() if box.count() else ""


def _root(page: Any, sidebar: bool) -> Any:
    return page.get_by_test_id("stSidebar" if sidebar else "stMain")


def _label_of(el: Any) -> str:
    lab = el.get_by_test_id("stWidgetLabel")
    if lab.count():
        return lab.first.inner_text().strip()
    return (el.get_attribute("aria-label") or el.inner_text().strip().split("\n")[0])[:80]


def _widgets(page: Any, sidebar: bool) -> list[Widget]:
    """The visible input widgets of the main area (or the sidebar), in document order."""
    out: list[Widget] = []
    seen: dict[tuple[str, str], int] = {}
    root = _root(page, sidebar)
    for testid in INPUTS:
        for el in root.get_by_test_id(testid).all():
            if not el.is_visible():
                continue
            label = _label_of(el)
            n = seen.get((testid, label), 0)
            seen[(testid, label)] = n + 1
            out.append(Widget(testid, label, n))
    return out


def _allowed(path: str, w: Widget) -> str | None:
    for (prefix, testid, pattern), why in ALLOWED.items():
        if testid == w.testid and (prefix == "*" or path.startswith(prefix)) and re.fullmatch(pattern, w.label):
            return why
    return None


def _locate(page: Any, w: Widget, sidebar: bool) -> Any | None:
    root = _root(page, sidebar)
    hits = [el for el in root.get_by_test_id(w.testid).all() if el.is_visible() and _label_of(el) == w.label]
    return hits[w.nth] if len(hits) > w.nth else None


def _open_options(page: Any, el: Any) -> Any:
    """Open a select box's option list (a click on its input, else on its chevron); the options."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    options = page.locator('[role="option"]')
    for opener in (el.locator("input").first, el.locator('[role="group"] button').first):
        if not opener.count():
            continue
        opener.click()
        try:  # the list opens asynchronously (slowly on a busy machine)
            options.first.wait_for(state="visible", timeout=5_000)
            return options
        except PlaywrightTimeout:
            continue
    return options


def _pick_option(page: Any, el: Any, multi: bool) -> bool:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # a rerun can close the list between reading an option and clicking it: the click then waits on an option
    # that is gone (a clean-clone run once waited out the whole default timeout); open the list again, once
    for _attempt in range(2):
        options = _open_options(page, el)
        try:
            for o in options.all():
                if o.is_visible() and o.get_attribute("aria-selected", timeout=5_000) != "true":
                    if o.get_attribute("aria-disabled", timeout=5_000) != "true":
                        o.click(timeout=15_000)
                        page.keyboard.press("Escape")
                        return True
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            wait_idle(page)
    page.keyboard.press("Escape")
    if multi:  # every option chosen: take one away
        tag = el.get_by_role("button", name=re.compile("remove|delete", re.I))
        if tag.count():
            tag.first.click()
            return True
    return False


def _move(page: Any, el: Any, testid: str) -> bool:
    """Move one widget away from its value; False when it cannot move (disabled, a single option)."""
    if el.locator("input:disabled, textarea:disabled, [aria-disabled='true'][role='slider']").count():
        return False
    if testid in ("stSelectbox", "stMultiSelect"):
        return _pick_option(page, el, testid == "stMultiSelect")
    if testid == "stSlider":
        thumb = el.get_by_role("slider").first
        now, top = thumb.get_attribute("aria-valuenow"), thumb.get_attribute("aria-valuemax")
        thumb.focus()
        thumb.press("ArrowLeft" if now == top else "ArrowRight")
        return True
    if testid == "stNumberInput":
        up, down = el.get_by_test_id("stNumberInputStepUp"), el.get_by_test_id("stNumberInputStepDown")
        for b in (up, down):
            if b.count() and b.is_enabled():
                b.click()
                return True
        return False
    if testid in ("stTextInput", "stTextArea"):
        box = el.locator("input, textarea").first
        box.fill((box.input_value() or "") + "ttl")
        box.press("Control+Enter" if testid == "stTextArea" else "Enter")
        return True
    if testid == "stCheckbox":
        el.locator("label").first.click()
        return True
    if testid == "stRadio":
        free = el.locator("label:has(input:not(:checked))")
        if not free.count():
            return False
        free.first.click()
        return True
    if testid == "stDateInput":
        box = el.locator("input").first
        box.fill("2027/07/01")
        box.press("Enter")
        return True
    return False


def _walk(page: Any, url: str, path: str, sidebar: bool) -> tuple[list[str], list[str]]:
    """Move every widget in turn (the view of the previous move is the next one's start); the
    failures, and what was moved (for the message)."""
    failures: list[str] = []
    moved: list[str] = []
    unmoved: list[str] = []
    widgets = _widgets(page, sidebar)
    # the pickers that switch the knowledge base or the scenario last: every view after them differs
    for w in sorted(widgets, key=lambda w: bool(LAST.fullmatch(w.label))):
        if _allowed(path, w):
            continue
        el = _locate(page, w, sidebar)
        if el is None:  # an earlier move hid it
            unmoved.append(f"{w.testid} {w.label!r} (gone)")
            continue
        before = (_view(page), _query(page), _notice(page))
        if not _move(page, el, w.testid):
            unmoved.append(f"{w.testid} {w.label!r} (cannot move)")
            continue
        wait_idle(page)
        assert_no_exception(page)
        after = (_view(page), _query(page), _notice(page))
        moved.append(f"{w.testid} {w.label!r}")
        if after[0] != before[0] and after[1] == before[1] and after[2] == before[2]:
            failures.append(
                f"{path}: {w.testid} {w.label!r} changed the view, but not the URL ({after[1]}) nor the notice"
            )
    return failures, moved + [f"not moved: {u}" for u in unmoved]


def _tabs(page: Any, path: str) -> list[str]:
    """Every tab button of the main area: a click on another tab changes the URL (``tab=``)."""
    failures: list[str] = []
    tabs = page.get_by_test_id("stMain").get_by_role("tab")
    labels = [t.inner_text().strip() for t in tabs.all() if t.get_attribute("aria-selected") != "true"]
    for label in labels[:1]:  # one move is enough to show the binding; every tab is walked by its own link
        before = _query(page)
        page.get_by_test_id("stMain").get_by_role("tab", name=label, exact=True).first.click()
        wait_idle(page)
        if _query(page) == before and not _notice(page):
            failures.append(f"{path}: the tab {label!r} does not reach the URL")
    return failures


@pytest.mark.parametrize("path", VIEWS)
def test_every_control_of_a_page_reaches_the_url_or_the_notice(page, e2e_sample_dir, path: str):
    q = _q(e2e_sample_dir)
    url = path + (("&" if "?" in path else "?") + q if q else "")
    open_page(page, url)
    failures, moved = _walk(page, url, path, sidebar=False)
    failures += _tabs(page, path)
    assert not failures, "\n".join(failures) + f"\n(moved: {moved})"


def _open_sidebar_sections(page: Any) -> None:
    """Open every section of the sidebar, one at a time (each opening reruns the app; the Scenario and
    Configuration editors draw their widgets only while open; the stage groups sit inside the
    Configuration)."""
    closed = page.get_by_test_id("stSidebar").locator('[data-testid="stExpander"] details:not([open]) > summary')
    for _ in range(40):
        visible = [c for c in closed.all() if c.is_visible()]
        if not visible:
            return
        visible[0].click(timeout=20_000)
        wait_idle(page)


def test_the_sidebar_controls_reach_the_url_or_the_notice(page, e2e_sample_dir):
    q = _q(e2e_sample_dir)
    open_page(page, "/overview" + (f"?{q}" if q else ""))
    _open_sidebar_sections(page)
    failures, moved = _walk(page, "/overview", "/overview", sidebar=True)
    assert not failures, "\n".join(failures) + f"\n(moved: {moved})"
    # the walk reached the editors: configuration numbers, the scenario's date and width, the pickers
    kinds = {m.split()[0] for m in moved if not m.startswith("not moved")}
    assert {"stNumberInput", "stDateInput", "stSelectbox", "stCheckbox"} <= kinds, moved
