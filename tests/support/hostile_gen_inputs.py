"""Generated hostile families of the other file readers: crprotocol SDK snapshots and source-type
mappings, scenarios (JSON and TOML), suites, configuration files and ``--set`` values, baselines.
Registry and shared pieces: :mod:`tests.support.hostile_gen`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tests.support.hostile_gen import CKF_OK, SCENARIO_OK, TEST_DATA, Case, Family, cut_offsets, rng, sample
from tests.support.hostile_gen_ckf import BIG_INT, GENERIC

SDK_PLAIN = TEST_DATA / "sdk" / "plain.json"
SDK_MAP = TEST_DATA / "sdk" / "mapping.toml"

# ---- crprotocol SDK snapshots ---------------------------------------------------------------------
#: the SDK fact fields and the JSON type each must have (docs/reference/ckf.md, crprotocol SDK snapshots)
SDK_FIELDS = {
    "fact_id": "key",
    "text": "text",
    "created_at": "epoch",
    "superseded_by": "string",
    "category": "string",
    "confidence": "number",
    "source_window_id": "string",
    "extraction_stage": "integer",
    "age_in_windows": "integer",
    "seen_count": "integer",
    "consumed_by_windows": "strings",
    "graph_edges": "strings",
    "supersession_confidence": "number",
    "tier": "integer",
    "has_embedding": "boolean",
}
_JSON_TYPE = {
    "true": "boolean",
    "int": "integer",
    "negative": "integer",
    "int_400_digits": "integer",
    "half": "number",
    "nan": "nonfinite",
    "inf": "nonfinite",
    "neg_inf": "nonfinite",
    "1e400": "nonfinite",
    "empty_list": "strings",
    "list_of_strings": "strings",
    "empty_object": "object",
}


def sdk_expect(kind: str, mutation: str) -> str:
    """The outcome of an SDK fact whose field of ``kind`` holds the generic value ``mutation``."""
    if mutation in ("int_5000_digits", "deep_nesting"):
        return "refused"  # the snapshot is not valid JSON
    if mutation == "missing":
        return "refused" if kind == "text" else "loaded"  # a missing fact_id is its key
    if mutation == "null":
        return "refused" if kind in ("text", "key") else "loaded"  # null is absent; a null id is not the key
    got = _JSON_TYPE.get(mutation, "string")
    if kind == "key" or mutation == "lone_surrogate":
        return "refused"  # no generic value is the fact's key; no text may hold an unpaired surrogate
    if kind == "text":
        if got != "string" or mutation in ("empty_string", "spaces", "zero_width_only", "lone_surrogate"):
            return "refused"
        return "warned" if mutation in ("nul", "huge_string") else "loaded"
    if kind == "epoch":  # finite epoch seconds within the calendar: an integer of 400 digits is not
        return "loaded" if got in ("integer", "number") and mutation != "int_400_digits" else "refused"
    if kind == "number":
        return "loaded" if got in ("integer", "number") and mutation != "int_400_digits" else "refused"
    return "loaded" if got == kind else "refused"


def _sdk_doc() -> dict[str, Any]:
    return json.loads(SDK_PLAIN.read_text(encoding="utf-8"))


def _sdk_text(doc: dict[str, Any], key: str | None = None, raw: str | None = None, *, fid: str = "p-2") -> str:
    """The snapshot with fact ``fid``'s ``key`` given the raw JSON text ``raw`` (None: absent)."""
    f = doc["payload"]["warm_store"]["facts"][fid]
    if key is not None:
        f.pop(key, None)
        if raw is not None:
            f[key] = "\u0000RAW\u0000"
    text = json.dumps(doc, ensure_ascii=False)
    return text.replace(json.dumps("\u0000RAW\u0000"), raw) if raw is not None else text


def sdk_snapshots(tmp: Path) -> list[Case]:
    """SDK fact fields x hostile values (a seeded half of the product; the second fact: line 2, field
    its JSON path), the header's and payload's keys, truncation at 20 offsets."""
    cases = []
    n = 0
    for key, kind in SDK_FIELDS.items():
        for label, raw in GENERIC.items():
            n += 1
            path = tmp / f"{n:04d}.json"
            path.write_bytes(_sdk_text(_sdk_doc(), key, raw).encode("utf-8", "surrogatepass"))
            outcome = sdk_expect(kind, label)
            if label in ("int_5000_digits", "deep_nesting"):
                line, fld = None, "json"
            elif label == "lone_surrogate" and kind == "string":
                line, fld = 2, 'payload.warm_store.facts["p-2"]'  # the fact "holds text that is not valid Unicode"
            elif outcome == "refused":
                line, fld = 2, f'payload.warm_store.facts["p-2"].{key}'
            else:
                line, fld = (2, 'payload.warm_store.facts["p-2"].text') if outcome == "warned" else (None, None)
            cases.append(Case(f"sdk:{key}={label}", outcome, (("validate", "--json", str(path)),), line, fld))
    return sample(cases, 250, "sdk_snapshots") + _sdk_documents(tmp)


