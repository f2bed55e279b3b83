"""Writes the hostile-input corpus of this folder (issue 12). Run from the repository root:
``python tests/data/hostile/_build.py``. What each file is and what must happen to it is in
``hostile.toml`` next to it; inputs that git cannot hold (a FIFO, link loops) are made at test time
(``make = ...`` entries, see ``tests/support/hostile.py``).

Every file that should load carries 8-d embeddings from ``test-model`` so ``crp-inspect run`` needs
no model; ``scenario_ok.json`` is the matching scenario.
"""

from __future__ import annotations

import io
import json
import math
import pickle
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODEL = "test-model"
DIM = 8


def vec(i: int) -> list[float]:
    """A deterministic unit-ish 8-d vector, three topics."""
    base = [0.0] * DIM
    base[i % 3] = 1.0
    base[3 + i % 5] = 0.25 + 0.01 * i
    return base


def fact(i: int, **extra: object) -> dict[str, object]:
    return {
        "fact_id": f"f{i}",
        "content": f"Fact {i}: port {2379 + i} serves service {i % 4}.",
        "source_type": "official_documentation",
        "ingested_at": "2025-03-01T00:00:00Z",
        "embedding": vec(i),
        "embedding_model": MODEL,
        **extra,
    }


def line(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def jsonl(name: str, lines: list[str], *, eol: str = "\n", bom: bool = False) -> None:
    text = eol.join(lines) + eol
    (HERE / name).write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))


def good(n: int = 4) -> list[str]:
    return [line(fact(i)) for i in range(n)]


