"""Recording a decision from the Conflicts page's form (the callbacks; the form is :mod:`crp_ui.triage_form`).

* **Based on what the form showed**: each decision carries ``based_on``, the id of the pair's latest log
  entry when the form was drawn (0: none). When another operator decided the pair meanwhile the store
  refuses it (``StaleDecisionError``); the refusal is kept with the decision, shown with who decided
  what and when, and one click on "review and confirm" records it again based on that newer entry.
* **Once**: a submit that would record again exactly the pair's latest decision (a second click of the
  same form) records nothing; a recorded decision clears the form (note, status).
* **Roles**: a session that may not record (a viewer, no operator) records nothing, whatever reaches it.
* **The database away**: nothing is recorded and the form keeps its content; the page says so, and the
  next click records once the database is back.
* "Record and next" then selects the pair after this one in the queue as shown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from crp_core import (
    ConflictPair,
    CRPConfig,
    CRPError,
    Decision,
    DecisionError,
    StaleDecisionError,
    TriageStoreUnavailable,
    authority_winner,
    pair_key,
)

from . import conflicts_view as cv
from . import decisions, render, state, team

#: the Conflicts page's widget and session keys start with this
K = "crp.page.conflicts."
K_FLASH = K + "flash"  # the message about the decision recorded by the last click
K_FORM_ERROR = K + "form_error"  # why the last submitted decision was not recorded
K_FORM_INFO = K + "form_info"  # a submit that recorded nothing, and why (not an error)
K_STALE = K + "stale"  # the decision the store refused as stale, with the entry recorded meanwhile
K_UNAVAILABLE = K + "unavailable"  # why the last write could not reach the database
K_PAIR = K + "pair"  # the queue's pair select box (Record and next moves it)
K_ASIDE = K + "aside"  # the pair out of retrieval open instead of the queue's (crp_ui.queue_aside)
K_SEEN = K + "seen."  # + pair key: the pair's latest log entry when this operator opened it (based_on)
K_OPEN = K + "open"  # the pair whose form is open


@dataclass(frozen=True)
class StaleRefusal:
    """A decision the store refused because the pair changed after the form was drawn: ``decision`` as
    submitted, ``latest`` the entry recorded meanwhile, ``queue_keys`` for "Record and next"."""

    decision: Decision
    latest: Decision
    queue_keys: tuple[str, ...] | None = None


def open_pair(pk: str) -> None:
    """Note that the form of ``pk`` is drawn: opening a pair anew bases its form on the pair as it is now."""
    if state.recall(K_OPEN) != pk:
        state.forget(K_SEEN + pk)
        state.remember(K_OPEN, pk)


def seen(pk: str, live: int) -> int:
    """The pair's latest entry as this operator first saw it since opening it (``live`` the first time):
    what a decision submitted from its form is based on."""
    got = state.recall(K_SEEN + pk)
    if isinstance(got, int):
        return got
    state.remember(K_SEEN + pk, live)
    return live


def acknowledge(pk: str, latest: int) -> None:
    """The operator took the pair's entry ``latest`` into account: the form is now based on it."""
    state.remember(K_SEEN + pk, latest)


def build_decision(
    kind: str,
    pair: ConflictPair,
    *,
    operator: str,
    fields: dict[str, str | None],
    fingerprint: str,
    config: CRPConfig,
    extra: dict[str, Any] | None = None,
) -> Decision:
    """The decision of ``kind`` on ``pair`` from the form's ``fields`` (winner, target, status, note);
    an accepted arbitration names the winner SPEC-027 §2.3 gives. ``extra``: the team fields (role,
    origin, kb_name, based_on)."""
    a, b = pair.fact_a, pair.fact_b
    kw: dict[str, Any] = {"note": str(fields.get("note") or ""), "ckf_fingerprint": fingerprint, **(extra or {})}
    if kind == "accept":
        return Decision.accept(a, b, operator=operator, winner=authority_winner(pair, config), **kw)
    if kind == "override":
        return Decision.override(a, b, winner=str(fields.get("winner")), operator=operator, **kw)
    if kind == "dismiss":
        return Decision.dismiss(a, b, operator=operator, **kw)
    return Decision.mark_status(
        a, b, fact=str(fields.get("target")), status=str(fields.get("status")), operator=operator, **kw
    )


def field_keys(pk: str) -> dict[str, str]:
    """The widget keys of the form's fields for the pair ``pk``."""
    return {name: f"{K}{name}.{pk}" for name in ("winner", "target", "status", "note")}


def _fields(kind: str, keys: dict[str, str]) -> dict[str, str | None]:
    """The values of the fields ``kind`` uses (the others are None)."""
    used = {"override": ("winner",), "mark_status": ("target", "status")}.get(kind, ())
    out: dict[str, str | None] = {name: state.recall(keys[name]) if name in used else None for name in keys}
    out["note"] = state.recall(keys["note"])
    return out


def _record(d: Decision, queue_keys: tuple[str, ...] | None) -> Decision | None:
    """Record ``d`` (checked against the team's roles; its pair comes from the scan of the CKF loaded, whose
    fingerprint it carries); None, with the refusal kept for the next run, when the store refuses it."""
    try:
        rec = decisions.record(d)
    except StaleDecisionError as exc:
        state.remember(K_STALE, StaleRefusal(d, exc.latest, queue_keys))
        return None
    except TriageStoreUnavailable as exc:
        state.remember(K_UNAVAILABLE, str(exc))
        return None
    except DecisionError as exc:
        state.remember(
            K_FORM_ERROR,
            "Decision refused:\n\n" + "\n".join(f"- field `{f}`: {render.md_escape(m)}" for f, m in exc.problems),
        )
        return None
    except CRPError as exc:
        state.remember(K_FORM_ERROR, f"Decision not recorded: {render.md_escape(exc)}")
        return None
    state.forget(K_UNAVAILABLE)
    return rec


