"""Workloads ``mcsat-ext-*``: what Poon's MC-SAT extensions buy (issue 13, item 3).

``python -m bench.workloads.mcsat_ext [--models isolated,jnt-seg] [--samples 1000] [--variants ...] [--tuffy cse]``

Citation segmentation (``examples/citations/isolated.mln`` and ``jnt-seg.mln``
with their shipped fold-1 weights, ``mln derive`` evidence for Jnt-Seg) on
``cora_refs/fold1/test-evidence.db`` (627 citations, 173,052 ``InField``
atoms, ~628,000 clauses of which 173,052 hard pair clauses). MC-SAT with the
same sample budget (``--samples``, burn-in a tenth, seed 0) in each variant:

- ``plain``: the house's MC-SAT (start: WalkSAT on the hard clauses);
- ``group``: ``group_mutex`` (the hard pair clauses as 57,684 at-most-one
  blocks with a "none" state, :mod:`markovlogic.infer.mutex`);
- ``joint``: ``joint_moves`` (pair moves that move blocks too);
- ``group+joint``;
- ``mws``: ``init_method="maxwalksat"``; ``two-pass``: ``init_method="two-pass"``;
- ``all``: group, joint and two-pass.

Scored by the token F1 of the marginals thresholded at 0.5 (the scorer of
:mod:`bench.workloads.citations`), and against the **exact marginals**: in
these two models every ground clause touches one position of a citation or
two consecutive ones, so each citation is a chain of positions with 8 joint
states of its three ``InField`` atoms and forward-backward gives the exact
marginals of the whole network (:func:`chain_exact_marginals`, checked
against enumeration on small models in ``tests/test_bench_mcsat_ext.py``;
7 s). Columns: ``mae`` mean |p - exact| over all atoms, ``mae_real`` over
the atoms of positions that hold a token, ``off>.1`` atoms off by more than
0.1. Rows ``exact`` (the exact marginals thresholded: the best any sampler
can score this way), ``ILP MAP`` (the default of ``mln infer --map``) and
``baseline`` (the per-token baseline of :mod:`bench.workloads.citations`,
fit on ``train.db``; its 0/1 answers scored against the exact marginals
too).

Why two F1 columns: 132,276 of the 173,052 atoms (76 %) are positions past
the end of their citation (the ``position`` type has P00-P91 for every
citation). There the exact marginal of ``Fvenue`` is just under 0.5 (a
tail is all-venue or all-none with nearly equal weight: the chain rules of
weight 19 and 75 tie its positions together, and nothing else speaks), so
a sampler whose estimate of a tail lands just above 0.5 adds ~70 false
venue tokens, and ``F1`` (all atoms) swings with it; ``F1 real`` scores
only the positions that hold a token.

tuffy/cse and tuffy/class (``--tuffy cse``): no exact answer; error
against the mean of two long runs (plain MC-SAT and MC-SAT with cluster
moves, ``--reference`` samples each, seeds 98 and 99; the first row is one
run against that mean, the noise floor); the trivial baseline answers 0.5
for every atom. Neither has hard pair clauses nor blocks, so ``group`` and
``joint`` change nothing there.

Measured 2026-11-26, ``PYTHONPATH=src:. python -m bench.workloads.mcsat_ext
--models isolated`` and ``--models jnt-seg`` (two processes side by side;
1000 samples, 100 burn-in, seed 0; the machine's load average 6-10 on 2
cores, so wall seconds were 3-6 times the CPU seconds; ``cpu_s`` is the
figure to compare). ``joint`` alone is left out: these networks have no
blocks unless ``group`` makes them, and without blocks it proposes exactly
what ``plain`` does (a 200-sample run gave identical marginals)::

    | model    | row             | F1    | F1 real | mae    | mae real | off>.1 | cpu_s | load |
    | isolated | exact           | .9283 | .9283   | 0      | 0        | 0      | 3.5   | 6.1  |
    | isolated | ILP MAP         | .9338 | .9338   | .1258  | .0220    | 44,682 | 8.7   | 6.5  |
    | isolated | baseline        | .8489 | .8489   | .1392  | .0790    | 46,746 |       |      |
    | isolated | plain           | .6089 | .8651   | .1264  | .0417    | 44,836 | 119.6 | 9.4  |
    | isolated | group           | .5866 | .7955   | .1278  | .0843    | 46,428 | 59.9  | 6.7  |
    | isolated | group+joint     | .5569 | .8327   | .1220  | .0619    | 44,656 | 84.8  | 7.6  |
    | isolated | mws             | .5607 | .9209   | .1213  | .0129    | 43,574 | 111.1 | 6.2  |
    | isolated | two-pass        | .4395 | .9242   | .1248  | .0121    | 44,090 | 121.9 | 8.3  |
    | isolated | cluster         | .4753 | .8970   | .0091  | .0252    | 1,890  | 167.9 | 8.8  |
    | isolated | mws+cluster     | .4775 | .9214   | .0056  | .0102    | 1,196  | 157.6 | 7.4  |
    | isolated | mws+group+joint | .3819 | .9265   | .1200  | .0166    | 43,831 | 67.2  | 9.6  |
    | jnt-seg  | exact           | .9155 | .9155   | 0      | 0        | 0      | 2.3   | 6.3  |
    | jnt-seg  | ILP MAP         | .9181 | .9181   | .1256  | .0239    | 44,811 | 9.6   | 6.5  |
    | jnt-seg  | baseline        | .8489 | .8489   | .1389  | .0802    | 46,759 |       |      |
    | jnt-seg  | plain           | .6390 | .8524   | .1268  | .0455    | 44,994 | 123.4 | 9.3  |
    | jnt-seg  | group           | .5711 | .7789   | .1299  | .0884    | 46,861 | 60.3  | 6.4  |
    | jnt-seg  | group+joint     | .5572 | .8150   | .1224  | .0695    | 44,931 | 86.2  | 7.5  |
    | jnt-seg  | mws             | .5347 | .9098   | .1205  | .0170    | 43,423 | 110.2 | 6.7  |
    | jnt-seg  | two-pass        | .4315 | .9106   | .1233  | .0178    | 43,500 | 123.4 | 9.6  |
    | jnt-seg  | cluster         | .4742 | .8775   | .0100  | .0292    | 2,195  | 165.5 | 8.6  |
    | jnt-seg  | mws+cluster     | .5007 | .9049   | .0066  | .0145    | 1,351  | 152.4 | 7.3  |
    | jnt-seg  | mws+group+joint | .3744 | .9092   | .1207  | .0206    | 43,810 | 67.2  | 9.6  |

Cluster swaps (2026-11-26, fifth session): cluster moves now also swap a
block's true atom for another with all that equivalences tie to the two,
which acts where ``group`` makes blocks. ``--models isolated --variants
group+cluster,mws+group+joint+cluster``, the previous commit and this one
side by side (1,000 samples, seed 0, load 2; the network of today's
``cora_refs`` fold 1, so ``exact``/``ILP MAP``/``baseline`` rows differ
from the table above: exact F1 .9203, ILP MAP .9237, baseline .8489)::

    | row                     | version  | F1    | mae    | mae real | off>.1 | cpu_s |
    | group+cluster           | before   | .8414 | .0144  | .0612    | 4,627  | 80.4  |
    | group+cluster           | swaps    | .8728 | .0107  | .0456    | 3,859  | 83.2  |
    | mws+group+joint+cluster | before   | .9230 | .0035  | .0147    | 1,517  | 87.3  |
    | mws+group+joint+cluster | swaps    | .9178 | .0035  | .0149    | 1,380  | 90.2  |

Then hard ties (atoms tied by cycles of hard implications, moved together;
none in these networks): the same run again beside the commit before the
swaps, ``--variants cluster,mws+cluster,group+cluster``: ``cluster`` and
``mws+cluster`` identical marginals (mae .0047 / .0025, real .0200 / .0107)
at the same CPU (102 / 105 s against 102 / 114 s, the MaxWalkSAT start 1 s
against 10 s being the load); ``group+cluster`` as the swaps row above
(.0107, 80 s against .0144, 81 s).

(``exact`` cpu: the forward-backward; ``ILP MAP``: HiGHS with proof of
optimality, after grounding; MC-SAT rows: the sampler, start included.)

What each extension buys here, read from the error against the exact
marginals (the F1 of thresholded marginals is a poor judge on these
models, see above: the exact marginals themselves score .928/.916, and a
sampler that gets the past-the-end tails right, near 0.5, loses F1 there):

- MaxWalkSAT start (``mws``, ``two-pass``): the error on the real positions
  falls by a factor of 3 (.042 -> .013 Isolated, .046 -> .017 Jnt-Seg) for
  a few seconds of MaxWalkSAT (3.5-8 s wall at that load): from WalkSAT's first solution of the hard clauses the
  chain has not reached the mode of each citation after 1,100 steps; from
  MaxWalkSAT's world it starts there. Two passes cost more and give the same.
- Mutex groups (``group``): no gain. Per sample the chain is cheaper (57,684
  block variables instead of 173,052 atoms, a third of the SampleSAT steps,
  half the CPU) but the error on real positions doubles; with joint moves
  and the same steps per sample as plain MC-SAT (``max_steps=86526``,
  measured on 200 samples: real-position error .062 against .064) it
  equals plain MC-SAT, at about twice its CPU. SampleSAT already crosses a pair clause
  with a two-move walk, so one-step field changes save little, while a
  block move costs more than a single flip (it is not on the fast path).
- Joint pair moves (``joint``): only with blocks; with the groups they take
  back part of what grouping loses (.084 -> .062).
- None of Poon's four touches the largest error: the tails past the end of
  each citation (76 % of the atoms), chains tied by rules of weight 19 and
  75 that MC-SAT never flips as a whole. Cluster moves (not Poon's, see
  :mod:`markovlogic.infer.mcsat`) do: mean error .126 -> .009, atoms off by
  more than 0.1 from 44,836 to 1,890, for 40 % more CPU; with the
  MaxWalkSAT start, .0056 overall and .010 on real positions.

tuffy/cse and tuffy/class, ``--tuffy cse|class --seed S --variants
plain,mws,two-pass,cluster,mws+cluster`` (1000 samples; reference: two runs
of 10,000; the first row is one reference run against their mean; load
5-6.5). cse, seed 0; class, seeds 0, 1, 2 (mean |error| and largest error)::

    | row        | cse mae  | cse max | cse cpu_s | class mae (s0/s1/s2)   | class max (s0/s1/s2) | class cpu_s |
    | reference  | .00019   | .0073   |           | .00034                 | .0135                |             |
    | baseline .5| .46079   | .5      |           | .4749                  | .5                   |             |
    | plain      | .00095   | .0968   | 3.6       | .00160 .00161 .00162   | .076 .112 .104       | 2.2-2.3     |
    | mws        | .00097   | .0657   | 3.6       | .00158 .00174 .00162   | .079 .287 .142       | 2.2-2.4     |
    | two-pass   | .00099   | .0568   | 3.6       | .00160 .00161 .00157   | .077 .077 .120       | 2.2-2.5     |
    | cluster    | .00093   | .0702   | 3.5       | .00152 .00152 .00158   | .077 .062 .083       | 2.6-3.1     |
    | mws+cluster| .00085   | .0536   | 3.5       | .00160 .00154 .00159   | .119 .134 .071       | 2.6-3.0     |

There the extensions change little: no mutex groups, no blocks, few
equivalences (cluster moves are accepted 0.1 % / 0.4 % of the time and
cost 0-40 % more CPU). The MaxWalkSAT start is a risk on class: on seed 1 one
atom was off by 0.29 (0.11 from the usual start): class has hundreds of
small components with two modes, MaxWalkSAT starts every one of them in
its best mode, and 1,100 steps do not leave it; from WalkSAT's random
solution the modes are visited in proportion sooner.

Defaults, from these tables: cluster moves on (the gain on chain-shaped
models is large, the cost elsewhere small); joint moves on (they only act
on blocks, and there they help: .084 -> .062 above; small random networks
with blocks, measured apart: mean largest error .0056 -> .0042 over 30
networks); the
start stays WalkSAT's (``--init hard``: MaxWalkSAT's start wins on the
citation models, loses on class); mutex groups off (no gain measured).

MAP with the groups, ``--map`` (load ~5)::

    | model    | row                              | cost      | cpu_s |
    | isolated | ILP                              | 11,988.7  | 7.7   |
    | isolated | ILP, grouped network             | 11,988.7  | 9.0   |
    | isolated | MaxWalkSAT 20 x 50k              | 88,593.4  | 2.3   |
    | isolated | MaxWalkSAT 20 x 50k, group_mutex | 132,082.9 | 2.6   |
    | isolated | MaxWalkSAT 1 x 10M               | 19,029.8  | 2.9   |
    | isolated | MaxWalkSAT 1 x 10M, group_mutex  | 13,106.6  | 5.3   |
    | jnt-seg  | ILP                              | 12,164.7  | 8.1   |
    | jnt-seg  | ILP, grouped network             | 12,164.7  | 9.3   |
    | jnt-seg  | MaxWalkSAT 20 x 50k              | 112,933.2 | 2.4   |
    | jnt-seg  | MaxWalkSAT 20 x 50k, group_mutex | 171,576.6 | 2.8   |
    | jnt-seg  | MaxWalkSAT 1 x 10M               | 20,877.2  | 2.6   |
    | jnt-seg  | MaxWalkSAT 1 x 10M, group_mutex  | 13,220.1  | 4.8   |

HiGHS gains nothing from at-most-one rows (it finds the cliques of the pair
rows itself; one equality row with a "none" column per group instead of
three pair rows was 15-17 % slower), so the ILP does not use the groups.
MaxWalkSAT with a long try gets much closer to the optimum over the groups
(13,107 against 19,030; optimum 11,989) at twice the CPU per flip; with its
default budget (20 tries of 50,000 flips, far too few for 173,052 atoms:
each try's greedy descent does most of the work) it is worse, because the
pair descent of each try does not move blocks. ``group_mutex`` stays an
option of ``--method maxwalksat``, off by default.

Learning (dn, MC-SAT expectations, 40 iterations from the pseudo-likelihood
optimum on ``cora_refs/fold1/train.db``, Isolated; the chain starts at the
training world, so the start options do not apply). Token F1 of the
learned model's ILP MAP on the fold-1 test: plain chain .9055 (78-271 s,
two runs under different loads), groups + joint moves .8723 (271 s),
cluster moves .9059 (114 s against 78 s for plain in the same hour). No
measurable gain; the sampled gradients make single runs differ by a few
points of F1 (a 420-s capped run gave .880 plain and .903 grouped). With
cluster moves the learned weights put the past-the-end tails at 0.47-0.51
instead of just under 0.5, which moves the thresholded marginals' F1 from
.906 to .509 while the MAP's stays at .906: the same knife edge as above.

Can MC-SAT replace the ILP as the default for these models? No: MAP by
ILP is exact here (proved optimal) in 9 s of CPU after grounding, and its
F1 (.934 / .918) is above that of the exact marginals thresholded at 0.5
(.928 / .916), so even a perfect sampler would score lower, at 15-20 times
the CPU (1000 samples of mws+cluster: 150 s).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.harness import ground_tuffy, workload
from bench.workloads.citations import (
    EXAMPLES, baseline_fit, baseline_predict, derived_files, fold_dir, read_atoms, segmentation_scores,
)

# the shipped models hold the ER part too; here SameBib is closed (all false),
# which leaves the segmentation part: chains of InField atoms per citation
SHIPPED = {"isolated": EXAMPLES / "isolated.mln", "jnt-seg": EXAMPLES / "jnt-seg.mln"}

FIELDS = ("Fauthor", "Ftitle", "Fvenue")
PLAIN = {"init_method": "hard", "group_mutex": False, "joint_moves": False, "cluster_moves": False}
VARIANTS = {
    "plain": dict(PLAIN),
    "group": dict(PLAIN, group_mutex=True),
    "joint": dict(PLAIN, joint_moves=True),
    "group+joint": dict(PLAIN, group_mutex=True, joint_moves=True),
    "mws": dict(PLAIN, init_method="maxwalksat"),
    "two-pass": dict(PLAIN, init_method="two-pass"),
    "cluster": dict(PLAIN, cluster_moves=True),
    "mws+cluster": dict(PLAIN, init_method="maxwalksat", cluster_moves=True),
    "mws+group+joint": dict(PLAIN, init_method="maxwalksat", group_mutex=True, joint_moves=True),
    "group+cluster": dict(PLAIN, group_mutex=True, cluster_moves=True),
    "mws+group+joint+cluster": dict(PLAIN, init_method="maxwalksat", group_mutex=True, joint_moves=True,
                                    cluster_moves=True),
}
DEFAULT_VARIANTS = ("plain", "group", "group+joint", "mws", "two-pass", "cluster", "mws+cluster", "mws+group+joint")


# ------------------------------------------------------------------ exact marginals of chain networks

def chain_exact_marginals(net, chain: np.ndarray, pos: np.ndarray, bit: np.ndarray, n_bits: int) -> np.ndarray:
    """Exact marginals of a network whose atoms sit on chains: atom ``a`` is
    bit ``bit[a]`` of the state of node ``(chain[a], pos[a])`` (positions
    0..L-1; a bit no atom fills stays 0). Every clause must touch one node
    or two consecutive nodes of one chain (else ``ValueError``); no blocks.
    Forward-backward in log space over ``2**n_bits`` states per node,
    vectorised over the chains."""
    from scipy.special import logsumexp

    if net.n_blocks:
        raise ValueError("blocks are not supported")
    chain = np.asarray(chain, dtype=np.int64)
    pos = np.asarray(pos, dtype=np.int64)
    bit = np.asarray(bit, dtype=np.int64)
    n_chains, length, n_states = int(chain.max()) + 1, int(pos.max()) + 1, 1 << n_bits
    node = chain * length + pos
    start = np.asarray(net.clause_start, dtype=np.int64)
    sizes = np.diff(start)
    lit_node = node[net.lit_atom]
    lo = np.minimum.reduceat(lit_node, start[:-1])
    hi = np.maximum.reduceat(lit_node, start[:-1])
    span = hi - lo
    if (span > 1).any() or (chain[net.lit_atom[start[:-1][span == 1]]] != chain[net.lit_atom[start[1:][span == 1] - 1]]).any():
        raise ValueError("a clause touches more than two consecutive nodes of one chain")
    states = np.arange(n_states)
    present = np.zeros((n_chains * length, n_bits), bool)
    present[node, bit] = True
    allowed = np.ones((n_chains * length, n_states), bool)
    for b in range(n_bits):
        allowed &= present[:, b:b + 1] | (((states >> b) & 1) == 0)[None, :]
    unary = np.zeros((n_chains * length, n_states))
    pair = np.zeros((n_chains * length, n_states, n_states))
    weight = np.where(net.is_hard, 0.0, net.weight)
    for kind, table in ((0, unary), (1, pair)):
        cl = np.flatnonzero(span == kind)
        if not len(cl):
            continue
        cs = np.zeros(len(cl) + 1, np.int64)
        np.cumsum(sizes[cl], out=cs[1:])
        lit = start[np.repeat(cl, sizes[cl])] + (np.arange(cs[-1]) - np.repeat(cs[:-1], sizes[cl]))
        b = bit[net.lit_atom[lit]]
        positive = net.lit_positive[lit]
        if kind == 0:
            value = ((states[None, :] >> b[:, None]) & 1) == positive[:, None]
            axes = (slice(None), None)
        else:
            upper = lit_node[lit] != lo[np.repeat(cl, sizes[cl])]
            s = np.where(upper[:, None, None], states[None, None, :], states[None, :, None])
            value = ((s >> b[:, None, None]) & 1) == positive[:, None, None]
            axes = (slice(None), None, None)
        sat = np.logical_or.reduceat(value, cs[:-1], axis=0)
        contrib = np.where(net.is_hard[cl][axes], np.where(sat, 0.0, -np.inf), weight[cl][axes] * sat)
        np.add.at(table, lo[cl], contrib)
    unary = np.where(allowed, unary, -np.inf).reshape(n_chains, length, n_states)
    pair = pair.reshape(n_chains, length, n_states, n_states)
    fwd = np.zeros_like(unary)
    bwd = np.zeros_like(unary)
    fwd[:, 0] = unary[:, 0]
    for p in range(1, length):
        fwd[:, p] = unary[:, p] + logsumexp(fwd[:, p - 1][:, :, None] + pair[:, p - 1], axis=1)
    for p in range(length - 2, -1, -1):
        bwd[:, p] = logsumexp(pair[:, p] + (unary[:, p + 1] + bwd[:, p + 1])[:, None, :], axis=2)
    logm = fwd + bwd
    logm -= logsumexp(logm, axis=2, keepdims=True)
    m = np.exp(logm).reshape(n_chains * length, n_states)
    prob = np.zeros(net.n_atoms)
    for b in range(n_bits):
        on = ((states >> b) & 1) == 1
        sel = bit == b
        prob[sel] = m[node[sel]][:, on].sum(axis=1)
    return prob


def citation_layout(net) -> tuple[list[tuple[str, str, str]], np.ndarray, np.ndarray, np.ndarray]:
    """``InField(bib, field, Pnn)`` atoms as (bib, field, position) and their
    chain (bib), position index and bit (field)."""
    names = [tuple(net.constants[c] for c in net.atom_args[i] if c >= 0) for i in range(net.n_atoms)]
    bibs = {b: k for k, b in enumerate(sorted({a[0] for a in names}))}
    chain = np.array([bibs[a[0]] for a in names], dtype=np.int64)
    pos = np.array([int(a[2][1:]) for a in names], dtype=np.int64)
    bit = np.array([FIELDS.index(a[1]) for a in names], dtype=np.int64)
    return names, chain, pos, bit


# ------------------------------------------------------------------ citations

def _ground(model: Path, evidence: list[Path]):
    from markovlogic import MLN, Database
    from markovlogic.api import ground_model

    mln = MLN.from_file(model)
    db = Database.from_file(evidence, mln=mln)
    return ground_model(mln, db, "InField", closed=("SameBib",))


def _ground_shipped(name: str, folder: Path, work: Path):
    """A shipped model on a fold's test evidence (with ``mln derive``'s
    evidence unless it is Isolated), ``InField`` queried, ``SameBib`` closed."""
    import warnings

    model = SHIPPED[name]
    _, test_extra, _ = derived_files(model, folder, work) if name != "isolated" else ([], [], 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _ground(model, [folder / "test-evidence.db", *test_extra])


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def citations(models: list[str], samples: int, variants: list[str], seed: int = 0, fold: int = 1) -> list[dict]:

    from markovlogic.infer.ilp import ilp_map
    from markovlogic.infer.mcsat import mcsat

    folder = fold_dir(fold)
    truth = {tuple(a) for a in read_atoms(folder / "test-truth.db", ("InField",))["InField"]}
    real = {(b, p) for _, p, b in read_atoms(folder / "test-evidence.db", ("Token",))["Token"]}
    base = baseline_predict(baseline_fit(folder / "train.db"), folder / "test-evidence.db")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            net = _ground_shipped(name, folder, Path(tmp))
            names, chain, pos, bit = citation_layout(net)
            is_real = np.array([(a[0], a[2]) in real for a in names])

            def score(prob, label, seconds=None, extra=None, cpu=None):
                pred = {names[i] for i in np.flatnonzero(np.asarray(prob) > 0.5)}
                f_all = segmentation_scores(pred, truth)["all_f1"]
                f_real = segmentation_scores({a for a in pred if (a[0], a[2]) in real}, truth)["all_f1"]
                err = np.abs(np.asarray(prob, dtype=float) - exact)
                row = {"model": name, "row": label, "f1": f_all, "f1_real": f_real,
                       "mae": round(float(err.mean()), 4), "mae_real": round(float(err[is_real].mean()), 4),
                       "off_0.1": int((err > 0.1).sum()), "seconds": None if seconds is None else round(seconds, 1),
                       "cpu_s": None if cpu is None else round(cpu, 1), "load": _load()}
                row.update(extra or {})
                print(json.dumps(row), flush=True)
                rows.append(row)

            t0, c0 = time.perf_counter(), time.process_time()
            exact = chain_exact_marginals(net, chain, pos, bit, len(FIELDS))
            score(exact, "exact", time.perf_counter() - t0, cpu=time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            m = ilp_map(net)
            score(m.world.astype(float), "ILP MAP", time.perf_counter() - t0, cpu=time.process_time() - c0)
            base_prob = np.array([a in base for a in names], dtype=float)
            score(base_prob, "baseline")
            for v in variants:
                t0, c0 = time.perf_counter(), time.process_time()
                r = mcsat(net, samples=samples, burn_in=max(1, samples // 10), seed=seed, **VARIANTS[v])
                s = r.stats
                score(r.probabilities, v, time.perf_counter() - t0,
                      {"init_s": round(s.get("init_seconds", 0.0), 1), "steps": s["samplesat_steps"]},
                      cpu=time.process_time() - c0)
    return rows


# ------------------------------------------------------------------ MAP with the groups

def map_groups(models: list[str], fold: int = 1) -> list[dict]:
    """The mutex groups for MAP: HiGHS on the network as ground and on the
    grouped one (at-most-one blocks with a "none" column: one equality row
    per group instead of three pair rows), and MaxWalkSAT with and without
    ``group_mutex`` (its default budget, and one try of 10 million flips)."""

    from markovlogic.infer.ilp import ilp_map
    from markovlogic.infer.maxwalksat import maxwalksat
    from markovlogic.infer.mutex import group_mutex

    folder = fold_dir(fold)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            net = _ground_shipped(name, folder, Path(tmp))
            grouped = group_mutex(net)
            runs = [
                ("ILP", lambda: ilp_map(net)),
                ("ILP, grouped network", lambda: ilp_map(grouped.net)),
                ("MaxWalkSAT 20 x 50k", lambda: maxwalksat(net)),
                ("MaxWalkSAT 20 x 50k, group_mutex", lambda: maxwalksat(net, group_mutex=True)),
                ("MaxWalkSAT 1 x 10M", lambda: maxwalksat(net, max_flips=10_000_000, max_tries=1)),
                ("MaxWalkSAT 1 x 10M, group_mutex", lambda: maxwalksat(net, max_flips=10_000_000, max_tries=1,
                                                                       group_mutex=True)),
            ]
            for label, run in runs:
                t0, c0 = time.perf_counter(), time.process_time()
                r = run()
                world = grouped.project(r.world) if label.startswith("ILP, grouped") else r.world
                row = {"model": name, "row": label, "cost": round(float(net.cost(world)), 1),
                       "optimal": bool(r.optimal), "seconds": round(time.perf_counter() - t0, 1),
                       "cpu_s": round(time.process_time() - c0, 1), "load": _load()}
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


# ------------------------------------------------------------------ tuffy

def tuffy(name: str, samples: int, variants: list[str], reference: int, seed: int = 0) -> list[dict]:
    """Error of each variant against a reference: the mean of two long runs
    (``reference`` samples each: plain MC-SAT with seed 98, MC-SAT with
    cluster moves with seed 99); their disagreement is the noise floor."""
    from markovlogic.infer.mcsat import mcsat

    net, figures = ground_tuffy(name)
    t0 = time.perf_counter()
    ref_a = mcsat(net, samples=reference, burn_in=reference // 10, seed=98, **VARIANTS["plain"]).probabilities
    ref_b = mcsat(net, samples=reference, burn_in=reference // 10, seed=99, **VARIANTS["cluster"]).probabilities
    ref = (ref_a + ref_b) / 2
    rows = []

    def add(label, prob, seconds, extra=None, cpu=None):
        err = np.abs(np.asarray(prob) - ref)
        row = {"model": f"tuffy/{name}", "row": label, "mae": round(float(err.mean()), 5), "max": round(float(err.max()), 4),
               "seconds": None if seconds is None else round(seconds, 1),
               "cpu_s": None if cpu is None else round(cpu, 1), "load": _load()}
        row.update(extra or {})
        print(json.dumps(row), flush=True)
        rows.append(row)

    add(f"reference: plain vs cluster run ({reference} samples each), half their difference", ref_a, time.perf_counter() - t0)
    add("baseline 0.5", np.full(net.n_atoms, 0.5), None)
    for v in variants:
        t0, c0 = time.perf_counter(), time.process_time()
        r = mcsat(net, samples=samples, burn_in=max(1, samples // 10), seed=seed, **VARIANTS[v])
        add(v, r.probabilities, time.perf_counter() - t0, {"groups": r.stats.get("mutex_groups", 0),
                                                          "cluster_accept": round(r.stats["cluster_accept_rate"], 3)},
            cpu=time.process_time() - c0)
    return rows


workload("mcsat-ext-citations", "MC-SAT extensions on cora_refs fold 1 (Isolated, Jnt-Seg): F1 and error vs exact",
         timeout=7200.0)(lambda: {f"{r['model']}_{r['row']}_{k}": v for r in citations(["isolated", "jnt-seg"], 1000,
                                                                                      list(DEFAULT_VARIANTS))
                                  for k, v in r.items() if k not in ("model", "row")})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="What Poon's MC-SAT extensions buy")
    parser.add_argument("--models", default="isolated,jnt-seg")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tuffy", default=None, help="a tuffy workload (cse, class) instead of the citation models")
    parser.add_argument("--map", action="store_true", help="MAP (ILP, MaxWalkSAT) with and without the mutex groups")
    parser.add_argument("--reference", type=int, default=10000, help="samples of each tuffy reference run")
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}; choose among {list(VARIANTS)}")
    if args.map:
        rows = map_groups([m for m in args.models.split(",") if m])
    elif args.tuffy:
        rows = tuffy(args.tuffy, args.samples, variants, args.reference, args.seed)
    else:
        rows = citations([m for m in args.models.split(",") if m], args.samples, variants, args.seed)
    keys = [k for k in rows[0] if k != "model"] if rows else []
    for r in rows:
        keys += [k for k in r if k not in keys and k != "model"]
    print("| model | " + " | ".join(keys) + " |")
    for r in rows:
        print(f"| {r['model']} | " + " | ".join("" if r.get(k) is None else str(r.get(k)) for k in keys) + " |")


if __name__ == "__main__":
    main()
