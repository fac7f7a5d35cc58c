"""Executors: where the batches of a sweep run (docs/sweeps.md).  Every executor runs the same
:func:`~exactattn.sweep.trials.run_batch` on the same batches, so a spec gives bit-identical
results on each of them; only the order in which batches finish differs.

* :class:`SerialExecutor` — in this process, in order (tests, profiling);
* :class:`PoolExecutor` — a local process pool, all cores by default.  Workers ignore SIGINT
  (the driver handles Ctrl-C) and exit when the driver dies; a worker that dies (killed,
  out of memory) breaks the pool: a warning is logged (``exactattn.sweep``), the pool is
  restarted and the batches not yet returned are submitted again (the store's identity key
  makes a repeated trial harmless);
* :class:`DaskExecutor` — Dask distributed (extra ``[dask]``): ``"local"`` starts a
  LocalCluster on this machine (loopback only), ``"tcp://host:8786"`` joins an existing
  scheduler whose workers have the same exactattn installed (checked per batch).

``map(fn_name, batches, version)`` yields ``(batch index, output)`` as batches finish.
"""

from __future__ import annotations

import logging
import os
import signal
import time

from .spec import SpecError
from .trials import pack, run_batch, run_packed

__all__ = ["DaskExecutor", "PoolExecutor", "SerialExecutor", "WorkerLost", "make_executor"]


#: where a dead pool worker is reported (a WARNING: printed on stderr when the application
#: configures no logging, by Python's last-resort handler)
LOG = logging.getLogger("exactattn.sweep")


def worker_died(restarts: int, max_restarts: int, batches: int) -> str:
    """The warning of a pool restart (:class:`PoolExecutor`)."""
    return (f"warning: a pool worker died (killed, or out of memory); pool restarted "
            f"({restarts} of at most {max_restarts}), {batches} unfinished "
            f"batch{'' if batches == 1 else 'es'} submitted again (a trial already stored "
            f"is not stored twice)")


class WorkerLost(RuntimeError):
    """Workers kept dying: the pool was restarted ``max_restarts`` times."""


class SerialExecutor:
    """Run every batch here, in order."""

    name = "serial"
    workers = 1
    startup_seconds = 0.0

    def map(self, fn_name, batches, version=None):
        for i, batch in enumerate(batches):
            yield i, run_batch(fn_name, batch, version)

    def describe(self) -> str:
        return "serial"

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _worker_init(parent: int):
    """In each pool worker: leave Ctrl-C to the driver, and exit when the driver is gone
    (after a kill -9 of the driver a worker would otherwise wait for work forever)."""
    import threading
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="exactattn-parent-watch").start()


class PoolExecutor(SerialExecutor):
    """A local process pool of ``workers`` processes (default: every core)."""

    name = "pool"

    def __init__(self, workers: int | None = None, max_restarts: int = 3):
        self.workers = workers or os.cpu_count() or 1
        self.max_restarts = max_restarts
        self.restarts = 0
        self._pool = None
        start = time.perf_counter()
        self._pool = self._new_pool()
        self.startup_seconds = time.perf_counter() - start

    def _new_pool(self):
        from concurrent.futures import ProcessPoolExecutor
        return ProcessPoolExecutor(max_workers=self.workers, initializer=_worker_init,
                                   initargs=(os.getpid(),))

    def map(self, fn_name, batches, version=None):
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool
        pending = {i: pack(fn_name, b, version) for i, b in enumerate(batches)}
        while pending:
            futures = {self._pool.submit(run_packed, b): i for i, b in pending.items()}
            try:
                while futures:
                    finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        i = futures.pop(fut)
                        out = fut.result()
                        del pending[i]
                        yield i, out
            except BrokenProcessPool:
                self.restarts += 1
                self._pool.shutdown(wait=False, cancel_futures=True)
                if self.restarts > self.max_restarts:
                    raise WorkerLost(f"pool workers died {self.restarts} times; the finished "
                                     "trials are stored: rerun to resume") from None
                LOG.warning(worker_died(self.restarts, self.max_restarts, len(pending)))
                self._pool = self._new_pool()

    def describe(self) -> str:
        return f"pool({self.workers})"

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(SerialExecutor):
    """Dask distributed: ``address="local"`` (LocalCluster, ``workers`` processes with one
    thread each, bound to 127.0.0.1) or a scheduler address such as ``tcp://host:8786``."""

    name = "dask"

    def __init__(self, address: str = "local", workers: int | None = None):
        try:
            import distributed
        except ImportError:
            raise SpecError("--dask needs Dask distributed: pip install \".[dask]\" from a "
                            "clone of exactattn") \
                from None
        self._distributed = distributed
        self.address = address
        start = time.perf_counter()
        self.cluster = None
        if address == "local":
            self.cluster = distributed.LocalCluster(
                n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                processes=True, host="127.0.0.1", dashboard_address=None,
                silence_logs=logging.CRITICAL)  # shutdown chatter; errors reach the futures
            self.client = distributed.Client(self.cluster)
        else:
            if not address.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
                raise SpecError(f"--dask {address!r}: give 'local' or a scheduler address "
                                "such as tcp://host:8786")
            try:
                self.client = distributed.Client(address, timeout="30s")
            except OSError as e:
                raise SpecError(f"--dask {address}: cannot reach the scheduler ({e})") from None
        self.client.wait_for_workers(1)
        self.workers = len(self.client.scheduler_info()["workers"])
        self.startup_seconds = time.perf_counter() - start

    def map(self, fn_name, batches, version=None):
        import uuid
        tag = uuid.uuid4().hex[:8]
        futures = {self.client.submit(run_packed, pack(fn_name, b, version), pure=False,
                                      key=f"exactattn-batch-{tag}-{i}"): i
                   for i, b in enumerate(batches)}
        try:
            for fut in self._distributed.as_completed(list(futures)):
                yield futures[fut], fut.result()
        finally:
            self.client.cancel(list(futures), force=True)

    def describe(self) -> str:
        where = "LocalCluster" if self.cluster is not None else self.address
        return f"dask({where}, {self.workers} workers)"

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(executor=None, workers: int | None = None, dask: str | None = None):
    """An executor from a name ("serial", "pool"), an instance, or ``dask=`` an address."""
    if dask is not None:
        return DaskExecutor(dask, workers)
    if executor is None or executor == "pool":
        return PoolExecutor(workers)
    if executor == "serial":
        return SerialExecutor()
    if hasattr(executor, "map"):
        return executor
    raise SpecError(f"unknown executor {executor!r}: use 'pool', 'serial' or dask=ADDRESS")
