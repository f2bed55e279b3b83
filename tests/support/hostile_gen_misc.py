"""Generated hostile families of the remaining readers: the triage database, crprotocol session audit
trails, dashboard links (crp_ui.url_codec), hostile text (the detector and the dashboard's escaping),
and the issue-32 findings not covered by a family above. Registry and shared pieces:
:mod:`tests.support.hostile_gen`."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.support.hostile_gen import (
    CKF_OK,
    DIM,
    MODEL,
    SCENARIO_OK,
    TEST_DATA,
    Case,
    Family,
    cut_offsets,
    fact,
    rng,
    run_ckf,
    vec,
)
from tests.support.hostile_gen_ckf import BIG_INT, GENERIC

SESSIONS = TEST_DATA / "sdk_sessions"

# ---- the triage database --------------------------------------------------------------------------
_GOOD_ROW = (1, "F1|F2", "F1", "F2", "dismiss", None, None, None, "", "ann", "2026-01-01T00:00:00Z", None)
_DB_VALUES: dict[str, Any] = {
    "null": None,
    "int": 42,
    "real": 1.5,
    "blob": b"\x00\xff",
    "huge_text": "x" * 100_000,
    "control": "a\nb\x1b[31m",
    "formula": "=cmd|' /C calc'!A0",
    "bidi": "ab\u202ecd",
}
_TEXT = ("pair_key", "fact_a", "fact_b", "kind", "note", "operator", "decided_at")
_NULLABLE = ("winner", "target_fact", "new_status", "ckf_fingerprint")


def _db_expect(column: str, label: str) -> str:
    """A row value the schema refuses (another type; NULL where text is required) refuses the read,
    naming the decision and the field; so does a decision the rules refuse (an unknown kind, a winner or
    status on a dismissal, a note over 10,000 characters, an operator's name over 200 or on two lines).
    Other text is data, shown as given."""
    v = _DB_VALUES[label]
    if column == "id":
        return "loaded" if isinstance(v, int) else "refused"
    if v is None:
        return "loaded" if column in _NULLABLE else "refused"
    if not isinstance(v, str):
        return "refused"
    if column in ("kind", "winner", "target_fact", "new_status"):
        return "refused"  # the row is a dismissal: no other kind, no winner, no status
    if column == "note" and label == "huge_text" or column == "operator" and label in ("huge_text", "control"):
        return "refused"
    return "loaded"


def _db_argvs(path: Path) -> tuple[tuple[str, ...], ...]:
    db = str(path)
    return (("triage", "decisions", "--db", db), ("triage", "decisions", "--db", db, "--json"))


def triage_dbs(tmp: Path) -> list[Case]:
    """Each column of a forged decision row given each SQLite type and hostile text; files that are not
    a decision database (another SQLite file, bytes, truncated at 12 offsets)."""
    from crp_core.decisions import COLUMNS
    from tests.support.triage_cli import forge_db

    cases = []
    for i, column in enumerate(COLUMNS[: len(_GOOD_ROW)]):  # forge_db writes schema-1 rows
        for label in _DB_VALUES:
            row = list(_GOOD_ROW)
            row[i] = _DB_VALUES[label]
            path = Path(forge_db(tmp / f"{column}_{label}.sqlite", [tuple(row)]))
            outcome = _db_expect(column, label)
            says = f"field '{column}'" if outcome == "refused" else None
            cases.append(Case(f"triage_db:{column}={label}", outcome, _db_argvs(path), says=says))
    good = Path(forge_db(tmp / "good.sqlite", [_GOOD_ROW]))
    data = good.read_bytes()
    for off in cut_offsets(len(data), 12, rng("triage_dbs")):
        path = tmp / f"cut{off}.sqlite"
        path.write_bytes(data[:off])
        cases.append(Case(f"triage_db:cut@{off}", "refused", _db_argvs(path)))
    other = tmp / "other_app.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    files = {"other_app": other}
    for name, blob in {"bytes": b"not a database" * 100, "zip": b"PK\x03\x04" + b"\x00" * 200}.items():
        files[name] = tmp / f"{name}.sqlite"
        files[name].write_bytes(blob)
    for name, path in files.items():
        cases.append(Case(f"triage_db:file:{name}", "refused", _db_argvs(path)))
    return cases


#: ``triage record`` arguments (beyond --db): (name, arguments, outcome); the rules of a new decision
#: (docs/decisions/triage.md): ids without control characters, an operator's name of at most 200
#: characters on one line without bidi controls, a note of at most 10,000 without control characters
#: but tab and newline, a winner of the pair, a status change naming a fact of the pair
RECORDS: list[tuple[str, tuple[str, ...], str]] = [
    ("dismiss", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann"), "loaded"),
    ("override", ("--pair", "F1", "F2", "--kind", "override", "--winner", "F2", "--operator", "ann"), "loaded"),
    ("winner_outside", ("--pair", "F1", "F2", "--kind", "override", "--winner", "F3", "--operator", "ann"), "refused"),
    ("override_no_winner", ("--pair", "F1", "F2", "--kind", "override", "--operator", "ann"), "refused"),
    ("same_fact", ("--pair", "F1", "F1", "--kind", "dismiss", "--operator", "ann"), "refused"),
    ("empty_id", ("--pair", "", "F2", "--kind", "dismiss", "--operator", "ann"), "refused"),
    ("id_newline", ("--pair", "F1\nx", "F2", "--kind", "dismiss", "--operator", "ann"), "refused"),
    ("id_bidi", ("--pair", "F1\u202e", "F2", "--kind", "dismiss", "--operator", "ann"), "loaded"),  # as in a CKF
    ("id_pipe", ("--pair", "F|1", "F2", "--kind", "dismiss", "--operator", "ann"), "loaded"),
    ("id_100k", ("--pair", "F" * 100_000, "F2", "--kind", "dismiss", "--operator", "ann"), "loaded"),
    ("operator_empty", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", ""), "refused"),
    ("operator_spaces", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "   "), "refused"),
    ("operator_201", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "o" * 201), "refused"),
    ("operator_200", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "o" * 200), "loaded"),
    ("operator_newline", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann\nbob"), "refused"),
    ("operator_bidi", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann\u202e"), "refused"),
    ("note_10000", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--note", "n" * 10_000), "loaded"),
    ("note_10001", ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--note", "n" * 10_001), "refused"),
    (
        "note_tab_newline",
        ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--note", "a\tb\nc"),
        "loaded",
    ),
    (
        "note_escape",
        ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--note", "\x1b[31mred"),
        "refused",
    ),
    (
        "note_formula",
        ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--note", "=cmd|' /C calc'!A0"),
        "loaded",
    ),
    ("mark_no_status", ("--pair", "F1", "F2", "--kind", "mark_status", "--fact", "F1", "--operator", "ann"), "refused"),
    (
        "mark_outside",
        ("--pair", "F1", "F2", "--kind", "mark_status", "--fact", "F3", "--status", "STALE", "--operator", "ann"),
        "refused",
    ),
    (
        "mark_ok",
        ("--pair", "F1", "F2", "--kind", "mark_status", "--fact", "F1", "--status", "STALE", "--operator", "ann"),
        "loaded",
    ),
    (
        "dismiss_with_status",
        ("--pair", "F1", "F2", "--kind", "dismiss", "--status", "STALE", "--operator", "ann"),
        "refused",
    ),
    (
        "ckf_unknown_ids",
        ("--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--ckf", str(CKF_OK)),
        "refused",
    ),
    ("ckf_known_ids", ("--pair", "f0", "f1", "--kind", "dismiss", "--operator", "ann", "--ckf", str(CKF_OK)), "loaded"),
]


#: the fact ids of the knowledge base ``triage record`` is given (it requires ``--ckf`` and refuses ids the
#: CKF does not hold, so the cases above meet the rule they test, not that one)
_RECORD_IDS = ("F1", "F2", "F3", "F1\u202e", "F|1", "F" * 100_000)


def _record_kb(tmp: Path) -> Path:
    path = tmp / "record_kb.jsonl"
    lines = [json.dumps({**fact(i), "fact_id": fid}, ensure_ascii=False) for i, fid in enumerate(_RECORD_IDS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def triage_records(tmp: Path) -> list[Case]:
    """``triage record`` with hostile arguments into a new database, on a CKF holding the cases' ids
    (unless the case names its own); what it records, ``triage decisions`` reads back."""
    kb = str(_record_kb(tmp))
    cases = []
    for name, args, outcome in RECORDS:
        db = str(tmp / f"{name}.sqlite")
        ckf = () if "--ckf" in args else ("--ckf", kb)
        argvs: tuple[tuple[str, ...], ...] = (("triage", "record", "--db", db, *ckf, *args),)
        if outcome == "loaded":  # what was recorded reads back
            argvs += (("triage", "decisions", "--db", db, "--json"),)
        cases.append(Case(f"triage_record:{name}", outcome, argvs))
    return cases


# ---- session audit trails -------------------------------------------------------------------------
#: lines of the recorded trail taken as the base: a session cut before it closed (an intact chain)
_TRAIL_LINES = 12


def _trail() -> list[str]:
    return (SESSIONS / "contradicting.audit.jsonl").read_text(encoding="utf-8").splitlines()[:_TRAIL_LINES]


def _session_argv(path: Path) -> tuple[str, ...]:
    return ("session", str(path), "--ckf", str(SESSIONS / "kb.json"), "--json")


def sessions(tmp: Path) -> list[Case]:
    """A trail of 12 entries: each line deleted, repeated, swapped with the next, replaced by bytes that
    are not JSON or not UTF-8; each chain key of line 3 given each hostile value; cuts at 15 offsets.
    Every case breaks the chain at a known line (exit 1, the break, gap or problem at that line)."""
    lines = _trail()
    cases = [Case("session:as_recorded", "loaded", (_session_argv(_write_trail(tmp / "ok.jsonl", lines)),))]

    def add(name: str, new: list[str] | bytes, line: int) -> None:
        path = tmp / f"{name}.jsonl"
        if isinstance(new, bytes):
            path.write_bytes(new)
        else:
            _write_trail(path, new)
        cases.append(Case(f"session:{name}", "refused", (_session_argv(path),), line))

    for k in range(1, _TRAIL_LINES):  # line k + 1 (1-based) removed, repeated, swapped, replaced
        if k + 1 < _TRAIL_LINES:  # the last entry removed is a clean cut: only an anchor shows it
            add(f"delete_{k + 1}", lines[:k] + lines[k + 1 :], k + 1)
        add(f"repeat_{k + 1}", lines[: k + 1] + lines[k:], k + 2)
        if k + 1 < _TRAIL_LINES:
            add(f"swap_{k + 1}", lines[:k] + [lines[k + 1], lines[k]] + lines[k + 2 :], k + 1)
        add(f"not_json_{k + 1}", lines[:k] + ['{"entry_id": '] + lines[k + 1 :], k + 1)
        raw = "\n".join(lines).encode().split(b"\n")
        raw[k] = raw[k][:20] + b"\xff" + raw[k][21:]
        add(f"not_utf8_{k + 1}", b"\n".join(raw) + b"\n", k + 1)
    for key in ("entry_hash", "previous_hash", "sequence", "timestamp", "session_id", "event_type", "data"):
        for label, raw_v in GENERIC.items():
            if label in ("missing", "huge_string", "deep_nesting", "int_5000_digits"):
                continue
            entry = json.loads(lines[2])
            entry[key] = "\u0000RAW\u0000"
            text = json.dumps(entry, ensure_ascii=False).replace(json.dumps("\u0000RAW\u0000"), raw_v or "null")
            add(f"{key}={label}", lines[:2] + [text] + lines[3:], 3)
    for name, value in (("deep", "[" * 100_000 + "]" * 100_000), ("int_5000_digits", BIG_INT)):
        add(f"data={name}", lines[:2] + [lines[2].replace('"data":', f'"data": {value}, "x":', 1)] + lines[3:], 3)
    data = ("\n".join(lines) + "\n").encode()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    inside = [o for o in range(2, len(data)) if o not in starts and data[o - 1] != 0x0A]
    for off in sorted(rng("sessions").sample(inside, 15)):
        add(f"cut@{off}", data[:off], sum(1 for s in starts if s < off))
    return cases


def _write_trail(path: Path, lines: list[str]) -> Path:
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    return path


# ---- dashboard links ------------------------------------------------------------------------------
_LINK_VALUES: dict[str, str] = {
    "nan": "nan",
    "inf": "inf",
    "1e400": "1e400",
    "int_400_digits": "1" + "0" * 400,
    "int_5000_digits": BIG_INT,
    "newline": "5\nx=1",
    "encoded_newline": "5%0Ax=1",
    "nul": "5\u0000",
    "empty": "",
    "array": "[5]",
    "table": "{a = 1}",
    "arabic_digit": "\u0665",
    "negative": "-5",
    "huge": "9" * 100_000,
    "deep": "[" * 1000 + "]" * 1000,
    "string": '"5"',
}


def _link_case(params: dict[str, str], applied: dict[str, str]) -> Any:
    """A call: ``apply_query_params(params)``; every parameter not in ``applied`` must be named by a
    warning and leave the configuration as it was; those in ``applied`` must round-trip through
    ``query_params_for_state``."""

    def run() -> list[str]:
        from crp_ui import url_codec
        from crp_ui.config_state import get_config

        url_codec.apply_query_params({})
        before = get_config()
        warnings = url_codec.apply_query_params(params)
        failures = []
        for k in params:
            said = any(w.startswith(f"{k}=") for w in warnings)
            if k in applied and said:
                failures.append(f"{k}: a warning for a value that applies: {warnings}")
            if k not in applied and not said:
                failures.append(f"{k}: no warning naming it (warnings: {[w[:80] for w in warnings]})")
        state = url_codec.query_params_for_state()
        for k, v in applied.items():
            if state.get(k) != v:
                failures.append(f"{k}: the link shows {state.get(k)!r}, expected {v!r}")
        if not applied and get_config() != before:
            failures.append("a refused link changed the configuration")
        url_codec.apply_query_params({})
        return failures

    return run


def links(tmp: Path) -> list[Case]:
    """``?cfg.<key>=`` for every numeric key at its range ends and with each hostile value, and the
    other parameters (``now``, ``pair``, ``fact``, ``ckf``, ``scenario``) with hostile values, through
    the dashboard's URL codec (warned per parameter, never an exception; what applies round-trips)."""
    from crp_core.config import INT_KEYS, RANGES

    cases = []
    for key in sorted(RANGES):
        lo, hi = RANGES[key]
        for label, value in _LINK_VALUES.items():
            p = f"cfg.{key}"
            cases.append(Case(f"link:{p}={label}", "warned", call=_link_case({p: value}, {})))
        if key in INT_KEYS and key != "ckf_max_bytes" and int(lo) != int(hi):
            p = f"cfg.{key}"
            cases.append(Case(f"link:{p}=max", "loaded", call=_link_case({p: str(int(hi))}, {p: str(int(hi))})))
    others = {
        "now": ["99999-01-01", "2025-13-01", "\u0662025-01-01", "", "2025-01-01\n"],
        "pair": ["a|", "|", "a|b|c", "x" * 100_000 + "|y", "a\n|b"],
        "ckf": ["../../etc/passwd", "/dev/zero", "x" * 10_000, "\u0000"],
        "scenario": ["../../etc/passwd", "/proc/self/mem", "nope.json"],
    }
    for key, values in others.items():
        for n, value in enumerate(values):
            cases.append(Case(f"link:{key}#{n}", "warned", call=_link_other(key, value)))
    for n, value in enumerate(["<script>alert(1)</script>", "x" * 100_000, "a\nb", ""]):
        cases.append(Case(f"link:fact#{n}", "loaded", call=_link_other("fact", value, warn=False)))
    return cases


def _link_other(key: str, value: str, *, warn: bool = True) -> Any:
    def run() -> list[str]:
        from crp_ui import url_codec

        url_codec.apply_query_params({})
        warnings = url_codec.apply_query_params({key: value})
        said = any(w.startswith(f"{key}=") or key in w for w in warnings)
        if warn and not said and value:
            return [f"{key}={value[:40]!r}: no warning (warnings: {[w[:80] for w in warnings]})"]
        return []

    return run


# ---- hostile text ---------------------------------------------------------------------------------
def _texts() -> dict[str, str]:
    r = rng("texts")
    words = ["port", "is", "not", "no", "longer", "2379", "1.5", "GiB", "an", "hour", "and", "a", "half"]
    return {
        "long_word_100k": "a" * 100_000,
        "long_identifier": "x_" * 50_000,
        "digits_200k": "9" * 200_000,
        "many_numbers": " ".join(str(i) for i in range(8_000)),
        "comma_numbers": "1," * 15_000,
        "dotted": "1." * 50_000,
        "negations": "not " * 25_000 + "allowed.",
        "nested_parens": "(" * 20_000 + "x" + ")" * 20_000,
        "emails": "a@" * 20_000,
        "url": "http://" + "a." * 50_000 + "com",
        "markup": "<script>alert(1)</script><img src=x onerror=alert(1)> **b** [x](javascript:alert(1))",
        "katex": "$\\def\\x{\\x}\\x$ :red[x] $$" + "{" * 1000,
        "bidi": "The port is \u202e9732\u202c.",
        "zero_width_split": "The p\u200bort is 23\u200d79.",
        "combining": "e\u0301" * 10_000,
        "rtl": "\u05d4\u05e4\u05d5\u05e8\u05d8 \u05d4\u05d5\u05d0 2379. " * 800,
        "many_sentences": "The port is 5. " * 3_000,
        "half_hours": "an hour and a half " * 2_000,
        "random_words": " ".join(r.choice(words) for _ in range(10_000)),
        "whitespace": " \t" * 50_000 + "x",
        "control": "\x1b[31mred\x1b[0m \x07 \x08" * 1_000,
        "one_line_300k": "word " * 60_000,
    }


def _text_ckf(path: Path, text: str, *, variant: str) -> Path:
    """Two facts on one subject, the second holding ``text`` (both pair in the detector: same vector)."""
    other = text.replace("5", "6").replace("9", "8") if variant == "changed" else text
    rows = [
        {**fact(0), "content": text, "embedding": vec(0)},
        {**fact(1), "content": other + " changed", "embedding": vec(0)},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def texts(tmp: Path) -> list[Case]:
    """Each hostile text as two near-identical facts through ``conflicts`` (the detector and its report;
    ``run`` too for the texts cut before the tokenizer), and through the dashboard's escaping functions
    (bounded time, inert)."""
    cases = []
    for name, text in _texts().items():
        path = _text_ckf(tmp / f"{name}.jsonl", text, variant="changed")
        argvs: tuple[tuple[str, ...], ...] = (("conflicts", "--ckf", str(path), "--json"),)
        if len(text) > 100_000:  # the report of run over a text cut before the tokenizer
            argvs += (("run", "--ckf", str(path), "--scenario", str(SCENARIO_OK), "--json"),)
        outcome = "warned" if len(text) > 100_000 else "loaded"  # cut before the tokenizer, with a warning
        cases.append(Case(f"text:{name}", outcome, argvs))
        cases.append(Case(f"text:{name}:render", "loaded", call=_render_case(text)))
    return cases


def _render_case(text: str) -> Any:
    def run() -> list[str]:
        from crp_ui import render

        failures = []
        for fn in (render.md_escape, render.html_text, render.esc, render.visible, render.plain, render.md_code):
            t = time.perf_counter()
            out = fn(text)
            took = time.perf_counter() - t
            if took > 2.0:
                failures.append(f"{fn.__name__}: {took:.1f} s on {len(text)} characters")
            if fn in (render.html_text, render.esc) and ("<script" in out or "<img" in out):
                failures.append(f"{fn.__name__}: markup left live")
        return failures

    return run


# ---- the issue-32 findings --------------------------------------------------------------------------
def _csv_cells_safe(out: str) -> list[str]:
    """The cells of a CSV text a spreadsheet would run as a formula."""
    return [c for row in csv.reader(io.StringIO(out)) for c in row if c[:1] in ("=", "+", "@", "\t", "\r")]


def _formula_case(path: Path) -> Any:
    def run() -> list[str]:
        from tests.support.hostile_run import call_main

        rc, out, err, _s = call_main(["conflicts", "--ckf", str(path), "--csv"], 30)
        if rc != 0:
            return [f"conflicts --csv: exit {rc}: {err[-200:]}"]
        live = _csv_cells_safe(out)
        pairs = len(out.splitlines()) - 1
        return ([f"no pair in the CSV: {out[:200]}"] if pairs < 1 else []) + [
            f"a live formula cell: {c[:60]!r}" for c in live
        ]

    return run


def _breakdown_case(path: Path) -> Any:
    """The dashboard's "breakdown as CSV" download over facts whose ids and texts are formulas."""

    def run() -> list[str]:
        from crp_core import load_ckf, load_scenario, prepare_corpus, run_pipeline
        from crp_ui.tables import breakdown_csv

        result = run_pipeline(prepare_corpus(load_ckf(str(path))), load_scenario(str(SCENARIO_OK)))
        out = breakdown_csv(result)
        rows = len(out.splitlines()) - 1
        live = [f"a live formula cell: {c[:60]!r}" for c in _csv_cells_safe(out)]
        return ([f"no fact in the breakdown: {out[:200]}"] if rows < 1 else []) + live

    return run


def findings(tmp: Path) -> list[Case]:
    """Each issue-32 finding that no family above holds, as an input with its outcome."""
    cases = []
    # 1. one large fact: cut before the tokenizer (a warning), within the address-space limit
    path = tmp / "fact_5mb.jsonl"
    path.write_text(
        json.dumps(fact(0)) + "\n" + json.dumps({**fact(1), "content": "word " * 1_000_000}) + "\n", encoding="utf-8"
    )
    cases.append(Case("finding1:5MB_fact", "warned", run_ckf(path), 2, "content"))
    # 2. 1,500 identical facts (beyond what the gathering search held in 3 GB): the pair search in bounded memory
    path = tmp / "dup_1500.jsonl"
    same = {k: v for k, v in fact(0).items() if k != "fact_id"}
    path.write_text("\n".join(json.dumps({"fact_id": f"d{i}", **same}) for i in range(1_500)) + "\n", encoding="utf-8")
    argvs = (("conflicts", "--ckf", str(path), "--json"), ("run", "--ckf", str(path), "--scenario", str(SCENARIO_OK)))
    cases.append(Case("finding2:1500_duplicates", "loaded", argvs))
    # 3. one long word: two facts with a 100 kB word (conflicts), a CSV with one 200 kB cell (run)
    path = tmp / "word_100k.jsonl"
    rows = [{**fact(i), "content": f"The setting is {'q' * 100_000}{i}.", "embedding": vec(0)} for i in range(2)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cases.append(Case("finding3:100k_word", "loaded", (("conflicts", "--ckf", str(path), "--json"),)))
    path = tmp / "cell_200k.csv"
    cells = [f'f{i},"{"z" * 200_000 if i == 1 else "cell"}","{json.dumps(vec(i))}",{MODEL}' for i in range(3)]
    path.write_text("fact_id,content,embedding,embedding_model\n" + "\n".join(cells) + "\n", encoding="utf-8")
    cases.append(Case("finding3:200k_csv_cell", "warned", run_ckf(path), 3, "content"))
    # 6. CSV formula injection: conflicts --csv neutralises every cell a spreadsheet would run
    path = tmp / "formulas.jsonl"
    payloads = ["=cmd|' /C calc'!A0", "@SUM(1+1)", '=HYPERLINK("http://x")', "+1+1", "-1+1"]
    rows = []
    for i, p in enumerate(payloads):
        rows.append({**fact(2 * i), "fact_id": f"{p}#{i}a", "content": f"{p} The port is 2379.", "embedding": vec(i)})
        rows.append(
            {**fact(2 * i + 1), "fact_id": f"{p}#{i}b", "content": f"{p} The port is 4001.", "embedding": vec(i)}
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cases.append(Case("finding6:csv_formulas", "loaded", call=_formula_case(path)))
    cases.append(Case("finding6:breakdown_csv_formulas", "loaded", call=_breakdown_case(path)))
    # 7. embeddings below float32's range, as a fact's and as the query's
    path = tmp / "tiny_query.json"
    doc = json.loads(SCENARIO_OK.read_text())
    doc["query"]["embedding"] = [1e-50] * DIM
    path.write_text(json.dumps(doc, indent=1))
    argvs = (("validate", "--json", "--scenario", str(path)), ("run", "--ckf", str(CKF_OK), "--scenario", str(path)))
    cases.append(
        Case("finding7:query_embedding_1e-50", "refused", argvs, None, "query.embedding", validate_kind="scenario")
    )
    path = tmp / "tiny_fact.jsonl"
    path.write_text(json.dumps(fact(0)) + "\n" + json.dumps({**fact(1), "embedding": [1e-50] * DIM}) + "\n")
    cases.append(Case("finding7:fact_embedding_1e-50", "refused", run_ckf(path), 2, "embedding"))
    cases.append(Case("finding7:fact_embedding_1e-50_lenient", "loaded", run_ckf(path, "--lenient")))
    # 7. supersession cycles and carried decisions of one time naming different winners
    path = tmp / "cycle.jsonl"
    rows = [
        {**fact(0), "metadata": {"superseded_by": "f1"}},
        {**fact(1), "metadata": {"superseded_by": "f2"}},
        {**fact(2), "metadata": {"superseded_by": "f0"}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases.append(Case("finding7:supersession_cycle", "warned", run_ckf(path), 1, "metadata.superseded_by"))
    # 5. Ray addresses that cannot serve: a message and exit 2, at once (127.0.0.1:1 was retried for minutes);
    # "auto" is left out: another process of this machine may run a cluster
    for n, addr in enumerate(("127.0.0.1:1", "ray://127.0.0.1:1", "not an address")):
        argv = ("conflicts", "--ckf", str(CKF_OK), "--engine", "ray", "--address", addr)
        cases.append(Case(f"finding5:ray_address#{n}", "refused", (argv,), says="Ray"))
    # 7. two carried override records superseding each other at one time, in either line order: a cycle
    # warned at its first fact, no decision chosen by line order
    for first in (0, 1):
        rec = {"kind": "override", "operator": "ops", "note": "", "decided_at": "2026-05-02T00:00:00Z"}
        rows = [
            {**fact(0), "metadata": {"superseded_by": "f1", "triage": rec}},
            {**fact(1), "metadata": {"superseded_by": "f0", "triage": rec}},
        ]
        path = tmp / f"standoff{first}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in (rows if first == 0 else rows[::-1])) + "\n")
        cases.append(Case(f"finding7:override_standoff#{first}", "warned", run_ckf(path), 1, "metadata.superseded_by"))
    # 7. a scenario over its 16 MiB limit (a 51.5 MB upload hit a MemoryError that was swallowed)
    path = tmp / "scenario_17mb.json"
    doc = json.loads(SCENARIO_OK.read_text())
    doc["prior_outputs"] = ["p" * 1_000_000] * 17
    path.write_text(json.dumps(doc))
    argvs = (("validate", "--json", "--scenario", str(path)), ("run", "--ckf", str(CKF_OK), "--scenario", str(path)))
    cases.append(Case("finding7:scenario_17MB", "refused", argvs, 0, "file", validate_kind="scenario"))
    # 7. non-ASCII digits in a duration, in each place a duration is read
    path = tmp / "ttl_digits.jsonl"
    path.write_text(json.dumps(fact(0)) + "\n" + json.dumps({**fact(1), "ttl": "P\u0663\u0660D"}) + "\n")
    cases.append(Case("finding7:ttl_arabic_digits", "refused", run_ckf(path), 2, "ttl"))
    argv = ("run", "--ckf", str(CKF_OK), "--scenario", str(SCENARIO_OK), "--set", "ttl_days.web=\u0663")
    cases.append(Case("finding7:set_ttl_arabic_digit", "refused", (argv,), says="ttl_days.web"))
    return cases


# ---- the stored corpus ----------------------------------------------------------------------------
def stored(tmp: Path) -> list[Case]:
    """Every input of tests/data/hostile/hostile.toml (the hand-made corpus, special files made here)
    through the commands that read it, with the manifest's outcome."""
    from tests.support.hostile import commands, manifest, materialise

    cases = []
    for i, entry in enumerate(manifest()):
        d = tmp / f"{i:03d}"
        d.mkdir()
        path = materialise(entry, d)
        argvs = tuple(tuple(a) for a in commands(entry, path).values())
        kind = entry.kind if entry.kind in ("ckf", "scenario") else "ckf"
        cases.append(Case(entry.label, entry.outcome, argvs, entry.line, entry.field, entry.says, validate_kind=kind))
    return cases


FAMILIES = (
    Family("stored_corpus", "every reader (hand-made files)", "tests/data/hostile/hostile.toml", stored),
    Family(
        "triage_db",
        "triage database",
        "each column x each SQLite type and hostile text; other files, truncation",
        triage_dbs,
    ),
    Family("triage_record", "triage database", "triage record: hostile ids, names, notes, kinds", triage_records),
    Family(
        "session_trail",
        "SDK session audit trail",
        "lines deleted, repeated, swapped, broken; chain keys x hostile values; cuts",
        sessions,
    ),
    Family(
        "dashboard_link",
        "dashboard link (?cfg., now, pair, fact, ckf, scenario)",
        "every numeric key x hostile values; other parameters",
        links,
    ),
    Family(
        "hostile_text",
        "text content (detector, report, escaping)",
        "long words, numbers, negations, markup, bidi, scripts",
        texts,
    ),
    Family("issue32_findings", "the issue-32 findings", "one input per finding no family above holds", findings),
)
