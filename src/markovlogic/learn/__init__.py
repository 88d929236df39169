"""Weight learning (see DESIGN.md): generative pseudo-likelihood, discriminative
learning (diagonal Newton, scaled conjugate gradient, voted perceptron) and
online MIRA, SampleRank over atoms, on ground networks; ``learn_weights`` for models and databases.

Every learner is ``learn_<method>(nets, *, iterations, prior_stddev, seed, ...,
callback) -> LearnResult``, with one ground network per training database.
"""

from .discriminative import learn_dn, learn_perceptron, learn_scg
from .mira import learn_mira
from .pll import learn_pll
from .result import LearnResult, TraceRow
from .samplerank_atoms import learn_samplerank_atoms

LEARNERS = {
    "pll": learn_pll,
    "perceptron": learn_perceptron,
    "dn": learn_dn,
    "scg": learn_scg,
    "mira": learn_mira,
    "samplerank": learn_samplerank_atoms,     # ordinary query atoms; clusterings: learn/samplerank.py
}

__all__ = [
    "LEARNERS",
    "LearnResult",
    "TraceRow",
    "learn_dn",
    "learn_mira",
    "learn_perceptron",
    "learn_pll",
    "learn_samplerank_atoms",
    "learn_scg",
]
