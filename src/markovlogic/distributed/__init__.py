"""Beyond one machine, on Ray (issue 15, part 4; optional: ``pip install 'markovlogic[ray]'``).

- :mod:`.cluster`: reaching a cluster (``--ray-address``) with clear errors,
  and an executor that runs tasks on its workers;
- :mod:`.store`: the evidence store shared as Parquet files written from
  DuckDB, and a worker's grounder reading them;
- :mod:`.infer`: partitioned grounding (the templates dealt to the workers,
  each grounding its part from the shared store into Parquet parts),
  connected components found from the parts' atom-level summaries, and
  MAP or marginals solved per group of components on the workers, which read
  only their group's clauses from the parts; the driver merges worlds,
  costs and marginals;
- :mod:`.learn`: several training databases ground one per Ray task.

Nothing here is imported unless ``ray_address`` is given.
"""