def _nest(depth: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


def _sdk_documents(tmp: Path) -> list[Case]:
    docs: list[tuple[str, Any, str, str | None]] = []

    def edit(name: str, fn, outcome: str, fld: str | None) -> None:
        doc = _sdk_doc()
        fn(doc)
        docs.append((name, doc, outcome, fld))

    for v in (42, None, [], {"sha256": "x"}, "0" * 64, "z" * 100_000, True):
        edit(f"checksum={str(v)[:16]}", lambda d, v=v: d["header"].__setitem__("checksum", v), "warned", None)
    for v, outcome in ((2, "refused"), ("1", "refused"), (None, "loaded"), (10**400, "refused"), (0, "refused")):
        edit(
            f"schema_version={str(v)[:12]}", lambda d, v=v: d["header"].__setitem__("schema_version", v), outcome, None
        )
    for v in (-1, 10**6, "4", 1.5, float("nan")):
        edit(f"fact_count={str(v)[:12]}", lambda d, v=v: d["header"].__setitem__("fact_count", v), "warned", None)
    edit("no_header", lambda d: d.pop("header"), "refused", "header")
    edit("header_a_list", lambda d: d.__setitem__("header", []), "refused", "header")
    edit("no_payload", lambda d: d.pop("payload"), "refused", None)
    edit("facts_a_list", lambda d: d["payload"]["warm_store"].__setitem__("facts", []), "refused", None)
    edit("facts_empty", lambda d: d["payload"]["warm_store"].__setitem__("facts", {}), "refused", None)
    edit("warm_store_null", lambda d: d["payload"].__setitem__("warm_store", None), "refused", None)
    edit("fact_a_string", lambda d: d["payload"]["warm_store"]["facts"].__setitem__("p-2", "x"), "refused", None)
    edit("community_map_list", lambda d: d["payload"].__setitem__("community_map", [1]), "warned", None)
    edit("community_map_big", lambda d: d["payload"].__setitem__("community_map", {"p-1": 10**4000}), "loaded", None)
    edit(
        "community_map_nan", lambda d: d["payload"].__setitem__("community_map", {"p-1": float("nan")}), "warned", None
    )
    edit("event_log_object", lambda d: d["payload"].__setitem__("event_log", {"a": 1}), "loaded", None)
    edit(
        "superseded_self",
        lambda d: d["payload"]["warm_store"]["facts"]["p-2"].__setitem__("superseded_by", "p-2"),
        "warned",
        None,
    )
    edit(
        "superseded_unknown",
        lambda d: d["payload"]["warm_store"]["facts"]["p-2"].__setitem__("superseded_by", "nope"),
        "warned",
        None,
    )

    def cycle(d: dict[str, Any]) -> None:
        facts = d["payload"]["warm_store"]["facts"]
        facts["p-1"]["superseded_by"], facts["p-2"]["superseded_by"] = "p-2", "p-1"

    edit("supersession_cycle", cycle, "warned", None)
    edit("edges_string", lambda d: d["payload"]["warm_store"].__setitem__("edges", "x"), "refused", None)
    fact2 = lambda d: d["payload"]["warm_store"]["facts"]["p-2"]  # noqa: E731  the fact every edit below changes
    # the SDK's own vectors are kept as given, never scored: any shape loads (the checksum warns)
    for name, v in (("nan", [math.nan, 1.0]), ("text", "abc"), ("nested", [[1], [2]]), ("object", {"a": 1})):
        edit(f"embedding_{name}", lambda d, v=v: fact2(d).__setitem__("embedding", v), "loaded", None)
    edit("embedding_400_digits", lambda d: fact2(d).__setitem__("embedding", [10**400, 1]), "loaded", None)
    # created_at within years 1 to 9999 in UTC, and one second beyond each end
    for name, v, outcome in (
        ("year_1", -62_135_596_800.0, "loaded"),
        ("before_year_1", -62_135_596_801.0, "refused"),
        ("year_9999", 253_402_300_799.0, "loaded"),
        ("year_10000", 253_402_300_800.0, "refused"),
    ):
        edit(f"created_at_{name}", lambda d, v=v: fact2(d).__setitem__("created_at", v), outcome, None)
    for name, v in (("400_digits", 10**400), ("nan", math.nan), ("text", "x")):
        edit(f"header_created_at_{name}", lambda d, v=v: d["header"].__setitem__("created_at", v), "warned", None)
    for name, key in (("empty", ""), ("control", "a\nb"), ("spaces", "  ")):
        edit(
            f"fact_key_{name}",
            lambda d, key=key: d["payload"]["warm_store"]["facts"].__setitem__(key, {"text": "x"}),
            "refused",
            None,
        )
    edit("event_log_a_string", lambda d: d["payload"].__setitem__("event_log", "x"), "warned", None)
    edit(
        "critical_state_deep",
        lambda d: d["payload"]["warm_store"].__setitem__("critical_state", _nest(900)),
        "loaded",
        None,
    )
    edit("edge_not_object", lambda d: d["payload"]["warm_store"].__setitem__("edges", {"e": 5}), "refused", None)
    cases = []
    for n, (name, doc, outcome, fld) in enumerate(docs):
        path = tmp / f"doc{n:03d}.json"
        path.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")
        line = 0 if fld is not None else None
        cases.append(Case(f"sdk:doc:{name}", outcome, (("validate", "--json", str(path)),), line, fld))
    data = json.dumps(_sdk_doc(), indent=1).encode()
    for off in cut_offsets(len(data) - 2, 20, rng("sdk_snapshots"), lo=20):
        path = tmp / f"cut{off}.json"
        path.write_bytes(data[:off])
        cases.append(Case(f"sdk:cut@{off}", "refused", (("validate", "--json", str(path)),), None, "json"))
    return cases


# ---- SDK source-type mappings ---------------------------------------------------------------------
#: mapping files (TOML text -> outcome); the snapshot they map is tests/data/sdk/plain.json
SDK_MAPS: list[tuple[str, str, str]] = [
    ("empty", "", "loaded"),
    ("default_only", 'default = "internal"\n', "loaded"),
    ("default_unknown", 'default = "gossip"\n', "refused"),
    ("default_number", "default = 3\n", "refused"),
    ("default_upper", 'default = "INTERNAL"\n', "refused"),
    ("rule_category", '[[rule]]\ncategory = "policy"\nsource_type = "web"\n', "loaded"),
    ("rule_no_source_type", '[[rule]]\ncategory = "policy"\n', "refused"),
    ("rule_no_condition", '[[rule]]\nsource_type = "web"\n', "loaded"),  # matches every fact
    ("rule_bad_source_type", '[[rule]]\ncategory = "x"\nsource_type = "rumour"\n', "refused"),
    ("rule_unknown_key", '[[rule]]\ncolour = "red"\nsource_type = "web"\n', "refused"),
    ("rule_stage_list", '[[rule]]\nextraction_stage = [1, 2, 3]\nsource_type = "web"\n', "loaded"),
    ("rule_stage_string", '[[rule]]\nextraction_stage = "1"\nsource_type = "web"\n', "refused"),
    ("rule_stage_float", '[[rule]]\nextraction_stage = 1.5\nsource_type = "web"\n', "refused"),
    ("rule_stage_bool", '[[rule]]\nextraction_stage = true\nsource_type = "web"\n', "refused"),
    ("rule_stage_nested", '[[rule]]\nextraction_stage = [[1]]\nsource_type = "web"\n', "refused"),
    ("rule_stage_huge", f'[[rule]]\nextraction_stage = {"9" * 4000}\nsource_type = "web"\n', "loaded"),
    ("rule_stage_5000", f'[[rule]]\nextraction_stage = {BIG_INT}\nsource_type = "web"\n', "refused"),
    ("rule_stage_nan", '[[rule]]\nextraction_stage = nan\nsource_type = "web"\n', "refused"),
    ("rule_glob_stars", '[[rule]]\nsource_window_id = "' + "*a" * 200 + 'b"\nsource_type = "web"\n', "loaded"),
    ("rule_glob_brackets", '[[rule]]\nsource_window_id = "[[[[!]"\nsource_type = "web"\n', "loaded"),
    ("rule_glob_huge", '[[rule]]\nsource_window_id = "' + "?" * 100_000 + '"\nsource_type = "web"\n', "loaded"),
    ("rule_category_number", '[[rule]]\ncategory = 5\nsource_type = "web"\n', "refused"),
    ("rule_a_table", '[rule]\ncategory = "x"\nsource_type = "web"\n', "refused"),
    ("rule_a_string", 'rule = "x"\n', "refused"),
    ("unknown_top_key", 'colour = "red"\n', "refused"),
    ("10000_rules", '[[rule]]\ncategory = "x"\nsource_type = "web"\n' * 10_000, "loaded"),
    ("deep", "x = " + "[" * 1000 + "]" * 1000 + "\n", "refused"),
    ("unterminated", 'default = "internal\n', "refused"),
    ("not_toml", "{json: 1}\n", "refused"),
    ("nul", 'default = "inter\u0000nal"\n', "refused"),
    ("bom", '\ufeffdefault = "internal"\n', "refused"),
    ("crlf", 'default = "internal"\r\n[[rule]]\r\ncategory = "policy"\r\nsource_type = "web"\r\n', "loaded"),
]


def sdk_maps(tmp: Path) -> list[Case]:
    """Source-type mapping files through ``validate --sdk-map`` (the snapshot: plain.json)."""
    cases = []
    for name, text, outcome in SDK_MAPS:
        path = tmp / f"{name}.toml"
        path.write_text(text, encoding="utf-8", newline="")
        argv = ("validate", "--json", "--sdk-map", str(path), str(SDK_PLAIN))
        # a mapping is an argument, not the CKF: validate refuses it as every command does (exit 2)
        cases.append(Case(f"sdk_map:{name}", outcome, (argv,), refused_rc=2, says="source-type mapping"))
    path = tmp / "not_utf8.toml"
    path.write_bytes(b'default = "\xffinternal"\n')
    argv = ("validate", "--json", "--sdk-map", str(path), str(SDK_PLAIN))
    cases.append(Case("sdk_map:not_utf8", "refused", (argv,), refused_rc=2, says="source-type mapping"))
    return cases


# ---- scenarios ------------------------------------------------------------------------------------
def _scenario() -> dict[str, Any]:
    doc = json.loads(SCENARIO_OK.read_text(encoding="utf-8"))
    doc["prior_outputs"] = ["an earlier answer"]
    doc["description"] = "d"
    doc["config"] = {"candidate_k": 5}
    doc["expect"] = {"must_include": ["f0"], "min_recall": 0.5, "max_leaks": 3}
    return doc


#: scenario fields (a path into the document) and their kind (docs/reference/scenarios.md)
SCENARIO_FIELDS: dict[str, str] = {
    "name": "string",
    "description": "string",
    "query": "query",
    "query.text": "text",
    "query.embedding": "vector",
    "now": "time",
    "embedding_model": "model",
    "fanout_width": "width",
    "sub_queries": "list",
    "sub_queries[0].id": "text",
    "sub_queries[0].text": "text",
    "sub_queries[0].embedding": "vector",
    "addressed": "list",
    "addressed[0].id": "subquery",
    "addressed[0].depth_weight": "unit_required",
    "addressed[0].window": "window",
    "prior_outputs": "strings",
    "config": "object",
    "config.candidate_k": "candidate_k",
    "expect": "object",
    "expect.must_include": "ids",
    "expect.min_recall": "unit",
    "expect.max_leaks": "count",
}
_REQUIRED = ("query", "text", "subquery", "unit_required")
#: kinds where null is refused, not read as absent (a count, a list the scenario iterates)
_NULL_REFUSED = ("width", "count", "window", "candidate_k", "unit")
#: the value each kind takes, by generic value (beyond the rules of scenario_expect)
_SCENARIO_OK = {
    "width": ("int", "int_400_digits"),  # a whole number >= 0, no upper bound (clamped to the sub-queries)
    "window": ("int", "int_400_digits"),  # a whole number >= 1
    "count": ("int",),  # a whole number from 0 to 2^53
    "candidate_k": ("int",),
    "unit_required": ("half",),
    "unit": ("half",),
    "list": ("empty_list",),
    "strings": ("empty_list", "list_of_strings"),
    "ids": ("list_of_strings",),
    "object": ("empty_object",),
}


def scenario_expect(kind: str, mutation: str) -> str:
    """The outcome of a scenario whose field of ``kind`` holds the generic value ``mutation``."""
    if mutation in ("int_5000_digits", "deep_nesting"):
        return "refused"
    if mutation in ("missing", "null"):
        refused = kind in _REQUIRED or kind == "ids" or (mutation == "null" and kind in _NULL_REFUSED)
        return "refused" if refused else "loaded"  # ids: min_recall needs a non-empty must_include
    got = _JSON_TYPE.get(mutation, "string")
    if kind in _SCENARIO_OK:
        return "loaded" if mutation in _SCENARIO_OK[kind] else "refused"
    if kind in ("vector", "time", "subquery") or got != "string" or mutation == "lone_surrogate":
        return "refused"  # no generic value is a vector, a timestamp or a sub-query's id
    if kind in ("text", "query", "model") and mutation in ("empty_string", "spaces"):
        return "refused"
    return "loaded"  # a string; a model the CKF does not have is refused by run, not by the scenario


def _scenario_field(key: str, kind: str, mutation: str) -> str:
    """The field a refusal names."""
    if mutation == "int_5000_digits" or mutation == "deep_nesting":
        return "json"
    if kind == "ids" and mutation in ("missing", "null", "empty_list"):
        return "expect.min_recall"
    if kind == "query" and mutation == "empty_object":
        return "query.text"
    if kind == "list" and mutation == "list_of_strings":
        return key + "[0]"
    return key


def _set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    parts = path.replace("[0]", ".0").split(".")
    node: Any = doc
    for p in parts[:-1]:
        node = node[int(p)] if p.isdigit() else node[p]
    last = parts[-1]
    if value is _ABSENT:
        node.pop(last, None)
    else:
        node[last] = value


_ABSENT = object()
_MARK = "\u0000RAW\u0000"


def _scenario_text(path: str, raw: str | None) -> tuple[str, int | None]:
    """The scenario (indent 1) with ``path`` given the raw JSON ``raw`` (None: absent), and the line
    the value starts on."""
    doc = _scenario()
    if path.startswith("sub_queries"):
        del doc["addressed"]  # it names sub-query sq0
    _set_path(doc, path, _ABSENT if raw is None else _MARK)
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    if raw is None:
        return text, None
    mark = json.dumps(_MARK)
    line = text[: text.index(mark)].count("\n") + 1
    return text.replace(mark, raw), line


def _scenario_argvs(path: Path) -> tuple[tuple[str, ...], ...]:
    return (
        ("validate", "--json", "--scenario", str(path)),
        ("run", "--ckf", str(CKF_OK), "--scenario", str(path), "--json"),
    )


def scenarios_json(tmp: Path) -> list[Case]:
    """Every scenario field x every hostile value; refusals at the value's line and the field's path."""
    cases = []
    n = 0
    for key, kind in SCENARIO_FIELDS.items():
        for label, raw in GENERIC.items():
            n += 1
            text, line = _scenario_text(key, raw)
            path = tmp / f"{n:04d}.json"
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
            outcome = scenario_expect(kind, label)
            fld = _scenario_field(key, kind, label) if outcome == "refused" else None
            if label == "deep_nesting":
                line = 0  # the document is refused as a whole
            elif outcome != "refused" or raw is None or fld == "expect.min_recall":
                line = None
            argvs = _scenario_argvs(path)
            no_vector = kind == "vector" and label in ("missing", "null")
            if no_vector or (kind == "query" and outcome == "loaded"):
                argvs = argvs[:1]  # no embedding for run: it would need MiniLM
            name = f"scenario:{key}={label}"
            if kind == "model" and outcome == "loaded" and raw not in (None, "null"):
                cases.append(Case(name + ":run", "refused", argvs[1:], says="but the CKF was embedded with"))
                argvs = argvs[:1]
            cases.append(Case(name, outcome, argvs, line, fld, validate_kind="scenario"))
    cases = sample(cases, 360, "scenarios_json")  # every field and value still appear; half the product
    data = json.dumps(_scenario(), indent=1).encode()
    for off in cut_offsets(len(data) - 2, 25, rng("scenarios_json"), lo=2):
        path = tmp / f"cut{off}.json"
        path.write_bytes(data[:off])
        line = data[:off].count(b"\n") + 1
        cases.append(
            Case(f"scenario:cut@{off}", "refused", _scenario_argvs(path), line, "json", validate_kind="scenario")
        )
    return cases


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return repr(v)


def _scenario_toml(top: dict[str, str]) -> str:
    """The scenario as TOML, with top-level keys replaced by the raw TOML texts of ``top``."""
    doc = _scenario()
    lines = []
    for k, v in doc.items():
        if k in top:
            continue
        lines.append(f"{k} = {_toml_value(v)}")
    lines += [f"{k} = {raw}" for k, raw in top.items()]
    return "\n".join(lines) + "\n"


#: TOML values given to scenario keys: (key, TOML text, outcome)
TOML_VALUES: list[tuple[str, str, str]] = [
    ("now", "2025-10-01T00:00:00Z", "loaded"),
    ("now", "2025-10-01", "loaded"),
    ("now", "2025-10-01T00:00:00", "loaded"),
    ("now", "00:00:00", "refused"),
    ("now", "0001-01-01T00:00:00+01:00", "refused"),
    ("now", "9999-12-31T23:59:59-01:00", "refused"),
    ("now", "0001-01-01", "loaded"),
    ("now", "nan", "refused"),
    ("now", '"2025-10-01T00:00:00Z"', "loaded"),
    ("now", '"\u0662025-10-01"', "refused"),
    ("fanout_width", "inf", "refused"),
    ("fanout_width", "nan", "refused"),
    ("fanout_width", "-0", "loaded"),
    ("fanout_width", "0x10", "loaded"),
    ("fanout_width", "1_000", "loaded"),
    ("fanout_width", "1" + "0" * 400, "loaded"),  # no upper bound: clamped to the sub-queries
    ("fanout_width", BIG_INT, "refused"),
    ("fanout_width", "2.0", "refused"),
    ("fanout_width", "true", "refused"),
    ("fanout_width", "1979-05-27", "refused"),
    ("name", '"""multi\nline"""', "loaded"),
    ("name", "'literal \\n'", "loaded"),
    ("name", '"\\u0000"', "loaded"),
    ("name", "[" * 1000 + "]" * 1000, "refused"),
    ("config", "{candidate_k = 1e400}", "refused"),
    ("config", "{candidate_k = nan}", "refused"),
    ("config", "{candidate_k = -inf}", "refused"),
    ("config", "{ttl_days = {web = 0}}", "refused"),
    ("config", '{ttl_days = {web = "none"}}', "loaded"),
    ("config", "{ttl_days = {gossip = 3}}", "refused"),
    ("config", "{a = {b = {c = {d = 1}}}}", "refused"),
    ("prior_outputs", '["x", 1]', "refused"),
    ("prior_outputs", "[" + ", ".join(['"w"'] * 10_000) + "]", "loaded"),
    ("expect", "{max_leaks = 9007199254740993}", "refused"),
    ("expect", "{max_leaks = 9007199254740992}", "loaded"),
    ("expect", "{min_recall = 1.0000000000000002}", "refused"),
    ("expect", '{must_include = ["f0", "f0"]}', "refused"),
    ("expect", '{conflicts = [{fact_a = "f0", fact_b = "f0", winner = "tie"}]}', "refused"),
]


def scenarios_toml(tmp: Path) -> list[Case]:
    """TOML-only values (datetimes, hex and underscored integers, nan and inf, multi-line strings) given
    to scenario keys, whole-file shapes, truncation at 15 offsets."""
    cases = []
    for n, (key, raw, outcome) in enumerate(TOML_VALUES):
        path = tmp / f"{n:03d}.toml"
        path.write_text(_scenario_toml({key: raw}), encoding="utf-8")
        cases.append(Case(f"scenario_toml:{key}={raw[:30]}", outcome, _scenario_argvs(path), validate_kind="scenario"))
    shapes = {
        "empty": ("", "refused"),
        "bom": ("\ufeff" + _scenario_toml({}), "loaded"),
        "crlf": (_scenario_toml({}).replace("\n", "\r\n"), "loaded"),
        "duplicate_key": (_scenario_toml({}) + 'name = "again"\n', "refused"),
        "table_twice": (_scenario_toml({}) + "[config]\n[config]\n", "refused"),
        "nul": (_scenario_toml({}) + "# \u0000\n", "refused"),
        "not_utf8": ("\udcff", "refused"),
    }
    for name, (text, outcome) in shapes.items():
        path = tmp / f"shape_{name}.toml"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        cases.append(Case(f"scenario_toml:{name}", outcome, _scenario_argvs(path), validate_kind="scenario"))
    data = _scenario_toml({}).encode()
    for off in cut_offsets(len(data) - 2, 15, rng("scenarios_toml"), lo=3):
        if data[off - 1 : off] in (b"\n", b"]", b"}") or data[off : off + 1] == b"\n":
            continue
        path = tmp / f"cut{off}.toml"
        path.write_bytes(data[:off])
        cases.append(Case(f"scenario_toml:cut@{off}", "refused", _scenario_argvs(path), validate_kind="scenario"))
    return cases


# ---- suites ---------------------------------------------------------------------------------------
def suites(tmp: Path) -> list[Case]:
    """A suite folder of good scenarios and one hostile one (each scenario value above that refuses):
    ``check`` refuses the suite naming the file, line and field; two names alike; several folders."""
    cases = []
    r = rng("suites")
    picks = [
        (k, lab) for k, kind in SCENARIO_FIELDS.items() for lab in GENERIC if scenario_expect(kind, lab) == "refused"
    ]
    for n, (key, label) in enumerate(sorted(r.sample(picks, 40))):
        d = tmp / f"s{n:03d}"
        d.mkdir()
        (d / "a_ok.json").write_bytes(SCENARIO_OK.read_bytes())
        text, _line = _scenario_text(key, GENERIC[label])
        (d / "b_bad.json").write_bytes(text.encode("utf-8", "surrogatepass"))
        argv = ("check", "--ckf", str(CKF_OK), "--suite", str(d), "--json")
        cases.append(Case(f"suite:{key}={label}", "refused", (argv,), says="b_bad.json"))
    d1, d2 = tmp / "one", tmp / "two"
    for d, name in ((d1, "first"), (d2, "second")):
        d.mkdir()
        doc = json.loads(SCENARIO_OK.read_text())
        doc["name"] = name
        (d / "s.json").write_text(json.dumps(doc))
    cases.append(Case("suite:two_folders", "loaded", (("check", "--ckf", str(CKF_OK), "--suite", str(d1), str(d2)),)))
    cases.append(
        Case("suite:same_folder_twice", "loaded", (("check", "--ckf", str(CKF_OK), "--suite", str(d1), str(d1)),))
    )
    empty = tmp / "empty"
    empty.mkdir()
    cases.append(Case("suite:empty_folder", "refused", (("check", "--ckf", str(CKF_OK), "--suite", str(empty)),)))
    other = tmp / "other_files"
    other.mkdir()
    (other / "notes.txt").write_text("not a scenario")
    (other / "s.json").write_bytes(SCENARIO_OK.read_bytes())
    cases.append(Case("suite:other_files", "loaded", (("check", "--ckf", str(CKF_OK), "--suite", str(other)),)))
    return cases


# ---- configuration files and --set values ---------------------------------------------------------
_CONFIG_VALUES: list[tuple[str, str]] = [
    ("nan", "nan"),
    ("inf", "inf"),
    ("neg_inf", "-inf"),
    ("string", '"5"'),
    ("bool", "true"),
    ("array", "[1]"),
    ("table", "{a = 1}"),
    ("int_400_digits", "1" + "0" * 400),
    ("int_5000_digits", BIG_INT),
    ("date", "2025-01-01"),
    ("deep", "[" * 1000 + "]" * 1000),
]


def configs(tmp: Path) -> list[Case]:
    """Every numeric key given each hostile TOML value in a configuration file (refused naming the key),
    then whole-file shapes; through ``run --config`` and ``check --config``."""
    from crp_core.config import RANGES

    cases = []
    for key in sorted(RANGES):
        for label, raw in _CONFIG_VALUES:
            path = tmp / f"{key}_{label}.toml"
            path.write_text(f"{key} = {raw}\n", encoding="utf-8")
            says = None if label in ("int_5000_digits", "deep") else key
            # through run only: check reads the configuration with the same function (its shapes below)
            cases.append(Case(f"config:{key}={label}", "refused", _config_argvs(path)[:1], says=says))
    files = {
        "empty": ("", "loaded"),
        "comment_only": ("# nothing\n", "loaded"),
        "unknown_key": ("candiate_k = 5\n", "refused"),
        "unknown_table": ("[gossip]\nx = 1\n", "refused"),
        "ttl_unknown_type": ("[ttl_days]\nrumour = 3\n", "refused"),
        "ttl_negative": ("[ttl_days]\nweb = -1\n", "refused"),
        "ttl_none": ('[ttl_days]\nweb = "none"\n', "loaded"),
        "authority_2": ("[source_authority]\nweb = 2\n", "refused"),
        "action_unknown": ('known_conflict_action = "explode"\n', "refused"),
        "flag_number": ("graph_retrieval = 1\n", "refused"),
        "learned_number": ("detector_learned = 0\n", "refused"),
        "learned_word": ('detector_learned = "off"\n', "loaded"),  # the words true/false/on/off are read
        "learned_other_word": ('detector_learned = "maybe"\n', "refused"),
        "learned_table": ("[detector_learned]\nx = 1\n", "refused"),
        "learned_off": ("detector_learned = false\n", "loaded"),
        "key_twice": ("candidate_k = 5\ncandidate_k = 6\n", "refused"),
        "bom": ("\ufeffcandidate_k = 5\n", "loaded"),  # every TOML reader takes a byte-order mark
        "crlf": ("candidate_k = 5\r\ngraph_k = 3\r\n", "loaded"),
        "unterminated": ('known_conflict_action = "keep\n', "refused"),
        "nul": ("candidate_k = 5\u0000\n", "refused"),
        "json": ('{"candidate_k": 5}\n', "refused"),
        "dotted_deep": ("a.b.c.d.e.f = 1\n", "refused"),
        "not_utf8": ("\udcff = 1\n", "refused"),
    }
    for name, (text, outcome) in files.items():
        path = tmp / f"file_{name}.toml"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        cases.append(Case(f"config:file:{name}", outcome, _config_argvs(path)))
    return cases


def _config_argvs(path: Path) -> tuple[tuple[str, ...], ...]:
    return (
        ("run", "--ckf", str(CKF_OK), "--scenario", str(SCENARIO_OK), "--config", str(path), "--json"),
        ("check", "--ckf", str(CKF_OK), "--suite", str(SCENARIO_OK), "--config", str(path), "--json"),
    )


#: hostile ``--set`` items (beyond the range sweep of tests/support/hostile.py): item -> outcome
SET_ITEMS: list[tuple[str, str]] = [
    ("candidate_k=5\ngraph_k=1", "refused"),
    ("candidate_k=5\rx", "refused"),
    ("candidate_k=5\u0000", "refused"),
    ("candidate_k=5\u2028", "loaded"),  # a value's surrounding white space (U+2028 is) is stripped
    ("candidate_k=\u0665", "refused"),
    ("candidate_k=\uff15", "refused"),
    ("candidate_k=5 # a comment", "loaded"),
    ("candidate_k", "refused"),
    ("=5", "refused"),
    ("candidate_k=", "refused"),
    ("candidate_k==5", "refused"),
    ("candidate_k=[5]", "refused"),
    ("candidate_k={a=1}", "refused"),
    ("candidate_k=" + "[" * 1000 + "]" * 1000, "refused"),
    ("candidate_k=" + BIG_INT, "refused"),
    ("candidate_k=0x10", "loaded"),
    ("candidate_k=1_0", "loaded"),
    ("candidate_k=+5", "loaded"),
    ("candidate_k=5.0", "loaded"),  # a whole number written as a float
    ("candidate_k=1e1", "loaded"),
    ('candidate_k="5"', "refused"),
    ("candidate_k=five", "refused"),
    ("ttl_days.web=none", "loaded"),
    ("ttl_days.web=P30D", "refused"),
    ("ttl_days=5", "refused"),
    ("ttl_days.web.x=5", "refused"),
    ("ttl_days..web=5", "refused"),
    ("ttl_days.gossip=5", "refused"),
    ("source_authority.web=0.5", "loaded"),
    ("source_authority.=0.5", "refused"),
    ("known_conflict_action=keep_both", "refused"),
    ("graph_retrieval=yes", "refused"),
    ("detector_learned=maybe", "refused"),
    ("detector_learned=0", "refused"),
    ("detector_learned=FALSE", "loaded"),
    ("detector_learned=1", "refused"),
    ("detector_learned=false", "loaded"),
    ("CANDIDATE_K=5", "refused"),
    (" candidate_k = 5 ", "loaded"),
    ("candidate\u200b_k=5", "refused"),
    ("x" * 100_000 + "=1", "refused"),
    ("candidate_k=" + "9" * 4000, "refused"),
    ("cdr_min_relevance=-0.0", "loaded"),
    ("cdr_min_relevance=1e-400", "loaded"),
    ("cdr_min_relevance=0.5e", "refused"),
]


def set_values(tmp: Path) -> list[Case]:
    """Each hostile ``--set`` item through ``run`` (refused naming the item or key, or run)."""
    cases = []
    for n, (item, outcome) in enumerate(SET_ITEMS):
        argv = ("run", "--ckf", str(CKF_OK), "--scenario", str(SCENARIO_OK), "--json", "--set", item)
        cases.append(Case(f"set:{n:02d}:{item[:30]!r}", outcome, (argv,)))
    return cases


# ---- baselines ------------------------------------------------------------------------------------
def baselines(tmp: Path) -> list[Case]:
    """A baseline written by ``check --write-baseline``, then each of its keys given hostile values."""
    from tests.support.hostile_run import call_main

    good = tmp / "good.json"
    rc, _o, err, _s = call_main(
        ["check", "--ckf", str(CKF_OK), "--suite", str(SCENARIO_OK), "--write-baseline", str(good)], 60
    )
    if rc != 0:
        raise RuntimeError(f"check --write-baseline failed: {err}")
    base = json.loads(good.read_text())
    name = next(iter(base["scenarios"]))
    metric = next(iter(base["scenarios"][name]["metrics"]))
    edits: list[tuple[str, str, str, str]] = [("as_written", "", "", "")]
    for label, raw in GENERIC.items():
        if label == "missing":
            continue
        edits.append(("metric", label, f"scenarios.{name}.metrics.{metric}", raw or "null"))
        edits.append(("kind", label, "kind", raw or "null"))
        edits.append(("version", label, "version", raw or "null"))
        edits.append(("scenarios", label, "scenarios", raw or "null"))
    cases = []
    for n, (key, label, path_s, raw) in enumerate(edits):
        text, outcome = good.read_text(), "loaded"
        if path_s:
            doc = json.loads(text)
            node: Any = doc
            parts = path_s.split(".")
            for p in parts[:-1]:
                node = node[p]
            node[parts[-1]] = _MARK
            text = json.dumps(doc, indent=1, ensure_ascii=False).replace(json.dumps(_MARK), raw)
            outcome = _baseline_expect(key, label)
        path = tmp / f"b{n:03d}.json"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        argv = ("check", "--ckf", str(CKF_OK), "--suite", str(SCENARIO_OK), "--baseline", str(path), "--json")
        fld = None
        if outcome == "refused" and label not in ("int_5000_digits", "deep_nesting"):
            fld = path_s if key == "metric" else key
        # a metric of another value is compared: the gate may fail (exit 1)
        cases.append(Case(f"baseline:{key}={label}", outcome, (argv,), None, fld, loaded_rcs=(0, 1)))
    data = good.read_bytes()
    for off in cut_offsets(len(data) - 2, 15, rng("baselines"), lo=2):
        path = tmp / f"cut{off}.json"
        path.write_bytes(data[:off])
        argv = ("check", "--ckf", str(CKF_OK), "--suite", str(SCENARIO_OK), "--baseline", str(path), "--json")
        cases.append(Case(f"baseline:cut@{off}", "refused", (argv,), data[:off].count(b"\n") + 1, "json"))
    return cases


def _baseline_expect(key: str, label: str) -> str:
    """The outcome of a baseline whose ``key`` holds the generic value ``label`` (docs/reference/reports.md)."""
    if label in ("int_5000_digits", "deep_nesting"):
        return "refused"
    if key == "metric":  # a number a float holds, or null (not measured)
        return "loaded" if label in ("null", "int", "negative", "half") else "refused"
    if key == "scenarios":
        return "loaded" if label == "empty_object" else "refused"  # an object of scenarios (none: nothing compared)
    return "refused"  # kind: only "crp-inspect/suite-metrics"; version: only 1


FAMILIES = (
    Family(
        "sdk_snapshot",
        "crprotocol SDK snapshot",
        "every SDK fact field x every hostile value; header, payload, truncation",
        sdk_snapshots,
    ),
    Family("sdk_map", "SDK source-type mapping", "mapping files: keys, types, globs, sizes, syntax", sdk_maps),
    Family(
        "scenario_json", "scenario (JSON)", "every scenario field x every hostile value; truncation", scenarios_json
    ),
    Family("scenario_toml", "scenario (TOML)", "TOML-only values, file shapes, truncation", scenarios_toml),
    Family("suite", "suite", "a folder with one hostile scenario; several folders", suites),
    Family("config_toml", "configuration file", "every numeric key x hostile TOML values; file shapes", configs),
    Family("set_values", "--set value", "control characters, other scripts' digits, syntax, sizes", set_values),
    Family("baseline", "baseline", "each key of a written baseline x hostile values; truncation", baselines),
)


# ---- expect labels --------------------------------------------------------------------------------
def _pair(a: str, b: str, w: str) -> dict[str, str]:
    return {"fact_a": a, "fact_b": b, "winner": w}


#: expect tables over the folder CKF (facts f0, f1, f2): (name, expect, outcome, field of the refusal)
EXPECTS: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("conflict_ok", {"conflicts": [_pair("f0", "f1", "f0")]}, "loaded", None),
    ("conflict_tie", {"conflicts": [_pair("f0", "f1", "tie")]}, "loaded", None),
    ("winner_b", {"conflicts": [_pair("f0", "f1", "f1")]}, "loaded", None),
    ("winner_outside", {"conflicts": [_pair("f0", "f1", "f2")]}, "refused", "expect.conflicts[0].winner"),
    ("winner_A", {"conflicts": [_pair("f0", "f1", "A")]}, "refused", "expect.conflicts[0].winner"),
    ("same_fact", {"conflicts": [_pair("f0", "f0", "tie")]}, "refused", "expect.conflicts[0].fact_b"),
    ("pair_twice", {"conflicts": [_pair("f0", "f1", "f0"), _pair("f1", "f0", "f0")]}, "refused", "expect.conflicts[1]"),
    ("winner_excluded", {"conflicts": [_pair("f0", "f1", "f0")], "must_exclude": ["f0"]}, "refused", None),
    ("loser_included", {"conflicts": [_pair("f0", "f1", "f0")], "must_include": ["f1"]}, "refused", None),
    ("include_and_exclude", {"must_include": ["f0"], "must_exclude": ["f0"]}, "refused", None),
    ("exclude_twice", {"must_exclude": ["f1", "f1"]}, "refused", "expect.must_exclude[1]"),
    ("unknown_ids", {"must_include": ["nope"]}, "refused", "expect.must_include[0]"),
    ("unknown_conflict_id", {"conflicts": [_pair("f0", "nope", "f0")]}, "refused", None),
    ("conflict_not_object", {"conflicts": ["f0|f1"]}, "refused", "expect.conflicts[0]"),
    ("conflict_extra_key", {"conflicts": [{**_pair("f0", "f1", "f0"), "why": "x"}]}, "refused", None),
    ("conflict_id_number", {"conflicts": [_pair("f0", "f1", "f0") | {"fact_a": 0}]}, "refused", None),
    ("conflicts_object", {"conflicts": {"f0": "f1"}}, "refused", "expect.conflicts"),
    ("unknown_key", {"must_inclde": ["f0"]}, "refused", "expect.must_inclde"),
    ("max_tokens_0", {"max_tokens": 0}, "refused", "expect.max_tokens"),
    ("max_tokens_2^53", {"max_tokens": 2**53}, "loaded", None),
    ("min_overlap_2", {"min_overlap": 2}, "refused", "expect.min_overlap"),
    ("max_duplicates_true", {"max_duplicates": True}, "refused", "expect.max_duplicates"),
    ("10k_conflicts", {"conflicts": [_pair("f0", f"x{i}", "f0") for i in range(10_000)]}, "refused", None),
    ("every_bound", {"must_include": ["f0"], "min_recall": 1, "max_leaks": 0, "max_expired": 0}, "loaded", None),
]


