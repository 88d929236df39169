"""Reaching a Ray cluster, and running tasks on it.

``--ray-address`` names the cluster: ``auto`` (the cluster this machine
belongs to, started with ``ray start``), ``HOST:PORT`` (the head node's GCS
port, 6379 by default) or ``ray://HOST:PORT`` (Ray Client, port 10001), or
``local``: a cluster of ``ray_workers`` worker processes started on this
machine for the call and stopped after it. A head node that does not answer
within ``connect_seconds`` is an :class:`~markovlogic.errors.OptionError`
(exit status 2 from the CLI) before Ray is asked to connect: Ray itself
retries for a minute or more.

:class:`RayExecutor` has the interface of
:class:`markovlogic.parallel.executor.ThreadExecutor`: a module-level function
mapped over argument tuples, one Ray task each (one CPU), results in order.
"""

from __future__ import annotations

import contextlib
import re
import socket

from ..errors import OptionError

_HOST_PORT = re.compile(r"^(?:ray://)?(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})$")


def check_address(address: str) -> None:
    """The form of an address (no network access)."""
    if address in ("auto", "local"):
        return
    m = _HOST_PORT.match(address)
    if not m or not 0 < int(m.group(2)) < 65536:
        raise OptionError(f"--ray-address {address!r}: expected 'auto', 'local', HOST:PORT or ray://HOST:PORT")


def require_ray():
    try:
        import ray
    except ImportError:
        raise OptionError("--ray-address needs Ray: pip install 'markovlogic[ray]'") from None
    return ray


def _probe(address: str, seconds: float) -> None:
    """A TCP connection to the head node, or a clear error within ``seconds``."""
    m = _HOST_PORT.match(address)
    host, port = m.group(1).strip("[]"), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=seconds):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, socket.timeout) else (exc.strerror or str(exc))
        raise OptionError(f"cannot reach the Ray head node at {address} ({reason}); start it with "
                          "'ray start --head' there, or check the address and the firewall") from None


@contextlib.contextmanager
def connect(options):
    """Ray initialised for the block: an existing connection is reused (and
    left open), a new one closed at the end, a ``local`` cluster stopped."""
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    address = options.ray_address
    kwargs = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    import os

    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    try:
        if address == "local":
            from ..parallel.options import machine_cores

            ray.init(num_cpus=options.ray_workers or machine_cores(), **kwargs)
        elif address == "auto":
            try:
                ray.init(address="auto", **kwargs)
            except (ConnectionError, RuntimeError) as exc:
                raise OptionError(f"--ray-address auto: no running Ray cluster found on this machine ({exc}); "
                                  "start one with 'ray start --head', or use --ray local") from None
        else:
            _probe(address, float(options.connect_seconds))
            ray.init(address=address, **kwargs)
    except OptionError:
        raise
    except Exception as exc:          # Ray's own errors: name the address, no traceback
        raise OptionError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(options) -> int:
    """The CPUs of the connected cluster (at least 1)."""
    ray = require_ray()
    if not ray.is_initialized():
        return 1
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


class RayExecutor:
    """``map`` as Ray tasks of one CPU each (see module docstring)."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, int(workers))

    def map(self, fn, args) -> list:
        ray = require_ray()
        remote = ray.remote(num_cpus=1, max_retries=0)(fn)
        refs = [remote.remote(*a) for a in args]
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.as_instanceof_cause()
            raise cause from None


def ray_executor(options) -> RayExecutor:
    ray = require_ray()
    if not ray.is_initialized():
        raise OptionError("the Ray executor needs a connection: run inside distributed.cluster.connect()")
    return RayExecutor(options.ray_workers or cluster_cpus(options))
