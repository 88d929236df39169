"""Inference over clusterings of equivalence predicates.

An equivalence predicate (``SameBib(bib, bib)`` declared an equivalence, or
with its hard reflexivity, symmetry and transitivity written out) has a
clustering of its constants as its state instead of ``n^2`` pair atoms.

- :mod:`.pairs`: formulas with one literal of the predicate, as pair features
  computed in SQL without grounding the pairs (low-rank plus sparse);
- :mod:`.setfeatures`: set-level features over whole clusters;
- :mod:`.model`: the compiled model (:func:`build_cluster_model`);
- :mod:`.kernels`: numba cluster statistics and move deltas;
- :mod:`.chain`: Metropolis-Hastings with merge / split / move proposals;
- :mod:`.mh`, :mod:`.agglomerative`: MAP and marginals.
"""
