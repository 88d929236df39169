"""Both cores, and a Ray cluster beyond one machine (issue 15, parts 3 and 4).

- :mod:`.options`: :class:`ParallelOptions` (``threads``, ``ray_address``...),
  the one declaration the CLI, the API and the docs share, and the context
  that carries it through one API call;
- :mod:`.executor`: independent tasks on threads (or Ray, same interface);
- :mod:`.split`: a ground network cut into parts of whole connected
  components, and sub-networks;
- :mod:`.map`, :mod:`.marginals`: MAP and marginals spread over the threads
  (which solver splits how is said there);
- :mod:`.tasks`: the per-database loops of learning and grounding.

The Ray side (cluster connection, Parquet store, partitioned grounding) is
:mod:`markovlogic.distributed`.
"""

from .options import ParallelOptions, current, machine_cores, using

__all__ = ["ParallelOptions", "current", "machine_cores", "using"]
