"""Several training databases, ground one per Ray task.

With ``multiple_databases`` every training database is a world of its own;
on Ray each is ground by its own task (the model and that database pickled
to the worker) and the networks come back to the driver, where the learner
samples them on the driver's threads (:mod:`markovlogic.parallel.tasks`).
The learners' chains stay on the driver: they are re-weighted and resumed at
every iteration, which a stateless task cannot do.
"""

from __future__ import annotations

from .cluster import RayExecutor, cluster_cpus, connect


def ground_one(mln, db, queries):
    """Ray task: one training world's network."""
    from ..ground import ground

    return ground(mln, [db], queries, allow_unweighted=True, truth_closed_world=True)


def ground_databases(mln, worlds, queries, parallel) -> list:
    with connect(parallel):
        executor = RayExecutor(parallel.ray_workers or cluster_cpus(parallel))
        return executor.map(ground_one, [(mln, db, queries) for db in worlds])
