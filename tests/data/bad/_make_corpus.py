"""Regenerate the good and bad loader corpora: ``python tests/data/bad/_make_corpus.py``.

The files are committed; this script documents how each was made. Every bad file holds exactly one
problem, named by the file name; the expected line/field live in tests/core/io/ckf/test_ckf_bad.py and
tests/core/io/test_scenario.py.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD = os.path.join(os.path.dirname(HERE), "good")

# three good facts used everywhere: g1, g2, g3
G = [
    {
        "fact_id": "g1",
        "content": "etcd listens for clients on port 2379.",
        "source_type": "official_documentation",
        "ingested_at": "2025-01-10T08:00:00Z",
        "ttl": "P1Y",
        "importance_weight": 0.9,
        "source_id": "etcd-docs",
        "metadata": {"section": "ports"},
    },
    {
        "fact_id": "g2",
        "content": "etcd peers talk on port 2380.",
        "source_type": "community",
        "status": "STALE",
        "modified_at": "2025-03-01T12:00:00+02:00",
        "community_label": "etcd",
    },
    {
        "fact_id": "g3",
        "content": "User note: <script>alert(1)</script> keep\u0007 as data.",
        "source_type": "user_provided",
        "ttl": "none",
        "ingested_at": "2025-02-01",
    },
]
E = [[1.0, 0.0, 0.5], [0.0, 1.0, 0.25], [0.5, 0.5, -1.0]]
MODEL = "test-model"


def jl(objs: list) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs)


def with_(i: int, **kw) -> dict:
    d = dict(G[i])
    d.update(kw)
    return {k: v for k, v in d.items() if v is not None}


def without(i: int, key: str) -> dict:
    d = dict(G[i])
    d.pop(key, None)
    return d


def emb(i: int, e=None) -> dict:
    d = dict(G[i])
    d["embedding"] = E[i] if e is None else e
    return d


def write(name: str, text: str | bytes) -> None:
    path = os.path.join(HERE, name)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode, **({} if isinstance(text, bytes) else {"encoding": "utf-8", "newline": ""})) as fh:
        fh.write(text)


def write_dir(name: str, facts: list, npy: np.ndarray | None, manifest: dict | None) -> None:
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "facts.jsonl"), "w", encoding="utf-8") as fh:
        fh.write(jl(facts))
    if npy is not None:
        np.save(os.path.join(d, "embeddings.npy"), npy, allow_pickle=False)
    if manifest is not None:
        with open(os.path.join(d, "manifest.json"), "w", encoding="utf-8") as fh:
            json.dump(manifest, fh)


def csv_text(rows: list[list[str]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


CSV_HEADER = [
    "fact_id",
    "content",
    "source_type",
    "status",
    "importance_weight",
    "ingested_at",
    "modified_at",
    "ttl",
    "source_id",
    "community_label",
    "metadata",
    "embedding",
    "embedding_model",
]


def csv_row(i: int, e: bool = False, **kw) -> list[str]:
    d = with_(i, **kw)
    out = []
    for c in CSV_HEADER:
        v = d.get(c)
        if c == "embedding" and e:
            v = E[i]
        if c == "embedding_model" and e:
            v = MODEL
        out.append("" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else str(v)))
    return out


def good() -> None:
    shutil.rmtree(GOOD, ignore_errors=True)
    os.makedirs(GOOD)
    facts = [emb(i) | {"embedding_model": MODEL} for i in range(3)]
    with open(os.path.join(GOOD, "facts.jsonl"), "w", encoding="utf-8") as fh:
        fh.write(jl([facts[0], "", facts[1], "   ", facts[2]]))  # blank lines allowed
    with open(os.path.join(GOOD, "facts_list.json"), "w", encoding="utf-8") as fh:
        json.dump(facts, fh, indent=1)
    with open(os.path.join(GOOD, "facts_wrapper.json"), "w", encoding="utf-8") as fh:
        json.dump({"embedding_model": MODEL, "facts": [emb(i) for i in range(3)]}, fh, indent=1)
    with open(os.path.join(GOOD, "facts.csv"), "w", encoding="utf-8", newline="") as fh:
        fh.write(csv_text([CSV_HEADER] + [csv_row(i, e=True) for i in range(3)]))
    d = os.path.join(GOOD, "facts_dir")
    os.makedirs(d)
    with open(os.path.join(d, "facts.jsonl"), "w", encoding="utf-8") as fh:
        fh.write(jl(G))
    np.save(os.path.join(d, "embeddings.npy"), np.array(E, dtype=np.float32), allow_pickle=False)
    with open(os.path.join(d, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump({"embedding_model": MODEL, "dim": 3}, fh)
    with open(os.path.join(GOOD, "no_embeddings.jsonl"), "w", encoding="utf-8") as fh:
        fh.write(jl(G + [{"fact_id": "g4", "content": "no age", "extra_field": 1}]))
    sc = {
        "name": "etcd ports",
        "query": "Which ports does etcd use?",
        "now": "2025-06-01T00:00:00Z",
        "sub_queries": [{"id": "sq1", "text": "client port", "label": "clients"}, {"id": "sq2", "text": "peer port"}],
        "addressed": [{"id": "sq1", "depth_weight": 0.7, "window": 1}],
        "prior_outputs": ["etcd listens for clients on port 2379 by default."],
        "fanout_width": 2,
        "config": {"cdr_min_relevance": 0.5, "ttl_days": {"news": 60}},
    }
    with open(os.path.join(GOOD, "scenario.json"), "w", encoding="utf-8") as fh:
        json.dump(sc, fh, indent=2)
    with open(os.path.join(GOOD, "scenario.toml"), "w", encoding="utf-8") as fh:
        fh.write(
            'name = "etcd ports"\nquery = "Which ports does etcd use?"\nnow = 2025-06-01T00:00:00Z\n'
            'prior_outputs = ["etcd listens for clients on port 2379 by default."]\nfanout_width = 2\n\n'
            '[[sub_queries]]\nid = "sq1"\ntext = "client port"\nlabel = "clients"\n\n'
            '[[sub_queries]]\nid = "sq2"\ntext = "peer port"\n\n'
            '[[addressed]]\nid = "sq1"\ndepth_weight = 0.7\nwindow = 1\n\n'
            "[config]\ncdr_min_relevance = 0.5\n\n[config.ttl_days]\nnews = 60\n"
        )


def bad_ckf() -> None:
    # JSONL: the bad fact is on line 2 unless said otherwise
    write("missing_fact_id.jsonl", jl([G[0], without(1, "fact_id"), G[2]]))
    write("empty_fact_id.jsonl", jl([G[0], with_(1, fact_id="  "), G[2]]))
    write("non_string_fact_id.jsonl", jl([G[0], with_(1, fact_id=42), G[2]]))
    write("duplicate_fact_id.jsonl", jl([G[0], G[1], with_(2, fact_id="g1")]))  # line 3 repeats line 1
    write("missing_content.jsonl", jl([G[0], without(1, "content"), G[2]]))
    write("empty_content.jsonl", jl([G[0], with_(1, content=" \t "), G[2]]))
    write("non_string_content.jsonl", jl([G[0], with_(1, content=["a", "list"]), G[2]]))
    write("unknown_source_type.jsonl", jl([G[0], with_(1, source_type="blog"), G[2]]))
    write("unknown_status.jsonl", jl([G[0], with_(1, status="active"), G[2]]))
    write("bad_timestamp.jsonl", jl([G[0], with_(1, ingested_at="2025-13-01"), G[2]]))
    write("non_string_timestamp.jsonl", jl([G[0], with_(1, modified_at=1700000000), G[2]]))
    write("bad_duration.jsonl", jl([G[0], with_(1, ttl="30 days"), G[2]]))
    write("zero_duration.jsonl", jl([G[0], with_(1, ttl="P0D"), G[2]]))
    write("weight_out_of_range.jsonl", jl([G[0], with_(1, importance_weight=1.2), G[2]]))
    write("weight_not_number.jsonl", jl([G[0], with_(1, importance_weight="high"), G[2]]))
    write("nan_embedding.jsonl", jl([emb(0), emb(1, [0.1, float("nan"), 0.2]), emb(2)]))
    write("inf_embedding.jsonl", jl([emb(0), emb(1, [0.1, float("inf"), 0.2]), emb(2)]))
    write("wrong_dim_embedding.jsonl", jl([emb(0), emb(1, [0.1, 0.2]), emb(2)]))
    write("non_numeric_embedding.jsonl", jl([emb(0), emb(1, [0.1, "x", 0.2]), emb(2)]))
    write("partial_embeddings.jsonl", jl([emb(0), G[1], emb(2)]))
    write("invalid_json_line.jsonl", jl([G[0], '{"fact_id": "g2", "content": "unterminated', G[2]]))
    write("fact_not_object.jsonl", jl([G[0], "[1, 2, 3]", G[2]]))
    write("metadata_not_object.jsonl", jl([G[0], with_(1, metadata=["x"]), G[2]]))
    write("non_string_source_id.jsonl", jl([G[0], with_(1, source_id={"a": 1}), G[2]]))
    write(
        "embedding_model_conflict.jsonl",
        jl(
            [
                emb(0) | {"embedding_model": MODEL},
                emb(1) | {"embedding_model": "other-model"},
                emb(2) | {"embedding_model": MODEL},
            ]
        ),
    )
    write("unpaired_surrogate_content.jsonl", jl([G[0], '{"fact_id": "g2", "content": "bad \\ud800 text"}', G[2]]))
    write("bad_after_blank_lines.jsonl", jl([G[0], "", "", with_(1, status="GONE"), G[2]]))  # line 4
    # whole-file problems (refused even in lenient mode)
    write("not_utf8.jsonl", jl([G[0]]).encode() + b'{"fact_id": "x", "content": "caf\xe9"}\n')
    write("empty_file.jsonl", "\n\n")
    write("invalid_json_document.json", '[\n {"fact_id": "g1", "content": "x"},\n {"fact_id": \n]\n')
    write("json_wrapper_facts_not_list.json", json.dumps({"embedding_model": MODEL, "facts": {"g1": G[0]}}))
    write("json_wrapper_bad_dim.json", json.dumps({"embedding_model": MODEL, "dim": "three", "facts": G}))
    # JSON list: the "line" is the list position
    write("json_list_bad_item.json", json.dumps([G[0], with_(1, source_type="rumour"), G[2]], indent=1))
    # CSV: header is line 1, facts on lines 2-4
    write("csv_bad_weight.csv", csv_text([CSV_HEADER, csv_row(0), csv_row(1, importance_weight="lots"), csv_row(2)]))
    write(
        "csv_bad_embedding_cell.csv",
        csv_text([CSV_HEADER, csv_row(0, e=True), csv_row(1, e=True)[:11] + ["[0.1, 0.2", MODEL], csv_row(2, e=True)]),
    )
    write("csv_bad_metadata_cell.csv", csv_text([CSV_HEADER, csv_row(0), csv_row(1, metadata="{oops"), csv_row(2)]))
    write("csv_too_many_cells.csv", csv_text([CSV_HEADER, csv_row(0), csv_row(1) + ["extra"], csv_row(2)]))
    write("csv_missing_content_column.csv", csv_text([["fact_id", "source_type"], ["g1", "web"]]))
    write("csv_duplicate_column.csv", csv_text([["fact_id", "content", "content"], ["g1", "a", "b"]]))
    # directories
    f32 = np.array(E, dtype=np.float32)
    write_dir("dir_npy_row_count", G, f32[:2], {"embedding_model": MODEL, "dim": 3})
    write_dir("dir_npy_wrong_dtype", G, f32.astype(np.int32), {"embedding_model": MODEL, "dim": 3})
    write_dir("dir_npy_wrong_shape", G, f32.reshape(-1), {"embedding_model": MODEL, "dim": 3})
    write_dir("dir_manifest_dim_mismatch", G, f32, {"embedding_model": MODEL, "dim": 4})
    nan = f32.copy()
    nan[1, 2] = np.nan
    write_dir("dir_npy_nan_row", G, nan, {"embedding_model": MODEL, "dim": 3})
    write_dir("dir_manifest_not_object", G, f32, None)
    with open(os.path.join(HERE, "dir_manifest_not_object", "manifest.json"), "w") as fh:
        fh.write("[1, 2]")
    write_dir("dir_npy_not_npy", G, None, None)
    with open(os.path.join(HERE, "dir_npy_not_npy", "embeddings.npy"), "wb") as fh:
        fh.write(b"this is not numpy")
    write_dir("dir_npy_and_fact_embeddings", [G[0], emb(1), G[2]], f32, {"embedding_model": MODEL, "dim": 3})


def bad_scenarios() -> None:
    base = {
        "query": "Which ports does etcd use?",
        "sub_queries": [{"id": "sq1", "text": "client port"}, {"id": "sq2", "text": "peer port"}],
        "addressed": [{"id": "sq1", "depth_weight": 0.7, "window": 1}],
    }

    def sc(name: str, **kw) -> None:
        d = json.loads(json.dumps(base))
        for k, v in kw.items():
            if v is None:
                d.pop(k, None)
            else:
                d[k] = v
        write(name, json.dumps(d, indent=2) + "\n")

    sq = base["sub_queries"]
    sc("scenario_missing_query.json", query=None)
    sc("scenario_empty_query.json", query="   ")
    sc("scenario_unknown_key.json", sub_querys=[])
    sc("scenario_bad_now.json", now="next tuesday")
    sc("scenario_subqueries_not_list.json", sub_queries={"sq1": "client port"})
    sc("scenario_subquery_missing_text.json", sub_queries=[sq[0], {"id": "sq2"}])
    sc("scenario_duplicate_subquery_id.json", sub_queries=[sq[0], {"id": "sq1", "text": "again"}])
    sc("scenario_addressed_unknown_id.json", addressed=[{"id": "sq9", "depth_weight": 0.7}])
    sc("scenario_depth_weight_out_of_range.json", addressed=[{"id": "sq1", "depth_weight": 1.5}])
    sc("scenario_window_zero.json", addressed=[{"id": "sq1", "depth_weight": 0.5, "window": 0}])
    sc("scenario_negative_fanout.json", fanout_width=-1)
    sc("scenario_prior_outputs_not_strings.json", prior_outputs=["ok", 7])
    sc("scenario_config_unknown_key.json", config={"cdr_min_relevance": 0.5, "relevance_gate": 0.4})
    sc("scenario_config_wrong_type.json", config={"candidate_k": "fifty"})
    sc("scenario_config_unknown_source_type.json", config={"ttl_days": {"blog": 10}})
    sc("scenario_nan_query_embedding.json", query={"text": "q", "embedding": [0.1, float("nan")]})
    sc(
        "scenario_embedding_dim_mismatch.json",
        query={"text": "q", "embedding": [0.1, 0.2, 0.3]},
        sub_queries=[sq[0], {"id": "sq2", "text": "peer port", "embedding": [0.1, 0.2]}],
    )
    write("scenario_invalid_json.json", '{\n  "query": "q",\n  "sub_queries": [,]\n}\n')
    write("scenario_not_object.json", "[1, 2]\n")
    write("scenario_invalid.toml", 'query = "q"\nfanout_width = = 2\n')
    write(
        "scenario_bad_window.toml",
        'query = "q"\n[[sub_queries]]\nid = "a"\ntext = "t"\n[[addressed]]\nid = "a"\ndepth_weight = 0.5\nwindow = 0\n',
    )
    write("scenario_model_mismatch.json", json.dumps(dict(base, embedding_model="other-model"), indent=2))


if __name__ == "__main__":
    for name in os.listdir(HERE):
        p = os.path.join(HERE, name)
        if name.startswith("_"):
            continue
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    good()
    bad_ckf()
    bad_scenarios()
