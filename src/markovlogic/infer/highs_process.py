"""HiGHS in a child process, for time limits that hold.

HiGHS checks its clock between phases; on a large model one phase (the root
LP of a model with hundreds of thousands of columns) can run far past the
limit (seen here: 475 s with a 20 s limit). For such models the ILP is
solved in a child process that is killed at the deadline, while the parent
runs MaxWalkSAT on the other core; the better world is kept.

The child is started with ``spawn`` (no fork of a process with DuckDB and
numba threads) and imports only numpy and scipy; the model goes to it
pickled (a few tens of MB for a million columns).
"""

from __future__ import annotations

import multiprocessing as mp
import time
import warnings
from dataclasses import dataclass

import numpy as np

# models with at least this many columns are solved in a child process when a
# time limit is set (smaller ones finish a phase in well under a second)
SUBPROCESS_COLUMNS = 50_000


def _child(conn, cost, matrix, row_lower, row_upper, integrality, col_upper, options) -> None:
    """Solve and send ``(status, x, mip_dual_bound, nodes)`` back."""
    from scipy.optimize import LinearConstraint, milp

    try:
        constraints = [LinearConstraint(matrix, row_lower, row_upper)] if matrix.shape[0] else None
        bounds = (0.0, 1.0) if col_upper is None else (np.zeros(len(cost)), col_upper)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = milp(-cost, integrality=integrality, bounds=bounds, constraints=constraints, options=options)
        conn.send((int(res.status), None if res.x is None else np.asarray(res.x),
                   getattr(res, "mip_dual_bound", None), int(getattr(res, "mip_node_count", 0) or 0)))
    except BaseException as exc:           # report, never hang the parent
        conn.send(("error", repr(exc)))
    finally:
        conn.close()


@dataclass
class ChildSolve:
    """A HiGHS solve running in a child process."""

    process: mp.Process
    conn: object
    deadline: float

    def result(self):
        """``(status, x, dual_bound, nodes)``, or None if the deadline passed
        (the child is then killed)."""
        left = max(0.0, self.deadline - time.perf_counter())
        try:
            if self.conn.poll(left):
                out = self.conn.recv()
                if out and out[0] == "error":
                    return None
                return out
            return None
        except (EOFError, OSError):
            return None
        finally:
            self.stop()

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        try:
            self.conn.close()
        except OSError:
            pass


def start(model, seconds: float, options: dict) -> ChildSolve:
    """Start solving ``model`` (an ``ilp.Model``) with HiGHS in a child that
    is given ``seconds`` and killed a little after."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    opts = dict(options)
    opts["time_limit"] = max(0.5, float(seconds))
    proc = ctx.Process(target=_child, args=(child, model.cost, model.matrix, model.row_lower, model.row_upper,
                                            model.integrality, model.col_upper, opts), daemon=True)
    proc.start()
    child.close()
    return ChildSolve(proc, parent, time.perf_counter() + float(seconds) + 1.0)
