"""Where batch tasks run: a local process pool, or Ray tasks on a cluster.

Both engines take a stream of jobs and give back (job, outcome) pairs as tasks finish, keeping
at most ``slots`` tasks in flight: a job is taken from the stream only when a slot is free, so
neither the pending jobs nor the results pile up in the driver, whatever the corpus size. Both
run the same :func:`~tcompact.batch.worker.execute`.

Why Ray tasks and not Ray Data: a task here is one file in, one small JSON line out, with no
shuffles, joins or columnar blocks between them — what Ray Data adds (streaming operators over
Arrow blocks, autoscaling actor pools) brings nothing to that, and it needs pyarrow, pandas and numpy
(332 MB more than Ray core's 263 MB, measured). ``ray.wait`` over a bounded set of task references gives the
same backpressure, and each task is retried by Ray when its worker or node dies.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ..errors import UsageError, WorkFailed
from .worker import Job, execute, internal_error_text

__all__ = ["Engine", "PoolEngine", "RayEngine", "make_engine", "default_workers", "died_line"]

Outcome = dict[str, Any] | str
_RAY_RETRIES = 3  # Ray re-runs a task whose worker or node died this many times
_PROBE_S = 5.0


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def died_line(job: Job, why: str) -> dict[str, Any]:
    """The line of a task whose worker died (killed, out of memory) however often it was retried."""
    from .worker import file_sha256

    return {"path": job.path, "sha256": file_sha256(job.path), "kind": job.kind, "settings": job.settings_id,
            "status": "failed", "figures": None,
            "error": f"{job.path}: {why} — the file may be too big for a worker's memory; run again with "
                     "--retry-failed to try it again"}


class Engine:
    """Runs jobs, ``slots`` at a time; ``describe`` names the engine in the summary."""

    slots: int = 1
    workers: int = 1
    name: str = ""

    def open(self) -> None:
        """Get ready (connect to a cluster); errors here come before the batch folder is touched."""

    def close(self) -> None:
        """Let go of what ``open`` took (a local Ray it started); safe to call twice."""

    def map(self, jobs: Iterator[Job]) -> Iterator[tuple[Job, Outcome]]:
        """(job, outcome) pairs in the order the tasks finish."""
        raise NotImplementedError


def _quiet_worker() -> None:
    """Pool workers leave Ctrl-C to the driver, which stops them (a terminal sends it to the whole group)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class PoolEngine(Engine):
    """A local process pool (forkserver: workers fork from a clean process that imported tcompact once).

    A worker that dies (killed, out of memory) breaks the whole pool; the pool is then made again
    and the tasks that were in flight are run again one at a time, so the one that kills its
    worker again is found and recorded as failed while the others go on.
    """

    name = "pool"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()
        self.slots = 2 * self.workers  # a queued task each, so a worker never waits for the driver

    def _executor(self) -> ProcessPoolExecutor:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["tcompact.batch.worker"])
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_quiet_worker)

    def map(self, jobs: Iterator[Job]) -> Iterator[tuple[Job, Outcome]]:
        self._pool, self._broken = self._executor(), False
        pending: dict[Future, Job] = {}
        suspects: list[Job] = []
        done = False
        try:
            for job in jobs:
                while len(pending) >= self.slots or suspects:
                    yield from self._collect(pending, suspects)
                try:
                    pending[self._ready().submit(execute, job)] = job
                except BrokenProcessPool:  # broke since the last look: this job waits with the others
                    self._broken = True
                    suspects.append(job)
            while pending or suspects:
                yield from self._collect(pending, suspects)
            done = True
        finally:
            self._stop(pending, abort=not done)

    def _collect(self, pending: dict[Future, Job], suspects: list[Job]) -> Iterator[tuple[Job, Outcome]]:
        if suspects and not pending:  # after a breakage: the suspects one by one
            job = suspects.pop(0)
            future = self._ready().submit(execute, job)
            try:
                yield job, future.result()
            except BrokenProcessPool:
                self._broken = True
                yield job, died_line(job, "the worker process died while working on this file")
            return
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in finished:
            job = pending.pop(future)
            try:
                yield job, future.result()
            except BrokenProcessPool:
                self._broken = True
                suspects.append(job)
        if suspects and not any(not f.done() or f.exception() is None for f in pending):
            suspects.extend(pending.pop(f) for f in list(pending))

    def _ready(self) -> ProcessPoolExecutor:
        """The pool, made again if it broke; a pool whose workers cannot even start is an error."""
        if self._broken:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._executor()
            try:
                self._pool.submit(os.getpid).result()
            except BrokenProcessPool as exc:
                raise WorkFailed(f"the pool's worker processes die before doing any work ({exc})",
                                 hint="run with TCOMPACT_DEBUG=1 to see why, or try --engine ray") from None
            self._broken = False
        return self._pool

    def _stop(self, pending: dict[Future, Job], *, abort: bool) -> None:
        if abort:  # Ctrl-C or an error: the tasks in flight are redone by the next run
            for f in pending:
                f.cancel()
            for process in list(getattr(self._pool, "_processes", {}).values()):  # no public terminate before 3.14
                process.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayEngine(Engine):
    """Ray tasks (``num_cpus=1`` each) on the cluster at ``address`` (or RAY_ADDRESS), else on a local
    Ray started here with ``workers`` CPUs and stopped at the end. A Ray already initialised in this
    process (a test's, a notebook's) is used as it is and left running."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self.requested = workers
        self._ray: Any = None
        self._started = False

    def open(self) -> None:
        try:
            import ray
        except ImportError:
            raise UsageError("--engine ray needs Ray, which is not installed",
                             hint="install it: pip install 'tcompact[ray]'") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            _connect(ray, self.address or os.environ.get("RAY_ADDRESS"), cpus=self.requested or default_workers())
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = self.requested or cpus
        # twice the CPUs in flight, so that none waits for the driver — unless --workers caps a
        # cluster that has more CPUs than that (a local Ray started here has exactly --workers)
        self.slots = self.requested if self.requested and not self._started else 2 * cpus

    def map(self, jobs: Iterator[Job]) -> Iterator[tuple[Job, Outcome]]:
        ray = self._ray
        remote = ray.remote(num_cpus=1, max_retries=_RAY_RETRIES)(execute)
        pending: dict[Any, Job] = {}
        done = False
        try:
            for job in jobs:
                while len(pending) >= self.slots:
                    yield from self._collect(pending)
                pending[remote.remote(job)] = job
            while pending:
                yield from self._collect(pending)
            done = True
        finally:
            if not done:
                for ref in pending:
                    with contextlib.suppress(Exception):  # a task that finished meanwhile
                        ray.cancel(ref, force=True)
            self.close()

    def close(self) -> None:
        if self._started and self._ray is not None and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False

    def _collect(self, pending: dict[Any, Job]) -> Iterator[tuple[Job, Outcome]]:
        ray = self._ray
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            job = pending.pop(ref)
            try:
                yield job, ray.get(ref)
            except ray.exceptions.RayTaskError as exc:  # raised inside the task: execute() catches all, so a bug
                yield job, {**died_line(job, ""), "error": internal_error_text(getattr(exc, "cause", None) or exc)}
            except ray.exceptions.RayError as exc:  # the worker or node died, after Ray's retries
                yield job, died_line(job, f"the Ray worker died while working on this file ({type(exc).__name__})")


def _connect(ray: Any, address: str | None, *, cpus: int) -> None:
    """ray.init, quiet: the cluster at ``address``, else a new local Ray with ``cpus`` CPUs."""
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if address:
        _reachable(address)
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(address="local", num_cpus=cpus, include_dashboard=False, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UsageError(f"cannot connect to the Ray cluster at {address or 'a new local Ray'}: "
                         f"{' '.join(str(exc).split())[:300]}",
                         hint="check --address / RAY_ADDRESS and that the cluster is up") from None


def _reachable(address: str) -> None:
    """Fail at once on a ``host:port`` (or ``ray://host:port``) nothing listens on: Ray itself retries for minutes."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and other forms Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_S).close()
    except OSError as exc:
        raise UsageError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}",
                         hint="check --address / RAY_ADDRESS and that the cluster is up") from None


def make_engine(name: str, *, workers: int | None, address: str | None) -> Engine:
    """The engine ``--engine`` names."""
    if name == "pool":
        if address is not None:
            raise UsageError("--address is for --engine ray", hint="add --engine ray, or leave --address out")
        return PoolEngine(workers)
    if name == "ray":
        return RayEngine(address, workers)
    raise UsageError(f"unknown engine {name!r}", hint="use --engine pool or --engine ray")