def build_ckfs() -> None:
    g = good()
    jsonl("bom_crlf.jsonl", g, eol="\r\n", bom=True)
    csv_rows = ["fact_id,source_type,content,embedding,embedding_model"] + [
        f'f{i},web,"Fact {i}, quoted ""here""","{json.dumps(vec(i))}",{MODEL}' for i in range(4)
    ]
    (HERE / "bom_crlf.csv").write_bytes(b"\xef\xbb\xbf" + ("\r\n".join(csv_rows) + "\r\n").encode("utf-8"))
    (HERE / "csv_extra_cells.csv").write_text("fact_id,content\nf0,one\nf1,two,three\n", encoding="utf-8")
    (HERE / "csv_duplicate_column.csv").write_text("fact_id,content,content\nf0,a,b\n", encoding="utf-8")
    (HERE / "csv_header_only.csv").write_text("fact_id,content\n", encoding="utf-8")
    jsonl(
        "deep_nesting.jsonl",
        g[:1] + ['{"fact_id": "deep", "content": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}"],
    )
    jsonl("huge_integer.jsonl", g[:1] + ['{"fact_id": "big", "content": "x", "importance_weight": ' + "9" * 5000 + "}"])
    jsonl("nan_weight.jsonl", g[:1] + [line(fact(1, importance_weight=math.nan))])  # json writes NaN
    inf = line({**fact(1), "embedding": [math.inf] + vec(1)[1:]})  # json writes Infinity
    jsonl("infinity_embedding.jsonl", g[:1] + [inf])
    jsonl("embedding_1e400.jsonl", g[:1] + [inf.replace("Infinity", "1e400")])
    jsonl("timestamp_1e400.jsonl", g[:1] + [line(fact(1, ingested_at=math.inf)).replace("Infinity", "1e400")])
    jsonl("timestamp_number.jsonl", g[:1] + [line(fact(1, modified_at=1700000000))])
    jsonl("year_0.jsonl", g[:1] + [line(fact(1, ingested_at="0000-01-01T00:00:00Z"))])
    jsonl("year_10000.jsonl", g[:1] + [line(fact(1, modified_at="10000-01-01T00:00:00Z"))])
    jsonl("negative_ttl.jsonl", g[:1] + [line(fact(1, ttl="-P30D"))])
    jsonl("zero_ttl.jsonl", g[:1] + [line(fact(1, ttl="P0D"))])
    jsonl("huge_ttl.jsonl", g[:1] + [line(fact(1, ttl="P99999999999Y"))])
    jsonl("weight_above_one.jsonl", g[:1] + [line(fact(1, importance_weight=1.5))])
    jsonl("status_lower_case.jsonl", g[:1] + [line(fact(1, status="active"))])
    jsonl("oversize_line.jsonl", g[:1] + [line(fact(1, content="x" * 20_000))])
    (HERE / "not_utf8.jsonl").write_bytes((g[0] + "\n").encode() + b'{"fact_id": "l1", "content": "caf\xe9"}\n')
    jsonl("unpaired_surrogate.jsonl", g[:1] + [line(fact(1, content="CONTENT")).replace("CONTENT", "half \\ud800")])
    jsonl("mixed_dims.jsonl", g[:3] + [line({**fact(3), "embedding": vec(3)[:7]})])
    jsonl("zero_embedding.jsonl", g[:1] + [line({**fact(1), "embedding": [0.0] * DIM})])
    jsonl(
        "overflowing_norm.jsonl",
        [line({**fact(i), "embedding": [3e38] * (DIM - 1) + [(-1) ** i * 3e38]}) for i in range(2)],
    )
    jsonl("mixed_models.jsonl", g[:2] + [line({**fact(2), "embedding_model": "other-model"})])
    jsonl("duplicate_ids.jsonl", g[:2] + [line({**fact(5), "fact_id": "f0"})])
    jsonl("duplicate_key.jsonl", [g[0][:-1] + ', "content": "second text"}'] + g[1:])
    jsonl(
        "nfc_equal_ids.jsonl",
        [
            line({**fact(0), "fact_id": "caf\u00e9"}),
            line({**fact(1), "fact_id": "cafe\u0301"}),
            line({**fact(2), "fact_id": "x "}),
            line({**fact(3), "fact_id": "x"}),
        ],
    )
    jsonl("invisible_content.jsonl", g[:1] + [line(fact(1, content="\u200b\u200d \ufeff"))])
    jsonl("nul_in_id.jsonl", g[:1] + [line({**fact(1), "fact_id": "a\u0000b"})])
    jsonl("newline_in_id.jsonl", g[:1] + [line({**fact(1), "fact_id": "a\nCRP-Context-Injected: 1"})])
    jsonl("nul_in_content.jsonl", g[:1] + [line(fact(1, content="before\u0000after"))])
    jsonl(
        "bidi_and_markup_ids.jsonl",
        [
            line({**fact(0), "fact_id": "abc\u202edef"}),
            line({**fact(1), "fact_id": "<script>alert(1)</script>"}),
            line({**fact(2), "fact_id": "[x](javascript:alert(1)) :red[$x^2$]"}),
            line({**fact(3), "fact_id": '=HYPERLINK("http://x")'}),
        ],
    )
    jsonl("line_separators.jsonl", [line(fact(0, content="one\u2028two\u0085three\x1cfour"))] + g[1:])
    jsonl("not_an_object.jsonl", g[:1] + ["[1, 2, 3]"])
    jsonl("invalid_json_line.jsonl", g[:1] + ['{"fact_id": "x", "content": '])
    jsonl("unknown_field.jsonl", [line(fact(0, colour="blue"))] + g[1:])
    jsonl("empty.jsonl", [""] * 3)
    (HERE / "top_level_scalar.json").write_text("42\n", encoding="utf-8")
    (HERE / "wrapper_bad_dim.json").write_text(
        json.dumps({"embedding_model": MODEL, "dim": -1, "facts": [fact(0)]}), encoding="utf-8"
    )
    (HERE / "wrapper_no_facts.json").write_text('{"embedding_model": "m"}', encoding="utf-8")
    (HERE / "unknown_extension.txt").write_text(g[0] + "\n", encoding="utf-8")
    # the knowledge base the --set sweep runs over: 300 facts, 3 topics, some STALE / DELETED
    jsonl(
        "sweep_kb.jsonl",
        [
            line(
                fact(
                    i,
                    status=("ACTIVE", "STALE", "DELETED")[i % 7 // 3 if i % 7 < 9 else 0],
                    source_type=("news", "web", "regulatory", "community")[i % 4],
                )
            )
            for i in range(300)
        ],
    )


def build_dirs() -> None:
    plain = (
        "\n".join(
            line({k: v for k, v in fact(i).items() if k not in ("embedding", "embedding_model")}) for i in range(3)
        )
        + "\n"
    )
    arr = np.array([vec(i) for i in range(3)], dtype=np.float32)

    def folder(name: str, npy: bytes | None, manifest: object | None) -> None:
        d = HERE / name
        d.mkdir(exist_ok=True)
        (d / "facts.jsonl").write_text(plain, encoding="utf-8")
        if npy is not None:
            (d / "embeddings.npy").write_bytes(npy)
        if manifest is not None:
            (d / "manifest.json").write_text(
                manifest if isinstance(manifest, str) else json.dumps(manifest), encoding="utf-8"
            )

    def npy_bytes(a: np.ndarray, *, allow_pickle: bool = False) -> bytes:
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=allow_pickle)
        return buf.getvalue()

    folder("dir_ok", npy_bytes(arr), {"embedding_model": MODEL, "dim": DIM})
    folder(
        "dir_npy_object_dtype",
        npy_bytes(np.array([object()] * 3, dtype=object), allow_pickle=True),
        {"embedding_model": MODEL},
    )
    folder("dir_npy_is_a_pickle", pickle.dumps(arr), {"embedding_model": MODEL})
    folder("dir_npy_float64", npy_bytes(arr.astype(np.float64)), {"embedding_model": MODEL})
    folder("dir_npy_rows_mismatch", npy_bytes(arr[:2]), {"embedding_model": MODEL})
    folder(
        "dir_npy_nan_row",
        npy_bytes(np.vstack([arr[:2], np.full((1, DIM), math.nan, np.float32)])),
        {"embedding_model": MODEL},
    )
    folder("dir_npy_truncated", npy_bytes(arr)[:-7], {"embedding_model": MODEL})
    folder("dir_manifest_lies_dim", npy_bytes(arr), {"embedding_model": MODEL, "dim": 16})
    folder("dir_manifest_not_json", npy_bytes(arr), "{embedding_model: test-model")
    folder("dir_manifest_a_list", npy_bytes(arr), [MODEL])
    (HERE / "dir_without_facts").mkdir(exist_ok=True)
    (HERE / "dir_without_facts" / "notes.txt").write_text("no facts here\n", encoding="utf-8")


def build_scenarios() -> None:
    ok = {
        "name": "hostile-ok",
        "query": {"text": "Which ports?", "embedding": vec(0)},
        "now": "2025-10-01T00:00:00Z",
        "embedding_model": MODEL,
        "fanout_width": 2,
        "sub_queries": [{"id": f"sq{i}", "text": f"ports {i}", "embedding": vec(i)} for i in range(4)],
        "addressed": [{"id": "sq0", "depth_weight": 0.7, "window": 1}],
    }
    (HERE / "scenario_ok.json").write_text(json.dumps(ok, indent=1), encoding="utf-8")

    def sc(name: str, **changes: object) -> None:
        (HERE / name).write_text(json.dumps({**ok, **changes}, indent=1), encoding="utf-8")

    sc("scenario_candidate_k_1e9.json", config={"candidate_k": 1_000_000_000})
    sc("scenario_graph_k_3e8.json", config={"graph_k": 300_000_000})
    sc("scenario_kmeans_n_init_1e8.json", config={"kmeans_n_init": 100_000_000})
    sc("scenario_config_nan.json", config={"cdr_min_relevance": math.nan})
    sc("scenario_unknown_config_key.json", config={"candiate_k": 5})
    sc("scenario_fanout_width_1e12.json", fanout_width=10**12)
    sc("scenario_fanout_width_negative.json", fanout_width=-3)
    sc("scenario_now_1e400.json", now=math.inf)
    sc("scenario_now_year_10000.json", now="10000-01-01T00:00:00Z")
    sc("scenario_embedding_nan.json", query={"text": "q", "embedding": [math.nan] + vec(0)[1:]})
    sc("scenario_embedding_wrong_dim.json", query={"text": "q", "embedding": vec(0)[:5]})
    sc("scenario_embedding_zero.json", query={"text": "q", "embedding": [0.0] * DIM})
    sc("scenario_embedding_3e38.json", query={"text": "q", "embedding": [3e38] * (DIM - 1) + [1e300]})
    sc(
        "scenario_many_sub_queries.json",
        sub_queries=[{"id": f"s{i}", "text": f"t {i}", "embedding": vec(i)} for i in range(2000)],
        addressed=[],
        fanout_width=50,
    )
    (HERE / "scenario_not_utf8.json").write_bytes(b'{"name": "caf\xe9", "query": "q"}')
    (HERE / "scenario_deep.json").write_bytes(b'{"query": "q", "config": ' + b"[" * 50_000 + b"]" * 50_000 + b"}")
    (HERE / "scenario_bad.toml").write_text('query = "q"\n[config\ncandidate_k = 5\n', encoding="utf-8")
    # huge integers: float(10**400) raises OverflowError (not ValueError), and int() of more than 4300
    # digits raises ValueError inside the JSON parser
    big = "1" + "0" * 400
    (HERE / "scenario_config_int_400_digits.json").write_text(
        json.dumps({**ok, "config": {"cdr_min_relevance": 0.5}}, indent=1).replace("0.5", big), encoding="utf-8"
    )
    (HERE / "scenario_max_leaks_400_digits.json").write_text(
        json.dumps({**ok, "expect": {"max_leaks": 7}}, indent=1).replace(": 7", f": {big}"), encoding="utf-8"
    )
    (HERE / "scenario_min_recall_400_digits.json").write_text(
        json.dumps({**ok, "expect": {"must_include": ["f0"], "min_recall": 7}}, indent=1).replace(": 7", f": {big}"),
        encoding="utf-8",
    )
    (HERE / "scenario_int_5000_digits.json").write_text(
        json.dumps({**ok, "fanout_width": 7}, indent=1).replace(": 7", ": 1" + "0" * 5000), encoding="utf-8"
    )
    sc("scenario_max_leaks_a_string.json", expect={"max_leaks": "0"})
    (HERE / "scenario_unterminated_string.json").write_text(
        '{\n "query": "q",\n "name": "never closed\n}\n', encoding="utf-8"
    )


def build_suites() -> None:
    """Inputs of ``check`` (suites, config TOML, baselines); the special files are made at test time."""
    d = HERE / "suite_duplicate_names"
    d.mkdir(exist_ok=True)
    (d / "a.json").write_text(json.dumps({"name": "same", "query": "q"}, indent=1), encoding="utf-8")
    (d / "b.json").write_text(
        json.dumps({"query": "q", "description": "the other", "name": "same"}, indent=1), encoding="utf-8"
    )
    (HERE / "config_int_400_digits.toml").write_text(
        "candidate_k = 5\ncdr_min_relevance = 1" + "0" * 400 + "\n", encoding="utf-8"
    )
    (HERE / "config_int_5000_digits.toml").write_text("cdr_min_relevance = 1" + "0" * 5000 + "\n", encoding="utf-8")
    metrics = {
        "kind": "crp-inspect/suite-metrics",
        "version": 1,
        "scenarios": {"hostile-ok": {"metrics": {"recall": None, "leaks": "none"}}},
    }
    (HERE / "baseline_bad_metric.json").write_text(json.dumps(metrics, indent=1), encoding="utf-8")
    (HERE / "baseline_unterminated.json").write_text(
        '{"kind": "crp-inspect/suite-metrics",\n "scenarios": {"a', encoding="utf-8"
    )


def build_parquet() -> None:
    """Parquet CKFs: a good one, a truncated one, a wrong column type, a bad embedding row (row 3)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [fact(i) for i in range(4)]

    def table(embeddings: list[object], content: object = None) -> pa.Table:
        cols = {
            "fact_id": [r["fact_id"] for r in rows],
            "content": content or [r["content"] for r in rows],
            "source_type": [r["source_type"] for r in rows],
            "ingested_at": [r["ingested_at"] for r in rows],
            "embedding": pa.array(embeddings, type=pa.list_(pa.float32())),
        }
        return pa.table(cols).replace_schema_metadata({b"embedding_model": MODEL.encode()})

    good_table = table([vec(i) for i in range(4)])
    pq.write_table(good_table, HERE / "parquet_ok.parquet", row_group_size=2)
    buf = io.BytesIO()
    pq.write_table(good_table, buf)
    (HERE / "parquet_truncated.parquet").write_bytes(buf.getvalue()[:-40])
    pq.write_table(
        table([vec(i) for i in range(4)], content=pa.array([1, 2, 3, 4])), HERE / "parquet_wrong_type.parquet"
    )
    pq.write_table(
        table([vec(0), vec(1), [1.0, None] + [0.0] * (DIM - 2), vec(3)]),
        HERE / "parquet_bad_embedding_row.parquet",
        row_group_size=2,
    )


def build_tracebacks() -> None:
    """Issue 32, "Tracebacks": TOML nested 1,000 deep (every TOML reader), a TOML scenario ``now`` before
    year 1 in UTC, an SDK map with a 5,000-digit integer, a Parquet timestamp in year 10000 (row 2). The
    triage database with a NULL fact id is made at test time (git ignores ``*.sqlite``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    deep = "a = " + "[" * 1000 + "]" * 1000 + "\n"
    (HERE / "scenario_deep.toml").write_text('query = "q"\n' + deep, encoding="utf-8")
    (HERE / "scenario_now_before_year_1.toml").write_text(
        'query = "q"\nnow = 0001-01-01T00:00:00+01:00\n', encoding="utf-8"
    )
    (HERE / "config_deep.toml").write_text("candidate_k = 5\n" + deep, encoding="utf-8")
    (HERE / "sdk_map_deep.toml").write_text('default = "web"\n' + deep, encoding="utf-8")
    (HERE / "sdk_map_int_5000_digits.toml").write_text(
        '[[rule]]\nsource_type = "web"\nextraction_stage = ' + "9" * 5000 + "\n", encoding="utf-8"
    )
    year_10000_us = 253402300800 * 10**6
    cols = {
        "fact_id": ["f0", "f1"],
        "content": ["Fact 0.", "Fact 1."],
        "ingested_at": pa.array([0, year_10000_us], pa.int64()).cast(pa.timestamp("us", "UTC")),
    }
    pq.write_table(pa.table(cols), HERE / "parquet_year_10000.parquet")


def build_bombs() -> None:
    """Issue 32, "Parquet decompression bomb": one 5 MiB text on a dictionary page, repeated by 100 rows
    (about 1.7 kB on disk, 500 MiB decoded; the footer counts the dictionary once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 100
    cols = {"fact_id": [f"f{i}" for i in range(n)], "content": pa.array(["a" * (5 << 20)] * n)}
    pq.write_table(pa.table(cols), HERE / "parquet_dictionary_bomb.parquet", compression="zstd")


if __name__ == "__main__":
    build_bombs()
    build_tracebacks()
    build_parquet()
    build_ckfs()
    build_dirs()
    build_scenarios()
    build_suites()