def expects(tmp: Path) -> list[Case]:
    """A scenario's ``expect`` labels over the folder CKF, through ``validate --scenario S --ckf`` and
    ``check`` (a gate that fails is exit 1: a finding, not a refusal)."""
    cases = []
    for n, (name, expect, outcome, fld) in enumerate(EXPECTS):
        doc = json.loads(SCENARIO_OK.read_text(encoding="utf-8"))
        doc["expect"] = expect
        path = tmp / f"{n:02d}.json"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        argvs = (
            ("validate", "--json", "--scenario", str(path), "--ckf", str(CKF_OK)),
            ("check", "--ckf", str(CKF_OK), "--suite", str(path), "--json"),
        )
        case = Case(f"expect:{name}", outcome, argvs, None, fld, validate_kind="scenario", loaded_rcs=(0, 1))
        cases.append(case)
    return cases


FAMILIES += (Family("scenario_expect", "scenario (JSON)", "expect labels: conflicts, bounds, ids of the CKF", expects),)


# ---- scenario shapes through fan-out --------------------------------------------------------------
def _shapes() -> list[tuple[str, dict[str, Any]]]:
    same = [1.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0]
    base = json.loads(SCENARIO_OK.read_text(encoding="utf-8"))
    subs = base["sub_queries"]
    return [
        ("width_400_digits", {"fanout_width": 10**400}),
        (
            "identical_sub_queries",
            {"sub_queries": [{"id": f"s{i}", "text": "t", "embedding": same} for i in range(50)]},
        ),
        ("no_sub_queries_width_5", {"sub_queries": [], "fanout_width": 5}),
        ("one_sub_query_width_2", {"sub_queries": subs[:1], "fanout_width": 2}),
        ("every_sub_query_addressed", {"addressed": [{"id": s["id"], "depth_weight": 1.0} for s in subs]}),
        ("addressed_window_400_digits", {"addressed": [{"id": "sq0", "depth_weight": 0.5, "window": 10**400}]}),
        ("5000_prior_outputs", {"prior_outputs": ["port 2379 serves service"] * 5000}),
        ("prior_output_400k", {"prior_outputs": ["x " * 200_000]}),
        ("query_500k", {"query": {"text": "port " * 100_000, "embedding": same}}),
        ("opposite_sub_queries", {"sub_queries": [{**s, "embedding": [-x for x in s["embedding"]]} for s in subs]}),
        ("now_year_1", {"now": "0001-01-01T00:00:00Z"}),
        ("now_year_9999", {"now": "9999-12-31T23:59:59Z"}),
    ]


def fanout_shapes(tmp: Path) -> list[Case]:
    """Scenario shapes at the edges of fan-out (no, one, identical or opposite sub-queries; widths past
    them; every one addressed; huge outputs and queries; the calendar's ends) through ``fanout`` and
    ``run``: each runs, clamped where the data holds less than asked."""
    cases = []
    for name, change in _shapes():
        doc = json.loads(SCENARIO_OK.read_text(encoding="utf-8"))
        if "sub_queries" in change:
            doc["addressed"] = []
        doc.update(change)
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        argvs = (
            ("fanout", "--ckf", str(CKF_OK), "--scenario", str(path), "--json"),
            ("run", "--ckf", str(CKF_OK), "--scenario", str(path), "--json"),
        )
        cases.append(Case(f"fanout:{name}", "loaded", argvs))
    return cases


FAMILIES += (
    Family("fanout_shapes", "scenario (JSON)", "fan-out edges: sub-queries, widths, sizes, calendar", fanout_shapes),
)