def _duplicate_of(d: Decision) -> Decision | None:
    """The pair's latest decision when ``d`` would record it again (a second click), else None."""
    hist = decisions.pair_history(d.fact_a, d.fact_b)
    return hist[-1] if hist and cv.same_decision(hist[-1], d) else None


def _move_on(pk: str, queue_keys: tuple[str, ...]) -> None:
    """Select the pair after ``pk`` in the queue as shown (a callback: before the select box is drawn)."""
    nxt = cv.next_pair(queue_keys, pk)
    if nxt is None or nxt == pk:
        state.remember(K_FORM_INFO, "That was the last pair of the queue as shown.")
        return
    state.remember(K_PAIR, nxt)
    state.forget(K_ASIDE)
    state.select_pair(nxt)


def _start() -> bool:
    """Clear the last outcome; False (with the reason kept) when this session may not record."""
    for k in (K_FORM_ERROR, K_FORM_INFO, K_STALE):
        state.forget(k)
    refusal = team.record_refusal()
    if refusal is not None:
        state.remember(K_FORM_ERROR, refusal)
        return False
    return True


def _finish(d: Decision, queue_keys: tuple[str, ...] | None, keys: dict[str, str] | None = None) -> None:
    """Record ``d`` (unless it repeats the pair's latest decision), then clear the form (``keys``: its fields,
    by default the queue form's) and move on."""
    dup = _duplicate_of(d)
    if dup is not None:
        state.remember(K_FORM_INFO, f"Already recorded as decision #{dup.id} ({dup.decided_at}): nothing recorded.")
        acknowledge(d.pair_key, int(dup.id or 0))
    else:
        rec = _record(d, queue_keys)
        if rec is None:
            return
        acknowledge(d.pair_key, int(rec.id or 0))
        state.remember(
            K_FLASH,
            f"Recorded decision #{rec.id} on {rec.fact_a} ↔ {rec.fact_b}: "
            f"{cv.decision_summary(rec)} (by {rec.operator}, {rec.decided_at}).",
        )
    keys = field_keys(d.pair_key) if keys is None else keys
    for name in ("note", "status"):  # a recorded decision clears the form (the kind stays)
        if name in keys:
            state.forget(keys[name])
    if queue_keys is not None:
        _move_on(d.pair_key, queue_keys)


def on_record(
    kind: str,
    pair: ConflictPair,
    fingerprint: str,
    config: CRPConfig,
    shown: dict[str, Any],
    queue_keys: tuple[str, ...] | None = None,
) -> None:
    """Record the submitted decision (a callback: it runs before the script). ``shown``: the team fields
    as the form was drawn (``based_on``, ``kb_name``); with ``queue_keys`` ("Record and next"), then
    select the next pair of the queue."""
    if not _start():
        return
    fields = _fields(kind, field_keys(cv.p_key(pair)))
    if kind == "mark_status" and not fields["status"]:
        state.remember(K_FORM_ERROR, "Choose the new status: none is preselected.")
        return
    if kind == "override" and not fields["winner"]:
        state.remember(K_FORM_ERROR, "Choose the winner: on a tie none is preselected.")
        return
    extra = {**team.decision_fields(), **shown}
    d = build_decision(
        kind, pair, operator=state.get_operator(), fields=fields, fingerprint=fingerprint, config=config, extra=extra
    )
    _finish(d, queue_keys)


def near_keys(pk: str) -> dict[str, str]:
    """The widget keys of a near conflict's form (the pair ``pk``, the current run's: crp_ui.near_form)."""
    return {name: f"{K}near.{name}.{pk}" for name in ("kind", "winner", "note")}


def on_record_near(fact_a: str, fact_b: str, by_authority: str | None, fingerprint: str, shown: dict[str, Any]) -> None:
    """Record the decision submitted on a near conflict of the current run (a callback): a dismissal, an accept
    naming ``by_authority`` (the winner by authority at the run's now, None for a tie) or an override naming the
    winner chosen. ``shown``: the team fields as the form was drawn (``based_on``, ``kb_name``)."""
    if not _start():
        return
    keys = near_keys(pair_key(fact_a, fact_b))
    kind, winner = state.recall(keys["kind"]), state.recall(keys["winner"])
    if kind == "override" and not winner:
        state.remember(K_FORM_ERROR, "Choose the winner: none is preselected.")
        return
    kw: dict[str, Any] = {
        "note": str(state.recall(keys["note"]) or ""),
        "ckf_fingerprint": fingerprint,
        **team.decision_fields(),
        **shown,
    }
    who = state.get_operator()
    if kind == "dismiss":
        d = Decision.dismiss(fact_a, fact_b, operator=who, **kw)
    elif kind == "override":
        d = Decision.override(fact_a, fact_b, winner=str(winner), operator=who, **kw)
    else:
        d = Decision.accept(fact_a, fact_b, operator=who, winner=by_authority, **kw)
    _finish(d, None, keys)


def on_confirm() -> None:
    """ "Review and confirm": record the refused decision again, based on the entry recorded meanwhile."""
    kept = state.recall(K_STALE)
    if not isinstance(kept, StaleRefusal) or not _start():
        return
    _finish(replace(kept.decision, based_on=kept.latest.id), kept.queue_keys)


def stale_refusal() -> StaleRefusal | None:
    """The decision the store refused as stale on the last click (kept until the next click)."""
    kept = state.recall(K_STALE)
    return kept if isinstance(kept, StaleRefusal) else None


def unavailable() -> str | None:
    """Why the last write could not reach the decision database (None once a write succeeded)."""
    got = state.recall(K_UNAVAILABLE)
    return str(got) if got else None
