"""Generated hostile families of the CKF readers: JSON Lines, JSON, CSV, Parquet, CKF folders
(docs/reference/ckf.md). Registry and shared pieces: :mod:`tests.support.hostile_gen`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.hostile_gen import DIM, MODEL, Case, Family, cut_offsets, fact, fact_json, rng, run_ckf, sample, vec

DEEP = "[" * 100_000 + "]" * 100_000
BIG_INT = "9" * 5000

#: raw JSON values every field is given (name -> JSON text; None: the field absent)
GENERIC: dict[str, str | None] = {
    "missing": None,
    "null": "null",
    "true": "true",
    "int": "42",
    "negative": "-1",
    "half": "0.5",
    "nan": "NaN",
    "inf": "Infinity",
    "neg_inf": "-Infinity",
    "1e400": "1e400",
    "int_400_digits": "1" + "0" * 400,
    "int_5000_digits": BIG_INT,
    "deep_nesting": DEEP,
    "empty_string": '""',
    "spaces": '"   "',
    "empty_list": "[]",
    "empty_object": "{}",
    "list_of_strings": '["a", "b"]',
    "string_number": '"0.5"',
    "huge_string": json.dumps("x" * 200_000),
    "control": '"a\\u0001b"',
    "newline": '"a\\nCRP-Context-Injected: 1"',
    "nul": '"a\\u0000b"',
    "bidi": '"ab\\u202ecd"',
    "zero_width_only": '"\\u200b\\u200d"',
    "lone_surrogate": '"x\\ud800"',
    "markup": '"<script>alert(1)</script>"',
    "formula": '"=HYPERLINK(\\"http://x\\")"',
}
#: the CKF fields and their kind (docs/reference/ckf.md, "Fields")
FIELDS = {
    "fact_id": "id",
    "content": "content",
    "source_type": "enum",
    "status": "enum",
    "importance_weight": "weight",
    "ingested_at": "time",
    "modified_at": "time",
    "ttl": "ttl",
    "source_id": "text",
    "source_location": "text",
    "community_label": "text",
    "metadata": "object",
    "embedding": "vector",
    "embedding_model": "model",
}
_NUMBERS = {"int", "negative", "half", "nan", "inf", "neg_inf", "1e400", "int_400_digits", "true"}
_STRINGS = {
    "empty_string",
    "spaces",
    "string_number",
    "huge_string",
    "control",
    "newline",
    "nul",
    "bidi",
    "zero_width_only",
    "lone_surrogate",
    "markup",
    "formula",
}


def ckf_expect(kind: str, mutation: str) -> tuple[str, str | None]:
    """The outcome of a fact whose field of ``kind`` holds the generic value ``mutation``, and the
    field a refusal names (docs/reference/ckf.md): a document-level JSON error names ``json``."""
    if mutation in ("int_5000_digits", "deep_nesting"):
        return "refused", "json"  # beyond Python's int-str limit / nesting: the line is not valid JSON
    if mutation in ("missing", "null"):  # null is the same as absent
        return ("refused", None) if kind in ("id", "content", "vector") else ("loaded", None)
    if mutation == "lone_surrogate":
        return "refused", None  # not valid Unicode, in any text field
    if kind == "object":
        return ("loaded", None) if mutation == "empty_object" else ("refused", None)
    if kind == "vector":
        return "refused", None  # none of the generic values is a list of 8 finite numbers
    if kind == "weight":
        return ("loaded", None) if mutation == "half" else ("refused", None)
    if mutation not in _STRINGS:
        return "refused", None  # a number, boolean, list or object where a string is required
    return _string_expect(kind, mutation)


def _string_expect(kind: str, mutation: str) -> tuple[str, str | None]:
    if kind in ("enum", "time", "ttl", "model"):
        return "refused", None  # none of the generic strings is a name, timestamp, duration or the model
    if kind == "id":
        blank = mutation in ("empty_string", "spaces")
        return ("refused", None) if blank or mutation in ("control", "newline", "nul") else ("loaded", None)
    if kind == "content":
        if mutation in ("empty_string", "spaces", "zero_width_only"):
            return "refused", None  # no visible character
        if mutation in ("nul", "huge_string"):
            return "warned", None  # kept with a warning; cut before the tokenizer with a warning
        return "loaded", None
    return ("refused", None) if mutation == "nul" else ("loaded", None)  # source_id, ...: NUL refused


#: values of one kind of field that sit at or just past its rules (value as JSON text -> outcome)
NEAR: dict[str, dict[str, str]] = {
    "time": {
        '"2025-03-01"': "loaded",
        '"2025-03-01T12:00:00+02:00"': "loaded",
        '"2025-03-01T12:00:00.123456Z"': "loaded",
        '"0001-01-01T00:00:00Z"': "loaded",
        '"9999-12-31T23:59:59Z"': "loaded",
        '"2025-13-01"': "refused",
        '"2025-02-30T00:00:00Z"': "refused",
        '"2025-03-01T25:00:00Z"': "refused",
        '"2025-03-01T00:00:00+24:00"': "refused",
        '"0000-01-01"': "refused",
        '"10000-01-01T00:00:00Z"': "refused",
        '"-2025-03-01"': "refused",
        '"\\u0662\\u0660\\u0662\\u0665-03-01"': "refused",
        '"\\uff12\\uff10\\uff12\\uff15-03-01"': "refused",
        '"2025-03-01\\u00a0T00:00:00Z"': "refused",
        '"yesterday"': "refused",
        '"' + "9" * 400 + '"': "refused",
        '"2025-03-01T00:00:00Z' + " " * 10_000 + '"': "loaded",  # surrounding spaces are stripped
    },
    "ttl": {
        '"P30D"': "loaded",
        '"P1Y2M3DT4H5M6.5S"': "loaded",
        '"P2W"': "loaded",
        '"NONE"': "loaded",
        '"P99999999999Y"': "loaded",
        '"P0D"': "refused",
        '"PT0S"': "refused",
        '"-P1D"': "refused",
        '"P"': "refused",
        '"PT"': "refused",
        '"30 days"': "refused",
        '"P1.5.5D"': "refused",
        '"P\\u0663D"': "refused",
        '"P\\uff11D"': "refused",
        '"P1e400D"': "refused",
        '"P' + "9" * 5000 + 'D"': "refused",
        '"P' + "1" * 400 + 'Y"': "refused",  # "duration too large" (11 digits of years still load)
    },
    "weight": {
        "0": "loaded",
        "1": "loaded",
        "-0.0": "loaded",
        "5e-324": "loaded",
        "1.0000000000000002": "refused",
        "-5e-324": "refused",
        "1e-400": "loaded",
    },
    "enum_source_type": {
        '"web"': "loaded",
        '"regulatory"': "loaded",
        '"Web"': "refused",
        '"WEB"': "refused",
        '"web "': "refused",
        '"w\\u0435b"': "refused",
    },
    "enum_status": {
        '"STALE"': "loaded",
        '"DELETED"': "loaded",
        '"QUARANTINED"': "loaded",
        '"active"': "refused",
        '"ACTIVE "': "refused",
        '"\\u0410CTIVE"': "refused",
    },
    "vector": {
        json.dumps(vec(1)[:7]): "refused",
        json.dumps(vec(1) + [0.0]): "refused",
        json.dumps([1e-50] * DIM): "refused",
        json.dumps([3.5e38] + [0.0] * (DIM - 1)): "refused",
        json.dumps([0.0] * DIM): "refused",
        "[" + ", ".join(["true"] * DIM) + "]": "refused",
        "[" + ", ".join(["null"] * DIM) + "]": "refused",
        json.dumps([[1.0]] * DIM): "refused",
        json.dumps(["1"] * DIM): "refused",
        "[" + ", ".join(["NaN"] + ["0.5"] * (DIM - 1)) + "]": "refused",
        "[" + ", ".join([BIG_INT] + ["0.5"] * (DIM - 1)) + "]": "refused",
        json.dumps([1e-45] + [0.0] * (DIM - 2) + [1.0]): "loaded",
        json.dumps([3.0e38] + [0.0] * (DIM - 1)): "loaded",
        json.dumps([1.0] * 9000): "refused",
    },
    "object": {
        '{"a": {"b": {"c": [1, 2, {"d": null}]}}}': "loaded",
        '{"": 1, "\\u0000": 2}': "loaded",
        '{"n": NaN}': "loaded",
        '{"big": ' + "1" + "0" * 400 + "}": "loaded",
    },
}
_NEAR_FIELDS = {
    "ingested_at": "time",
    "modified_at": "time",
    "ttl": "ttl",
    "importance_weight": "weight",
    "source_type": "enum_source_type",
    "status": "enum_status",
    "embedding": "vector",
    "metadata": "object",
}
#: the json error a number in the vector gives (5,000 digits: the line is not valid JSON)
_NEAR_FIELD_OVERRIDE = {("embedding", "[" + ", ".join([BIG_INT] + ["0.5"] * (DIM - 1)) + "]"): "json"}


def _field_cases(tmp: Path, fmt: str) -> list[Case]:
    """Every field x every generic value, then the near values, on the second fact of four."""
    cases: list[Case] = []
    n = 0

    def add(key: str, raw: str | None, label: str, outcome: str, named: str | None) -> None:
        nonlocal n
        n += 1
        path = _write_facts(tmp / f"{n:04d}", fmt, key, raw)
        line = 2 if outcome != "loaded" else None
        name = f"{fmt}:{key}={label}"
        if outcome == "warned" and key == "content":
            cases.append(Case(name, outcome, run_ckf(path), line, "content"))
        else:
            cases.append(Case(name, outcome, run_ckf(path), line, named or key if outcome == "refused" else None))

    for key, kind in FIELDS.items():
        for label, raw in GENERIC.items():
            outcome, named = ckf_expect(kind, label)
            if fmt == "json" and named == "json":
                named = "json"
            add(key, raw, label, outcome, named)
    for key, near in _NEAR_FIELDS.items():
        for raw, outcome in NEAR[near].items():
            add(key, raw, f"near:{raw[:40]}", outcome, _NEAR_FIELD_OVERRIDE.get((key, raw)))
    return cases


def _write_facts(d: Path, fmt: str, key: str, raw: str | None) -> Path:
    d.mkdir(parents=True)
    lines = [json.dumps(fact(0)), fact_json(1, key, raw), json.dumps(fact(2)), json.dumps(fact(3))]
    if fmt == "jsonl":
        path = d / "kb.jsonl"
        path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    else:
        path = d / "kb.json"
        path.write_bytes(("[\n" + ",\n".join(lines) + "\n]\n").encode("utf-8", "surrogatepass"))
    return path


def jsonl_fields(tmp: Path) -> list[Case]:
    return _field_cases(tmp, "jsonl")


def json_fields(tmp: Path) -> list[Case]:
    """The same values in a JSON list (a seeded third of them: the fact checks are the JSON Lines
    family's): a fact's line is its position (2)."""
    out = []
    for c in sample(_field_cases(tmp, "json"), 160, "json_fields"):
        if c.field == "json":
            c = Case(c.name, c.outcome, c.argvs, 0, "json")
        out.append(c)
    return out


def jsonl_lenient(tmp: Path) -> list[Case]:
    """The JSON Lines values that refuse a fact, loaded ``--lenient``: exactly that fact is skipped, the
    other three load and run (a seeded sixth of them; docs/reference/ckf.md, "Strict and lenient")."""
    out = []
    for c in sample([c for c in _field_cases(tmp, "jsonl") if c.outcome == "refused"], 70, "jsonl_lenient"):
        path = c.argvs[0][2]
        out.append(Case(c.name + ":lenient", "warned", run_ckf(Path(path), "--lenient"), c.line, c.field))
    return out


# ---- CSV ------------------------------------------------------------------------------------------
CSV_COLUMNS = (
    "fact_id",
    "content",
    "source_type",
    "importance_weight",
    "ttl",
    "modified_at",
    "metadata",
    "embedding",
    "embedding_model",
)


def _csv_cell(v: str) -> str:
    return '"' + v.replace('"', '""') + '"'


def _csv_row(i: int, **cells: str) -> str:
    f = fact(i)
    base = {
        "fact_id": str(f["fact_id"]),
        "content": str(f["content"]),
        "source_type": "web",
        "importance_weight": "0.5",
        "ttl": "P30D",
        "modified_at": "2025-03-01",
        "metadata": "{}",
        "embedding": json.dumps(vec(i)),
        "embedding_model": MODEL,
    }
    base.update(cells)
    return ",".join(_csv_cell(base[c]) for c in CSV_COLUMNS)


#: CSV cells (column, text) -> outcome: every cell is text; a number, a JSON list or object is parsed
CSV_CELLS: list[tuple[str, str, str]] = [
    ("fact_id", "", "refused"),
    ("fact_id", "a\x01b", "refused"),
    ("fact_id", "a\nb", "refused"),
    ("fact_id", "x" * 200_000, "loaded"),
    ("fact_id", "f0", "refused"),
    ("content", "", "refused"),
    ("content", "   ", "refused"),
    ("content", "\u200b", "refused"),
    ("content", "y" * 200_000, "warned"),
    ("content", "=cmd|' /C calc'!A0", "loaded"),
    ("content", "a\x00b", "warned"),
    ("content", "line one\nline two\r\nline three", "loaded"),
    ("source_type", "Web", "refused"),
    ("source_type", "", "loaded"),
    ("importance_weight", "NaN", "refused"),
    ("importance_weight", "inf", "refused"),
    ("importance_weight", "1e400", "refused"),
    ("importance_weight", "9" * 5000, "refused"),
    ("importance_weight", "-0", "loaded"),
    ("importance_weight", "0x1p-2", "refused"),
    ("importance_weight", "1_0", "refused"),
    ("importance_weight", ".5_0", "refused"),
    ("importance_weight", " 0.25 ", "loaded"),
    ("importance_weight", "\u0660.5", "refused"),
    ("importance_weight", "half", "refused"),
    ("importance_weight", "", "loaded"),
    ("ttl", "P0D", "refused"),
    ("ttl", "P" + "9" * 5000 + "D", "refused"),
    ("ttl", "none", "loaded"),
    ("modified_at", "10000-01-01", "refused"),
    ("modified_at", "2025-03-01T00:00:00+01:00", "loaded"),
    ("metadata", "[]", "refused"),
    ("metadata", "not json", "refused"),
    ("metadata", "[" * 100_000 + "]" * 100_000, "refused"),
    ("metadata", '{"n": ' + "9" * 5000 + "}", "refused"),
    ("metadata", '{"a": {"b": 1}}', "loaded"),
    ("embedding", "", "refused"),
    ("embedding", "[1, 2]", "refused"),
    ("embedding", "1,2,3", "refused"),
    ("embedding", "[" * 100_000 + "]" * 100_000, "refused"),
    ("embedding", "[NaN, 1, 0, 0, 0, 0, 0, 0]", "refused"),
    ("embedding", "[" + ",".join(["1e-50"] * DIM) + "]", "refused"),
    ("embedding", "[" + ", ".join(["9" * 5000] + ["0"] * (DIM - 1)) + "]", "refused"),
    ("embedding", '{"a": 1}', "refused"),
]


def csv_cells(tmp: Path) -> list[Case]:
    """One hostile cell on the second fact row (line 3: the header is line 1)."""
    cases = []
    for n, (col, text, outcome) in enumerate(CSV_CELLS):
        d = tmp / f"{n:04d}"
        d.mkdir()
        path = d / "kb.csv"
        rows = [",".join(CSV_COLUMNS), _csv_row(0), _csv_row(1, **{col: text}), _csv_row(2), _csv_row(3)]
        path.write_text("\r\n".join(rows) + "\r\n", encoding="utf-8", newline="")
        named = col if outcome != "loaded" else None
        line = 3 if outcome != "loaded" else None
        cases.append(Case(f"csv:{col}={text[:30]!r}", outcome, run_ckf(path), line, named))
    return cases + _csv_structure(tmp)


#: whole CSV files (text -> outcome, line, field)
def _csv_files() -> list[tuple[str, str, str, int | None, str | None]]:
    head = ",".join(CSV_COLUMNS)
    good = [_csv_row(i) for i in range(4)]
    return [
        ("header_only", head + "\n", "refused", 0, "file"),
        ("empty", "", "refused", 0, "file"),
        ("no_content_column", "fact_id,embedding\nf0,[1]\n", "refused", 1, "content"),
        ("no_fact_id_column", "content\nx\n", "refused", 1, "fact_id"),
        ("column_twice", "fact_id,content,content\nf0,a,b\n", "refused", 1, "content"),
        ("spaces_around_names", head.replace(",", " , ") + "\n" + "\n".join(good) + "\n", "loaded", None, None),
        ("unknown_column", head + ",colour\n" + "\n".join(g + ",red" for g in good) + "\n", "warned", None, None),
        ("extra_cell", head + "\n" + good[0] + "\n" + good[1] + ",extra\n", "refused", 3, "csv"),
        ("fewer_cells", head + "\n" + good[0] + "\n" + "f9,short\n", "refused", 3, "embedding"),
        ("blank_row", head + "\n" + good[0] + "\n,,,,,,,,\n" + "\n".join(good[1:]) + "\n", "loaded", None, None),
        ("unclosed_quote", head + "\n" + good[0] + '\n"f1,"never closed\n' + good[2] + "\n", "refused", 3, "csv"),
        ("cr_only", "\r".join([head, *good]) + "\r", "loaded", None, None),
        ("mixed_line_ends", head + "\r\n" + good[0] + "\n" + good[1] + "\r\n" + good[2] + "\n", "loaded", None, None),
        ("bom", "\ufeff" + head + "\n" + "\n".join(good) + "\n", "loaded", None, None),
        ("bom_twice", "\ufeff\ufeff" + head + "\n" + "\n".join(good) + "\n", "refused", 1, "fact_id"),
        ("nul_in_header", head.replace("content", "con\x00tent") + "\n" + "\n".join(good) + "\n", "refused", 1, None),
        (
            "semicolons",
            head.replace(",", ";") + "\n" + "\n".join(g.replace(",", ";") for g in good),
            "refused",
            1,
            None,
        ),
        ("header_of_quotes", '""\n' + "\n".join(good) + "\n", "refused", 1, None),
        ("100k_columns", ",".join(f"c{i}" for i in range(100_000)) + ",fact_id,content\n", "refused", 0, "file"),
    ]


def _csv_structure(tmp: Path) -> list[Case]:
    cases = []
    for name, text, outcome, line, fld in _csv_files():
        d = tmp / f"s_{name}"
        d.mkdir()
        path = d / "kb.csv"
        path.write_text(text, encoding="utf-8", newline="")
        cases.append(Case(f"csv:file:{name}", outcome, run_ckf(path), line, fld))
    return cases


# ---- JSON Lines: bytes, line ends, truncation, duplicates -----------------------------------------
def _good_jsonl() -> bytes:
    return ("\n".join(json.dumps(fact(i)) for i in range(4)) + "\n").encode()


def jsonl_bytes(tmp: Path) -> list[Case]:
    """Truncation at 40 seeded offsets inside a line (that line is not valid JSON), an invalid UTF-8
    byte at 20 seeded offsets (refused at its line), line-end and BOM variants (loaded)."""
    r = rng("jsonl_bytes")
    data = _good_jsonl()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    cases: list[Case] = []

    def line_of(off: int) -> int:
        return sum(1 for s in starts if s <= off)

    inside = [o for o in range(1, len(data)) if data[o - 1] != 0x0A and o not in starts]
    for off in sorted(r.sample(inside, 40)):
        path = tmp / f"cut{off}.jsonl"
        path.write_bytes(data[:off])
        cases.append(Case(f"jsonl:cut@{off}", "refused", run_ckf(path), line_of(off - 1), "json"))
    for off in sorted(r.sample(range(len(data) - 1), 20)):
        if data[off] == 0x0A:
            continue
        path = tmp / f"bad{off}.jsonl"
        path.write_bytes(data[:off] + b"\xff" + data[off + 1 :])
        says = f"byte 0xff at line {line_of(off)}, offset {off}"  # the file's problem names where
        cases.append(Case(f"jsonl:0xff@{off}", "refused", run_ckf(path), 0, "file", says=says))
    text = data.decode()
    variants = {
        "crlf": text.replace("\n", "\r\n"),
        "bom": "\ufeff" + text,
        "bom_crlf": "\ufeff" + text.replace("\n", "\r\n"),
        "no_final_newline": text.rstrip("\n"),
        "blank_lines": "\n\n" + text.replace("\n", "\n\n  \n"),
        "tabs_around": "\t" + text.replace("\n", "\t\n\t"),
    }
    for name, t in variants.items():
        path = tmp / f"{name}.jsonl"
        path.write_text(t, encoding="utf-8", newline="")
        cases.append(Case(f"jsonl:{name}", "loaded", run_ckf(path)))
    bad = {
        "cr_only": (text.replace("\n", "\r"), 1, "json"),
        "bom_inside": (text.replace("\n", "\n\ufeff", 1), 2, "json"),
        "nul_between_lines": (text.replace("\n", "\n\x00\n", 1), 2, "json"),
        "u2028_as_line_end": (text.replace("\n", "\u2028"), 1, "json"),
    }
    for name, (t, line, fld) in bad.items():
        path = tmp / f"{name}.jsonl"
        path.write_text(t, encoding="utf-8", newline="")
        cases.append(Case(f"jsonl:{name}", "refused", run_ckf(path), line, fld))
    return cases + _duplicates(tmp)


def _duplicates(tmp: Path) -> list[Case]:
    """A duplicated id at each position, a key given twice in a fact for each field (warned: the last
    value is used), the whole file repeated."""
    cases = []
    for pos in range(1, 4):
        lines = [json.dumps(fact(i)) for i in range(4)]
        lines[pos] = json.dumps({**fact(pos), "fact_id": "f0"})
        path = tmp / f"dup_id{pos}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cases.append(Case(f"jsonl:duplicate_id@{pos + 1}", "refused", run_ckf(path), pos + 1, "fact_id"))
    for key in ("fact_id", "content", "source_type", "importance_weight", "ttl", "embedding", "metadata"):
        f = fact(1, importance_weight=0.5, ttl="P30D", metadata={})
        text = json.dumps(f)
        path = tmp / f"dupkey_{key}.jsonl"
        first = json.dumps({key: f[key]})[1:-1]
        lines = [json.dumps(fact(0)), "{" + first + ", " + text[1:], json.dumps(fact(2))]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cases.append(Case(f"jsonl:duplicate_key:{key}", "warned", run_ckf(path), 2, key))
    path = tmp / "twice.jsonl"
    path.write_bytes(_good_jsonl() * 2)
    cases.append(Case("jsonl:file_twice", "refused", run_ckf(path), 5, "fact_id"))
    return cases


# ---- JSON documents -------------------------------------------------------------------------------
def json_documents(tmp: Path) -> list[Case]:
    """The JSON wrapper's keys and shapes, and truncation of a JSON list at 25 offsets."""
    facts = [fact(i) for i in range(4)]
    docs: list[tuple[str, str, str, int | None, str | None]] = [
        ("list", json.dumps(facts), "loaded", None, None),
        ("wrapper", json.dumps({"facts": facts, "embedding_model": MODEL, "dim": DIM}), "loaded", None, None),
        ("wrapper_unknown_key", json.dumps({"facts": facts, "colour": 1}), "warned", 0, None),
        ("wrapper_facts_missing", json.dumps({"fact": facts}), "refused", 0, "facts"),
        ("wrapper_facts_null", json.dumps({"facts": None}), "refused", 0, "facts"),
        ("wrapper_facts_object", json.dumps({"facts": {"a": 1}}), "refused", 0, "facts"),
        ("wrapper_facts_empty", json.dumps({"facts": []}), "refused", 0, None),
        ("empty_list", "[]", "refused", 0, None),
        ("number", "42", "refused", 0, None),
        ("string", '"facts"', "refused", 0, None),
        ("null", "null", "refused", 0, None),
        ("empty_file", "", "refused", 1, "json"),
        ("two_documents", json.dumps(facts) + json.dumps(facts), "refused", 1, "json"),
        ("deep", "[" * 100_000 + "]" * 100_000, "refused", 0, "json"),
        ("list_of_numbers", "[1, 2, 3]", "refused", 1, "fact"),
        ("list_of_lists", "[[1], [2]]", "refused", 1, "fact"),
    ]
    for v in ("0", "-1", "1.5", "true", '"8"', "null", "1e400", "NaN", "9" * 5000, "7", "9"):
        outcome = "loaded" if v in ("null",) else "refused"
        fld = None if outcome == "loaded" else ("json" if v == "9" * 5000 else "dim")
        line = None if outcome == "loaded" else 0
        if v in ("7", "9"):  # a whole number: each fact of another dimension is in error
            line, fld = 1, "embedding"
        text = json.dumps({"facts": facts, "dim": "RAW"}).replace('"RAW"', v)
        docs.append((f"wrapper_dim={v[:12]}", text, outcome, line, fld))
    for v in ('""', "42", '"other-model"', "null", '"' + "m" * 100_000 + '"', '"a\\u0000b"'):
        outcome = "loaded" if v == "null" else "refused"
        text = json.dumps({"facts": facts, "embedding_model": "RAW"}).replace('"RAW"', v)
        docs.append((f"wrapper_model={v[:12]}", text, outcome, None if outcome == "loaded" else 0, None))
    cases = []
    for n, (name, text, outcome, line, fld) in enumerate(docs):
        path = tmp / f"{n:03d}.json"
        path.write_text(text, encoding="utf-8")
        cases.append(Case(f"json:{name}", outcome, run_ckf(path), line, fld))
    data = json.dumps(facts, indent=1).encode()
    for off in cut_offsets(len(data) - 1, 25, rng("json_documents")):
        path = tmp / f"cut{off}.json"
        path.write_bytes(data[:off])
        line = data[:off].count(b"\n") + 1  # the decoder stops at the cut: its line
        cases.append(Case(f"json:cut@{off}", "refused", run_ckf(path), line, "json"))
    return cases


# ---- CKF folders ----------------------------------------------------------------------------------
def _folder(d: Path, arr: object = None, manifest: object = None, n: int = 3) -> Path:
    d.mkdir(parents=True)
    lines = [
        json.dumps({k: v for k, v in fact(i).items() if k not in ("embedding", "embedding_model")}) for i in range(n)
    ]
    (d / "facts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if arr is not None:
        if isinstance(arr, bytes):
            (d / "embeddings.npy").write_bytes(arr)
        else:
            np.save(d / "embeddings.npy", arr, allow_pickle=True)
    if manifest is not None:
        (d / "manifest.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    return d


def folders(tmp: Path) -> list[Case]:
    """embeddings.npy of every dtype and shape, a bad value on each row, truncation at 25 offsets;
    manifest.json's keys and values."""
    good = np.array([vec(i) for i in range(3)], dtype=np.float32)
    man = {"embedding_model": MODEL, "dim": DIM}
    arrays: list[tuple[str, object, str, int | None, str | None]] = [
        ("ok", good, "loaded", None, None),
        ("float16", good.astype(np.float16), "refused", 0, "embeddings.npy"),
        ("float64", good.astype(np.float64), "refused", 0, "embeddings.npy"),
        ("int32", good.astype(np.int32), "refused", 0, "embeddings.npy"),
        ("complex64", good.astype(np.complex64), "refused", 0, "embeddings.npy"),
        ("bool", good.astype(bool), "refused", 0, "embeddings.npy"),
        ("object", np.array([[object()]], dtype=object), "refused", 0, "embeddings.npy"),
        ("structured", np.zeros(3, dtype=[("a", "f4"), ("b", "f4")]), "refused", 0, "embeddings.npy"),
        ("one_d", good.ravel(), "refused", 0, "embeddings.npy"),
        ("three_d", good.reshape(3, 2, 4), "refused", 0, "embeddings.npy"),
        ("zero_columns", np.zeros((3, 0), dtype=np.float32), "refused", 0, "embeddings.npy"),
        ("rows_2", good[:2], "refused", 0, "embeddings.npy"),
        ("rows_4", np.vstack([good, good[:1]]), "refused", 0, "embeddings.npy"),
        ("fortran_order", np.asfortranarray(good), "loaded", None, None),
        ("big_endian", good.astype(">f4"), "refused", 0, "embeddings.npy"),  # float32 of this machine's order
        ("scalar", np.float32(1.0), "refused", 0, "embeddings.npy"),
        ("not_npy", b"not an npy file", "refused", 0, "embeddings.npy"),
        ("empty_file", b"", "refused", 0, "embeddings.npy"),
        ("header_lies_shape", _npy_lying_header(good), "refused", 0, "embeddings.npy"),
    ]
    for row in range(3):
        for bad, v in (("nan", np.nan), ("inf", np.inf), ("zero", 0.0)):
            a = good.copy()
            a[row] = v
            arrays.append((f"row{row + 1}_{bad}", a, "refused", row + 1, "embedding"))
    cases = []
    for name, arr, outcome, line, fld in arrays:
        path = _folder(tmp / f"npy_{name}", arr, man)
        cases.append(Case(f"dir:npy:{name}", outcome, run_ckf(path), line, fld))
    raw = (tmp / "npy_ok" / "embeddings.npy").read_bytes()
    for off in cut_offsets(len(raw), 25, rng("folders")):
        path = _folder(tmp / f"npy_cut{off}", raw[:off], man)
        cases.append(Case(f"dir:npy:cut@{off}", "refused", run_ckf(path), 0, "embeddings.npy"))
    manifests: list[tuple[str, object, str, str | None]] = [
        ("absent", None, "loaded", None),
        ("dim_16", {**man, "dim": 16}, "refused", None),
        ("dim_string", {**man, "dim": "8"}, "refused", None),
        ("dim_bool", {**man, "dim": True}, "refused", None),
        ("dim_nan", json.dumps(man).replace(str(DIM), "NaN"), "refused", None),
        ("dim_5000_digits", json.dumps(man).replace(str(DIM), "9" * 5000), "refused", "manifest.json"),
        ("dim_negative", {**man, "dim": -8}, "refused", None),
        ("model_other", {**man, "embedding_model": "other"}, "loaded", None),
        ("model_empty", {**man, "embedding_model": ""}, "refused", None),
        ("model_number", {**man, "embedding_model": 3}, "refused", None),
        ("unknown_key", {**man, "colour": "red"}, "warned", None),
        ("a_list", [man], "refused", "manifest.json"),
        ("not_json", "{dim: 8", "refused", "manifest.json"),
        ("deep", "[" * 100_000 + "]" * 100_000, "refused", "manifest.json"),
        ("empty", "", "refused", "manifest.json"),
        ("not_utf8", "\udcff", "refused", "manifest.json"),
    ]
    for name, m, outcome, fld in manifests:
        d = tmp / f"man_{name}"
        if name == "not_utf8":
            path = _folder(d, good, None)
            (path / "manifest.json").write_bytes(b'{"dim": 8, "embedding_model": "\xff"}')
        else:
            path = _folder(d, good, m)
        line = 0 if outcome == "refused" else None
        argvs = run_ckf(path)
        if name in ("absent", "model_other"):
            argvs = argvs[:1]  # valid, but not of the scenario's model: run refuses the pairing, not the CKF
        cases.append(Case(f"dir:manifest:{name}", outcome, argvs, line, fld))
    return cases


def _npy_lying_header(good: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, good)
    return buf.getvalue().replace(b"(3, 8)", b"(9, 8)")


FAMILIES = (
    Family(
        "ckf_jsonl_fields",
        "CKF JSON Lines",
        "every field x every hostile value, then values at its rules",
        jsonl_fields,
    ),
    Family("ckf_jsonl_lenient", "CKF JSON Lines", "the values that refuse a fact, loaded --lenient", jsonl_lenient),
    Family("ckf_json_fields", "CKF JSON", "the same values in a JSON list", json_fields),
    Family("ckf_json_documents", "CKF JSON", "the wrapper's keys, shapes and truncation", json_documents),
    Family("ckf_csv", "CKF CSV", "a hostile cell per column, then whole-file shapes", csv_cells),
    Family("ckf_jsonl_bytes", "CKF JSON Lines", "truncation, invalid UTF-8, line ends, BOM, duplicates", jsonl_bytes),
    Family("ckf_folder", "CKF folder", "embeddings.npy dtypes, shapes, rows, truncation; manifest.json", folders),
)


# ---- Parquet --------------------------------------------------------------------------------------
_PQ_STRING = ("fact_id", "content", "source_type", "ttl", "embedding_model")
_PQ_TIME = ("ingested_at",)


def _pq_accepts(col: str, kind: str) -> bool:
    """The Arrow types of docs/reference/ckf.md's Parquet table (a dictionary of strings is a string)."""
    texty = kind in ("string", "large_string", "dictionary")
    if col in _PQ_STRING:
        return texty
    if col in _PQ_TIME:
        return texty or kind == "timestamp"
    if col == "importance_weight":
        return kind in ("int64", "float64")
    if col == "metadata":
        return texty or kind == "struct"
    return kind in ("list_float32", "list_int64", "large_list", "fixed_list")  # embedding


def _pq_column(col: str, kind: str, n: int):  # noqa: C901  one branch per Arrow type of the family
    import datetime as dt

    import pyarrow as pa

    good = {
        "fact_id": [f"f{i}" for i in range(n)],
        "content": [str(fact(i)["content"]) for i in range(n)],
        "source_type": ["web"] * n,
        "ttl": ["P30D"] * n,
        "embedding_model": [MODEL] * n,
        "ingested_at": ["2025-03-01T00:00:00Z"] * n,
        "importance_weight": ["0.5"] * n,
        "metadata": ["{}"] * n,
        "embedding": [json.dumps(vec(i)) for i in range(n)],
    }[col]
    if kind == "string":
        return pa.array(good, pa.string())
    if kind == "large_string":
        return pa.array(good, pa.large_string())
    if kind == "dictionary":
        return pa.array(good, pa.string()).dictionary_encode()
    if kind == "binary":
        return pa.array([g.encode() for g in good], pa.binary())
    if kind == "int64":
        return pa.array([i % 2 for i in range(n)], pa.int64())
    if kind == "float64":
        return pa.array([0.5] * n, pa.float64())
    if kind == "bool":
        return pa.array([True] * n, pa.bool_())
    if kind == "timestamp":
        return pa.array([dt.datetime(2025, 3, 1)] * n, pa.timestamp("us", tz="UTC"))
    if kind == "date32":
        return pa.array([dt.date(2025, 3, 1)] * n, pa.date32())
    if kind == "struct":
        return pa.array([{"a": i} for i in range(n)], pa.struct([("a", pa.int64())]))
    if kind == "null":
        return pa.nulls(n)
    if kind == "decimal":
        import decimal

        return pa.array([decimal.Decimal("0.5")] * n, pa.decimal128(5, 2))
    if kind == "list_float32":
        return pa.array([vec(i) for i in range(n)], pa.list_(pa.float32()))
    if kind == "list_int64":
        return pa.array([[1 if j == i % DIM else 0 for j in range(DIM)] for i in range(n)], pa.list_(pa.int64()))
    if kind == "large_list":
        return pa.array([vec(i) for i in range(n)], pa.large_list(pa.float64()))
    if kind == "fixed_list":
        return pa.array([vec(i) for i in range(n)], pa.list_(pa.float32(), DIM))
    if kind == "list_string":
        return pa.array([["a"]] * n, pa.list_(pa.string()))
    raise ValueError(kind)


_PQ_KINDS = (
    "string",
    "large_string",
    "dictionary",
    "binary",
    "int64",
    "float64",
    "bool",
    "timestamp",
    "date32",
    "struct",
    "null",
    "decimal",
    "list_float32",
    "list_int64",
    "large_list",
    "fixed_list",
    "list_string",
)


def _pq_table(n: int = 4, **columns):
    import pyarrow as pa

    cols = {c: _pq_column(c, "list_float32" if c == "embedding" else "string", n) for c in _PQ_STRING + ("embedding",)}
    cols.update(columns)
    return pa.table(cols)


def _pq_write(path: Path, table, metadata: dict[bytes, bytes] | None = None) -> Path:
    import pyarrow.parquet as pq

    if metadata is not None:
        table = table.replace_schema_metadata(metadata)
    pq.write_table(table, path, row_group_size=2)
    return path


def parquet(tmp: Path) -> list[Case]:
    """Each column given each Arrow type (refused naming the column, or loaded), bad values on a row,
    the key-value metadata's dim and model, truncation at 25 offsets."""
    import pyarrow as pa

    cases = []
    for col in _PQ_STRING + _PQ_TIME + ("importance_weight", "metadata", "embedding"):
        for kind in _PQ_KINDS:
            path = _pq_write(tmp / f"{col}_{kind}.parquet", _pq_table(**{col: _pq_column(col, kind, 4)}))
            argvs = run_ckf(path)
            if kind == "null" and col in ("fact_id", "content"):
                cases.append(Case(f"parquet:{col}:{kind}", "refused", argvs, 1, col))
                continue
            if kind == "null" and col in ("embedding", "embedding_model"):
                argvs = argvs[:1]  # no embeddings / no model name: valid, but run would need MiniLM
            ok = kind == "null" or _pq_accepts(col, kind)
            cases.append(Case(f"parquet:{col}:{kind}", "loaded" if ok else "refused", argvs, 0, None if ok else col))
    rows: list[tuple[str, object, str, int | None, str | None]] = [
        (
            "embedding_null_element",
            pa.array([vec(0), [None] * DIM, vec(2), vec(3)], pa.list_(pa.float32())),
            "refused",
            2,
            "embedding",
        ),
        ("embedding_empty", pa.array([vec(0), [], vec(2), vec(3)], pa.list_(pa.float32())), "refused", 2, "embedding"),
        (
            "embedding_nan",
            pa.array([vec(0), [float("nan")] * DIM, vec(2), vec(3)], pa.list_(pa.float32())),
            "refused",
            2,
            "embedding",
        ),
        (
            "embedding_1e-50",
            pa.array([vec(0), [1e-50] * DIM, vec(2), vec(3)], pa.list_(pa.float64())),
            "refused",
            2,
            "embedding",
        ),
        (
            "embedding_3.5e38",
            pa.array([vec(0), [3.5e38] * DIM, vec(2), vec(3)], pa.list_(pa.float64())),
            "refused",
            2,
            "embedding",
        ),
        (
            "embedding_null_cell",
            pa.array([vec(0), None, vec(2), vec(3)], pa.list_(pa.float32())),
            "refused",
            2,
            "embedding",
        ),
        ("fact_id_duplicate", pa.array(["f0", "f0", "f2", "f3"]), "refused", 2, "fact_id"),
        ("fact_id_control", pa.array(["f0", "f\n1", "f2", "f3"]), "refused", 2, "fact_id"),
        ("content_empty", pa.array(["a", "", "c", "d"]), "refused", 2, "content"),
        ("content_nul", pa.array(["a", "b\x00c", "c", "d"]), "warned", 2, "content"),
        ("weight_nan", pa.array([0.5, float("nan"), 0.5, 0.5]), "refused", 2, "importance_weight"),
        ("weight_int_max", pa.array([0, 2**63 - 1, 0, 1], pa.int64()), "refused", 2, "importance_weight"),
        ("weight_uint_max", pa.array([0, 2**64 - 1, 0, 1], pa.uint64()), "refused", 2, "importance_weight"),
        ("time_ms_max", pa.array([0, 2**63 - 1, 0, 0], pa.timestamp("ms")), "refused", 2, "ingested_at"),
        ("time_ms_min", pa.array([0, -(2**63) + 1, 0, 0], pa.timestamp("ms")), "refused", 2, "ingested_at"),
        ("time_ms_year_1", pa.array([0, -62_135_596_800_000, 0, 0], pa.timestamp("ms")), "loaded", None, None),
        ("time_ns_max", pa.array([0, 2**63 - 1, 0, 0], pa.timestamp("ns")), "loaded", None, None),
        ("time_us_tz", pa.array([0, 10**15, 0, 0], pa.timestamp("us", tz="Asia/Kathmandu")), "loaded", None, None),
        ("metadata_string_list", pa.array(["{}", "[]", "{}", "{}"]), "refused", 2, "metadata"),
        ("metadata_deep", pa.array(["{}", "[" * 100_000 + "]" * 100_000, "{}", "{}"]), "refused", 2, "metadata"),
    ]
    col_of = {"embedding": "embedding", "fact": "fact_id", "content": "content", "weight": "importance_weight"}
    col_of.update({"time": "ingested_at", "metadata": "metadata"})
    for name, arr, outcome, line, fld in rows:
        col = col_of[name.split("_")[0]]
        path = _pq_write(tmp / f"row_{name}.parquet", _pq_table(**{col: arr}))
        cases.append(Case(f"parquet:row:{name}", outcome, run_ckf(path), line, fld))
    metas: list[tuple[str, dict[bytes, bytes], str, int | None, str | None]] = [
        ("dim_8", {b"dim": b"8"}, "loaded", None, None),
        ("dim_9", {b"dim": b"9"}, "refused", 1, "embedding"),
        ("dim_0", {b"dim": b"0"}, "refused", 0, "parquet.dim"),
        ("dim_negative", {b"dim": b"-8"}, "refused", 0, "parquet.dim"),
        ("dim_text", {b"dim": b"eight"}, "refused", 0, "parquet.dim"),
        ("dim_empty", {b"dim": b""}, "refused", 0, "parquet.dim"),
        ("dim_arabic_8", {b"dim": "\u0668".encode()}, "refused", 0, "parquet.dim"),
        ("dim_superscript_2", {b"dim": "\u00b2".encode()}, "refused", 0, "parquet.dim"),
        ("dim_5000_digits", {b"dim": b"9" * 5000}, "refused", 0, "parquet.dim"),
        ("dim_not_utf8", {b"dim": b"\xff8"}, "refused", 0, "parquet.dim"),
        ("model_same", {b"embedding_model": MODEL.encode()}, "loaded", None, None),
        ("model_other", {b"embedding_model": b"other"}, "refused", 1, "embedding_model"),
        ("model_empty", {b"embedding_model": b""}, "refused", 0, "parquet.embedding_model"),
        ("model_not_utf8", {b"embedding_model": b"\xfftest-model"}, "refused", 1, "embedding_model"),
    ]
    for name, meta, outcome, line, fld in metas:
        path = _pq_write(tmp / f"meta_{name}.parquet", _pq_table(), meta)
        cases.append(Case(f"parquet:meta:{name}", outcome, run_ckf(path), line, fld))
    data = _pq_write(tmp / "whole.parquet", _pq_table()).read_bytes()
    for off in cut_offsets(len(data), 25, rng("parquet")):
        path = tmp / f"cut{off}.parquet"
        path.write_bytes(data[:off])
        cases.append(Case(f"parquet:cut@{off}", "refused", run_ckf(path), 0, "parquet"))
    dup = pa.table(
        [_pq_column("fact_id", "string", 4)] * 2 + [_pq_column("content", "string", 4)],
        ["fact_id", "fact_id", "content"],
    )
    cases.append(Case("parquet:column_twice", "refused", run_ckf(_pq_write(tmp / "dup.parquet", dup)), 0, "fact_id"))
    no_id = pa.table({"content": _pq_column("content", "string", 4)})
    cases.append(Case("parquet:no_fact_id", "refused", run_ckf(_pq_write(tmp / "noid.parquet", no_id)), 0, "fact_id"))
    return cases


FAMILIES += (
    Family("ckf_parquet", "CKF Parquet", "each column x each Arrow type, bad rows, metadata, truncation", parquet),
)
