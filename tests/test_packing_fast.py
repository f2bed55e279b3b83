"""The greedy fill's one-row path (a fact with no tie) decides as the general unit path: compared on
random items, ties, costs and budgets (Hypothesis) with the plain fill that sends every unit through
the unit steps."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.stages import packing
from crp_core.stages.packing import PackItem, _Fill, _greedy_fill, _rank, _tie_units


def fill_reference(items, ties, cost, note_cost, budget):
    """The plain fill: every unit, one fact or a tie component, through the same steps."""
    by_row = {it.row: it for it in items}
    unit_of = _tie_units(list(by_row), ties)
    members: dict[int, list[int]] = {}
    for r, u in unit_of.items():
        members.setdefault(u, []).append(r)
    unit_ties: dict[int, list[tuple[int, int]]] = {}
    for p in ties:
        unit_ties.setdefault(unit_of[p[0]], []).append(p)
    scores = {it.row: it.score for it in items}
    order = (_rank([it.row for it in items if it.role == "anchor"], scores)
             + _rank([it.row for it in items if it.role == "connector"], scores))
    out = _Fill([], [], [], [], [])
    packed_anchors: set[int] = set()
    used = 0
    decided: set[int] = set()
    for row in order:
        u = unit_of[row]
        if u in decided:
            continue
        decided.add(u)
        pairs = unit_ties.get(u, [])
        rows = _rank(members[u], scores)
        unit_anchors = {r for r in rows if by_row[r].role == "anchor"}
        unbridged = [r for r in rows if by_row[r].role == "connector"
                     and sum(a in packed_anchors or a in unit_anchors for a in set(by_row[r].bridges)) < 2]
        need = sum(cost[r] for r in rows) + sum(note_cost[p] for p in pairs)
        if unbridged:
            out.unbridged.extend(rows)
            out.dropped_pairs.extend((a, b, "unbridged") for a, b in pairs)
        elif used + need > budget:
            out.over_budget.extend(rows)
            out.dropped_pairs.extend((a, b, "budget") for a, b in pairs)
        else:
            used += need
            out.packed.extend(rows)
            packed_anchors.update(r for r in rows if by_row[r].role == "anchor")
            out.packed_ties.extend(pairs)
    return out


@st.composite
def fills(draw):
    n = draw(st.integers(0, 14))
    n_anchors = draw(st.integers(0, n))
    items = []
    for r in range(n):
        score = draw(st.sampled_from([0.1, 0.3, 0.3, 0.5, 0.9]))
        if r < n_anchors:
            items.append(PackItem(r, "anchor", score))
        else:
            bridges = tuple(draw(st.lists(st.integers(0, max(n_anchors - 1, 0)), max_size=4))) if n_anchors else ()
            items.append(PackItem(r, "connector", score, bridges))
    ties = []
    if n >= 2:
        for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4)):
            p = (min(a, b), max(a, b))
            if a != b and p not in ties:
                ties.append(p)
    ties.sort()
    cost = {r: draw(st.integers(1, 12)) for r in range(n)}
    note_cost = {p: draw(st.integers(1, 9)) for p in ties}
    return items, ties, cost, note_cost, draw(st.integers(0, 80))


@settings(max_examples=300, deadline=None)
@given(fills())
def test_one_row_path_fills_as_the_unit_path(case):
    items, ties, cost, note_cost, budget = case
    got = _greedy_fill(items, ties, cost, note_cost, budget)
    want = fill_reference(items, ties, cost, note_cost, budget)
    assert got == want
    assert packing._greedy_fill is _greedy_fill
