"""Coreference workloads for inference over clusterings (cluster/).

``mh-cora``: Metropolis-Hastings proposals per second on Cora fold 1's test
citations with the shipped pairwise model (greedy, and at T = 1).

``coref-synthetic-<N>``: a generated coreference problem of N mentions
(``synthetic_coref``): N/5 entities whose names are 5 tokens drawn from a
vocabulary of 4N; each mention keeps each token with probability 0.8 and
adds one random token. Pair atoms alone would be N(N-1) (5*10^9 at
N = 100,000); the cluster model keeps the mentions, the pairs that share a
token and one low-rank prior term, so memory follows the evidence. Reports
seconds (model building, agglomerative MAP, MH polishing), peak memory,
proposals per second and pairwise F1 against the planted entities.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.harness import RESULTS_DIR, Skip, data_dir, workload

SYNTHETIC_MLN = """\
// generated coreference model: mentions with tokens
Tok(mention, token)
Same(mention, mention)

2    jaccard(x, y, Tok) >= 0.5 => Same(x, y)
1.5  jaccard(x, y, Tok) >= 0.3 => Same(x, y)
-1   jaccard(x, y, Tok) < 0.3 => Same(x, y)
0.2  !Same(x, y)

Same(x, x).
Same(x, y) => Same(y, x).
Same(x, y) ^ Same(y, z) => Same(x, z).
"""


def synthetic_coref(n: int, seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(mention names, entity of each mention, (mention, token) pairs)."""
    rng = np.random.default_rng(seed)
    n_entities = max(1, n // 5)
    vocab = 4 * n
    names = rng.integers(0, vocab, size=(n_entities, 5))
    entity = np.sort(rng.integers(0, n_entities, size=n))
    keep = rng.random((n, 5)) < 0.8
    toks = names[entity]
    rows = np.repeat(np.arange(n), 5)[keep.ravel()]
    cols = toks.ravel()[keep.ravel()]
    noise = rng.integers(0, vocab, size=n)
    rows = np.concatenate([rows, np.arange(n)])
    cols = np.concatenate([cols, noise])
    pairs = np.unique(np.stack([rows, cols], axis=1), axis=0)
    return [f"M{i}" for i in range(n)], entity, pairs


def write_synthetic(n: int, seed: int = 0) -> tuple[Path, Path, np.ndarray]:
    """The model and evidence files of ``synthetic_coref(n)`` (cached under
    bench/results/synthetic)."""
    folder = RESULTS_DIR / "synthetic" / f"coref-{n}-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    mln_path, db_path, truth_path = folder / "model.mln", folder / "evidence.db", folder / "entity.npy"
    if not (mln_path.exists() and db_path.exists() and truth_path.exists()):
        names, entity, pairs = synthetic_coref(n, seed)
        mln_path.write_text(SYNTHETIC_MLN)
        with open(db_path, "w") as fh:
            fh.writelines(f"Tok(M{m},T{t})\n" for m, t in pairs.tolist())
        np.save(truth_path, entity)
    return mln_path, db_path, np.load(truth_path)


def _pairwise_f1(labels: np.ndarray, truth: np.ndarray) -> dict:
    """Pairwise precision/recall/F1 from label co-occurrence counts."""
    def pairs(*cols):
        _, counts = np.unique(np.stack(cols, axis=1), axis=0, return_counts=True)
        return float(np.sum(counts * (counts - 1) / 2))
    pred, gold, both = pairs(labels), pairs(truth), pairs(labels, truth)
    p = both / pred if pred else 1.0
    r = both / gold if gold else 1.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r) if p + r else 0.0, 4)}


def _synthetic(n: int) -> dict:
    from markovlogic import MLN, Database
    from markovlogic.cluster.agglomerative import AgglomerativeOptions, agglomerative_map
    from markovlogic.cluster.model import build_cluster_model

    mln_path, db_path, truth = write_synthetic(n)
    t0 = time.perf_counter()
    mln = MLN.from_file(mln_path)
    db = Database.from_file(db_path, mln=mln)
    parse = time.perf_counter() - t0
    t1 = time.perf_counter()
    model = build_cluster_model(mln, db, "Same")
    build = time.perf_counter() - t1
    t2 = time.perf_counter()
    ans = agglomerative_map(model, AgglomerativeOptions(polish_steps=20 * n))
    infer = time.perf_counter() - t2
    idx = np.array([int(name[1:]) for name in model.mention_names])
    out = {
        "mentions": n, "linked_pairs": model.stats["linked_pairs"], "parse_seconds": round(parse, 2),
        "model_seconds": round(build, 2), "infer_seconds": round(infer, 2),
        "merges": ans.stats["merges"], "polish_steps": ans.stats["polish_steps"],
        "clusters": ans.stats["clusters"], "entities": int(len(np.unique(truth))),
    }
    out.update(_pairwise_f1(ans.labels, truth[idx]))
    return out


@workload("coref-synthetic-10k", "generated coreference, 10,000 mentions: cluster model + agglomerative MAP")
def coref_10k() -> dict:
    return _synthetic(10_000)


@workload("coref-synthetic-100k", "generated coreference, 100,000 mentions (5e9 pair atoms): cluster model + agglomerative MAP")
def coref_100k() -> dict:
    return _synthetic(100_000)


@workload("mh-cora", "MH proposals per second on Cora fold 1 test (cora-pairwise.mln, 259 citations)")
def mh_cora() -> dict:
    from markovlogic import MLN, Database
    from markovlogic.cluster.mh import MHOptions, mh_map
    from markovlogic.cluster.model import build_cluster_model

    evidence = data_dir() / "cora" / "fold1" / "test-evidence.db"
    if not evidence.exists():
        raise Skip(f"data not found: {evidence}")
    model_path = Path(__file__).resolve().parents[2] / "examples" / "cora-er" / "cora-pairwise.mln"
    mln = MLN.from_file(model_path)
    model = build_cluster_model(mln, Database.from_file(evidence, mln=mln), "SameBib")
    mh_map(model, MHOptions(steps=1000))           # compile
    out = {"mentions": model.n, "linked_pairs": model.stats["linked_pairs"]}
    for name, temp in (("greedy", 0.0), ("t1", 1.0)):
        steps = 2_000_000
        c0 = time.process_time()
        a = mh_map(model, MHOptions(steps=steps, temperature=temp, seed=1))
        cpu = time.process_time() - c0
        out[f"{name}_proposals_per_cpu_s"] = round(steps / cpu)
        out[f"{name}_accepted"] = a.stats["accepted"]
    return out
