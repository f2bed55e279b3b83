"""Write a deterministic synthetic CKF directory with clustered embeddings (no model needed).

    python bench/make_synthetic_ckf.py --facts 10000 --out bench/data/synth10k
    python bench/make_synthetic_ckf.py --facts 10000 --out bench/data/text10k --no-embeddings
    python bench/make_synthetic_ckf.py --facts 10000 --dense 600 --out bench/data/synth10k-dense

Output: ``facts.jsonl``, ``embeddings.npy`` (float32, one row per fact), ``manifest.json``
(``embedding_model`` "synthetic-clustered-384", ``dim`` 384) and a few scenarios
(``scenario.json``, ``scenario-2.json``, ...) whose query / sub-query embeddings sit near cluster
centres, so the whole pipeline runs without loading a model.

Geometry (all unit vectors in R^384): super-topics S; cluster centres c = norm(S + 0.9 g) (two
clusters of one super-topic have cos ~0.55); facts f = norm(c + r g) with r in [0.45, 0.9]
(pairs inside a cluster: cos ~0.55-0.83). About 5 % of facts are *variants* of another fact
(r = 0.25: cos ~0.94, above 0.85) whose text changes a number, an entity or a negation (value
conflicts); about 3 % are *bridges* mixing two clusters of one super-topic (graph connectors).
``g`` is a standard normal vector scaled to norm ~1.

``--dense N`` appends N facts of one extra, tight cluster (r in [0.3, 0.5]: pairs cos ~0.80-0.92,
cos ~0.9 to the centre, every one of them far above the 0.55 relevance gate; one component of one
domain, every attribute, values differing: many value conflicts above the 0.85 contradiction
similarity) and writes ``scenario-dense.json``, whose query and sub-queries sit on that centre: at
candidate_k=500 every candidate comes from the dense cluster and passes the gate. The base facts and
scenarios are the same as without ``--dense`` (the dense part draws from its own generator).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from datetime import UTC, datetime, timedelta

import numpy as np

MODEL = "synthetic-clustered-384"
DIM = 384
NOW = datetime(2026, 11, 1, tzinfo=UTC)
SPAN_DAYS = 6 * 365

DOMAINS = [
    "etcd",
    "kubernetes",
    "postgres",
    "kafka",
    "nginx",
    "redis",
    "terraform",
    "prometheus",
    "vault",
    "elasticsearch",
    "cassandra",
    "rabbitmq",
    "consul",
    "envoy",
    "grafana",
    "mysql",
    "spark",
    "airflow",
    "istio",
    "ceph",
    "minio",
    "clickhouse",
    "zookeeper",
    "haproxy",
    "jenkins",
    "argo",
    "linkerd",
    "traefik",
    "mongodb",
    "cockroachdb",
]
COMPONENTS = [
    "scheduler",
    "controller",
    "api server",
    "replication",
    "storage engine",
    "query planner",
    "ingress",
    "auth module",
    "metrics exporter",
    "backup agent",
    "cache layer",
    "gateway",
    "compaction",
    "snapshotter",
    "load balancer",
    "operator",
    "sidecar",
    "audit log",
    "tls listener",
    "rate limiter",
    "write-ahead log",
    "admission webhook",
    "garbage collector",
    "leader election",
]
ATTRS = [
    ("default port", "", (1024, 65000)),
    ("request timeout", "seconds", (1, 600)),
    ("maximum connections", "", (10, 10000)),
    ("memory limit", "MiB", (64, 65536)),
    ("retention period", "days", (1, 3650)),
    ("batch size", "records", (1, 5000)),
    ("heartbeat interval", "ms", (10, 10000)),
    ("replica count", "", (1, 9)),
    ("error budget", "%", (1, 50)),
    ("worker threads", "", (1, 256)),
]
ORGS = [
    "Acme Corp",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Stark Industries",
    "Wayne Systems",
    "Hooli",
    "Vandelay Data",
    "Tyrell Cloud",
    "Cyberdyne Ops",
]
SOURCES = [
    ("official_documentation", 0.30),
    ("version_specific", 0.12),
    ("community", 0.14),
    ("internal", 0.12),
    ("web", 0.08),
    ("news", 0.06),
    ("peer_reviewed", 0.05),
    ("regulatory", 0.04),
    ("user_provided", 0.04),
    ("unverified", 0.05),
]
STATUS = [("ACTIVE", 0.93), ("STALE", 0.04), ("DELETED", 0.02), ("QUARANTINED", 0.01)]
TTLS = ["P30D", "P90D", "P6M", "P1Y", "P2Y", "PT12H", "none"]


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def gauss(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_normal((n, DIM)) / math.sqrt(DIM)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def pick(rng, table, n):
    names = [t[0] for t in table]
    p = np.array([t[1] for t in table], dtype=float)
    return rng.choice(len(names), size=n, p=p / p.sum()), names


def vary(i: int, val: int, org: int, value: float) -> tuple[int, str, str]:
    """A variant of an earlier fact changes one thing: its number, its organisation or its polarity."""
    mode = i % 3
    if mode == 0:
        return val + 1 + int(value * 50), ORGS[org], ""
    if mode == 1:
        return val, ORGS[(org + 1 + i % 5) % len(ORGS)], ""
    return val, ORGS[org], "not "


def generate(n: int, seed: int = 0, clusters: int | None = None):
    rng = np.random.default_rng(seed)
    k = clusters or int(min(500, max(100, n // 40)))
    n_super = max(10, k // 8)
    supers = unit(rng.standard_normal((n_super, DIM)))
    cl_super = rng.integers(0, n_super, k)
    centres = unit(supers[cl_super] + 0.9 * gauss(rng, k))
    # cluster identities for text
    cl_domain = rng.integers(0, len(DOMAINS), k)
    cl_comp = rng.integers(0, len(COMPONENTS), k)
    cl_attr = rng.integers(0, len(ATTRS), k)
    kind = rng.random(n)
    cluster = rng.integers(0, k, n)
    vectors = np.empty((n, DIM), dtype=np.float32)
    base_of = np.full(n, -1, dtype=np.int64)
    step = 8192
    r = rng.uniform(0.45, 0.9, n)
    for s in range(0, n, step):
        e = min(n, s + step)
        vectors[s:e] = unit(centres[cluster[s:e]] + r[s:e, None] * gauss(rng, e - s))
    # bridges: mix two clusters of one super-topic
    bridges = np.flatnonzero((kind >= 0.05) & (kind < 0.08))
    partner = np.empty(len(bridges), dtype=np.int64)
    by_super = {sidx: np.flatnonzero(cl_super == sidx) for sidx in range(n_super)}
    for j, i in enumerate(bridges):
        mates = by_super[cl_super[cluster[i]]]
        partner[j] = mates[rng.integers(0, len(mates))]
    if len(bridges):
        vectors[bridges] = unit(centres[cluster[bridges]] + centres[partner] + 0.5 * gauss(rng, len(bridges))).astype(
            np.float32
        )
    # variants: near-copies of an earlier fact
    variants = np.flatnonzero(kind < 0.05)
    variants = variants[variants > 0]
    base = (rng.random(len(variants)) * variants).astype(np.int64)
    base_of[variants] = base
    cluster[variants] = cluster[base]
    vectors[variants] = unit(vectors[base] + 0.25 * gauss(rng, len(variants))).astype(np.float32)

    # metadata
    src_i, src_names = pick(rng, SOURCES, n)
    st_i, st_names = pick(rng, STATUS, n)
    ingest_days = rng.uniform(0, SPAN_DAYS, n)
    modified_gap = np.where(rng.random(n) < 0.4, rng.uniform(0, 1, n) * ingest_days * 0.5, 0.0)
    ttl_pick = np.where(rng.random(n) < 0.12, rng.integers(0, len(TTLS), n), -1)
    imp = np.where(rng.random(n) < 0.2, np.round(rng.uniform(0.3, 1.0, n), 2), np.nan)
    values = rng.random(n)
    version = rng.integers(1, 30, n)
    org = rng.integers(0, len(ORGS), n)
    lines = []
    for i in range(n):
        c = cluster[i]
        dom, comp = DOMAINS[cl_domain[c]], COMPONENTS[cl_comp[c]]
        attr, unit_s, (lo, hi) = ATTRS[cl_attr[c]]
        b = base_of[i]
        seed_i = b if b >= 0 else i
        val = int(lo + values[seed_i] * (hi - lo))
        ver = int(version[seed_i])
        who = ORGS[org[seed_i]]
        neg = ""
        if b >= 0:
            val, who, neg = vary(i, val, int(org[seed_i]), float(values[i]))
        u = f" {unit_s}" if unit_s else ""
        cid = f"c{c:03d}"
        content = f"In {dom} {ver}.x the {comp} {attr} is {neg}{val}{u}, as documented by {who} for cluster {cid}."
        ing = NOW - timedelta(days=float(ingest_days[i]))
        fact = {
            "fact_id": f"F{i:06d}",
            "content": content,
            "source_type": src_names[src_i[i]],
            "status": st_names[st_i[i]],
            "ingested_at": iso(ing),
            "source_id": f"{dom}-docs-{ver}",
            "community_label": f"{dom} {comp}",
            "metadata": {"cluster": int(c), "variant_of": f"F{b:06d}" if b >= 0 else None},
        }
        if modified_gap[i] > 0:
            fact["modified_at"] = iso(ing + timedelta(days=float(modified_gap[i])))
        if ttl_pick[i] >= 0:
            fact["ttl"] = TTLS[ttl_pick[i]]
        if not math.isnan(imp[i]):
            fact["importance_weight"] = float(imp[i])
        if i % 7 == 0:
            fact["source_location"] = (
                f"https://docs.example.org/{dom}/{ver}/{comp.replace(' ', '-')}#{attr.replace(' ', '-')}"
            )
        lines.append(fact)
    for j, i in enumerate(bridges):  # bridge texts mention both clusters
        p = partner[j]
        lines[i]["content"] = (
            f"The {DOMAINS[cl_domain[cluster[i]]]} {COMPONENTS[cl_comp[cluster[i]]]} "
            f"depends on the {DOMAINS[cl_domain[p]]} {COMPONENTS[cl_comp[p]]}: "
            f"clusters c{cluster[i]:03d} and c{p:03d} "
            f"share the {ATTRS[cl_attr[p]][0]} setting."
        )
        lines[i]["metadata"]["bridges"] = [int(cluster[i]), int(p)]
    info = {
        "centres": centres,
        "cl_super": cl_super,
        "cluster": cluster,
        "cl_domain": cl_domain,
        "cl_comp": cl_comp,
        "cl_attr": cl_attr,
        "rng": rng,
    }
    return lines, vectors, info


def make_scenarios(lines, info, count: int = 4):
    """Scenarios whose query / sub-query embeddings sit near cluster centres of one super-topic."""
    rng = info["rng"]
    centres, cl_super = info["centres"], info["cl_super"]
    out = []
    for s in range(count):
        sup = int(rng.integers(0, cl_super.max() + 1))
        mates = np.flatnonzero(cl_super == sup)
        while len(mates) < 3:
            sup = int(rng.integers(0, cl_super.max() + 1))
            mates = np.flatnonzero(cl_super == sup)
        chosen = rng.choice(mates, size=min(len(mates), 3 + s % 4), replace=False)
        qv = unit(centres[chosen[0]] + 0.35 * gauss(rng, 1)[0])

        def name(c):
            return f"{DOMAINS[info['cl_domain'][c]]} {COMPONENTS[info['cl_comp'][c]]} {ATTRS[info['cl_attr'][c]][0]}"

        subs = []
        for j, c in enumerate(chosen):
            v = unit(centres[c] + 0.35 * gauss(rng, 1)[0])
            subs.append(
                {
                    "id": f"sq{j + 1}",
                    "text": f"What is the {name(c)}?",
                    "label": name(c),
                    "embedding": [round(float(t), 6) for t in v],
                }
            )
        addressed = [{"id": "sq1", "depth_weight": 0.7, "window": 1}] if s % 2 == 0 else []
        in_first = [f["content"] for f in lines if f["metadata"]["cluster"] == int(chosen[0])][:2]
        scen = {
            "name": f"synthetic-{s + 1}",
            "description": f"Synthetic scenario {s + 1}: {len(subs)} sub-queries around super-topic {sup}",
            "embedding_model": MODEL,
            "now": iso(NOW),
            "query": {
                "text": f"How should the {name(chosen[0])} be configured?",
                "embedding": [round(float(t), 6) for t in qv],
            },
            "sub_queries": subs,
            "addressed": addressed,
            "prior_outputs": in_first,
            "fanout_width": 0 if s == 0 else 2 + s % 2,
        }
        out.append(scen)
    return out


DENSE_NAME = "scenario-dense.json"
#: query + 14 sub-queries: 15 searches of candidate_k each in stage 1
DENSE_SUB_QUERIES = 14


def add_dense_cluster(lines, vectors, size: int, seed: int = 0):
    """Append ``size`` facts of one tight cluster; returns (lines, vectors, the dense scenario)."""
    rng = np.random.default_rng([seed, 7919])
    centre = unit(rng.standard_normal(DIM))
    r = rng.uniform(0.3, 0.5, size)
    dense = unit(centre + r[:, None] * gauss(rng, size)).astype(np.float32)
    n0 = len(lines)
    dom, comp = DOMAINS[0], COMPONENTS[0]
    src_i, src_names = pick(rng, SOURCES, size)
    ingest_days = rng.uniform(0, SPAN_DAYS, size)
    out = list(lines)
    for j in range(size):
        attr, unit_s, (lo, hi) = ATTRS[j % len(ATTRS)]
        val = int(lo + rng.random() * (hi - lo))
        u = f" {unit_s}" if unit_s else ""
        ver = 1 + j % 5
        who = ORGS[int(rng.integers(0, len(ORGS)))]
        out.append(
            {
                "fact_id": f"F{n0 + j:06d}",
                "content": f"In {dom} {ver}.x the {comp} {attr} is {val}{u}, as documented by {who} "
                f"for the dense cluster.",
                "source_type": src_names[src_i[j]],
                "status": "ACTIVE",
                "ingested_at": iso(NOW - timedelta(days=float(ingest_days[j]))),
                "source_id": f"{dom}-docs-{ver}",
                "community_label": f"{dom} {comp}",
                "metadata": {"cluster": -1, "variant_of": None, "dense": True},
            }
        )
    subs = []
    for j in range(DENSE_SUB_QUERIES):
        attr = ATTRS[j % len(ATTRS)][0] + ("" if j < len(ATTRS) else f" of {dom} {1 + j % 5}.x")
        v = unit(centre + 0.2 * gauss(rng, 1)[0])
        subs.append(
            {
                "id": f"sq{j + 1}",
                "text": f"What is the {dom} {comp} {attr}?",
                "label": f"{dom} {comp} {attr}",
                "embedding": [round(float(t), 6) for t in v],
            }
        )
    qv = unit(centre + 0.2 * gauss(rng, 1)[0])
    scen = {
        "name": "synthetic-dense",
        "description": f"Dense case: the query sits in one cluster of {size} facts (every candidate passes the gate)",
        "embedding_model": MODEL,
        "now": iso(NOW),
        "query": {"text": f"How should the {dom} {comp} be configured?", "embedding": [round(float(t), 6) for t in qv]},
        "sub_queries": subs,
        "addressed": [{"id": "sq1", "depth_weight": 0.7, "window": 1}],
        "prior_outputs": [out[n0]["content"], out[n0 + 1]["content"]],
        "fanout_width": 2,
    }
    return out, np.vstack([vectors, dense]), scen


def write(out_dir: str, lines, vectors, scenarios, *, embeddings: bool = True) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "facts.jsonl"), "w", encoding="utf-8") as fh:
        for f in lines:
            fh.write(json.dumps(f, ensure_ascii=False, separators=(",", ":")) + "\n")
    npy = os.path.join(out_dir, "embeddings.npy")
    man = os.path.join(out_dir, "manifest.json")
    if embeddings:
        np.save(npy, np.ascontiguousarray(vectors, dtype=np.float32))
        with open(man, "w", encoding="utf-8") as fh:
            json.dump({"embedding_model": MODEL, "dim": DIM}, fh)
        for j, sc in enumerate(scenarios):
            fname = "scenario.json" if j == 0 else f"scenario-{j + 1}.json"
            with open(os.path.join(out_dir, fname), "w", encoding="utf-8") as fh:
                json.dump(sc, fh, indent=1)
    else:
        for p in (npy, man):
            if os.path.exists(p):
                os.remove(p)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clusters", type=int, default=None, help="default: facts/40 clamped to 100..500")
    ap.add_argument("--scenarios", type=int, default=4)
    ap.add_argument(
        "--dense",
        type=int,
        default=0,
        metavar="N",
        help="append a dense cluster of N facts and write scenario-dense.json (the dense case)",
    )
    ap.add_argument(
        "--no-embeddings", action="store_true", help="write facts.jsonl only (the model embeds them: cache benchmarks)"
    )
    args = ap.parse_args(argv)
    if args.facts < 1:
        print("--facts must be >= 1", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    lines, vectors, info = generate(args.facts, args.seed, args.clusters)
    scenarios = make_scenarios(lines, info, args.scenarios) if not args.no_embeddings else []
    dense = None
    if args.dense > 0:
        lines, vectors, dense = add_dense_cluster(lines, vectors, args.dense, args.seed)
    write(args.out, lines, vectors, scenarios, embeddings=not args.no_embeddings)
    if dense is not None and not args.no_embeddings:
        with open(os.path.join(args.out, DENSE_NAME), "w", encoding="utf-8") as fh:
            json.dump(dense, fh, indent=1)
    print(f"wrote {len(lines)} facts to {args.out} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
