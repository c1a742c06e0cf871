"""Run a sweep: every point of a spec, in this process, a pool of worker processes or on Ray;
an Optuna search asks for its points one trial at a time. Resumable: finished points whose runs
are still current are reported, never rerun; stale ones are moved aside and run again
(`experiments.freshness`). Baselines run after their deliberation sibling, with its budget.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from queue import Queue
from typing import Any

import polars as pl

from hivemind_lab.agents import backends as factory
from hivemind_lab.agents.backends import BackendChoice
from hivemind_lab.errors import InputError
from hivemind_lab.experiments.freshness import Current, current
from hivemind_lab.experiments.points import RunPoint, expand
from hivemind_lab.experiments.runner import RunSummary, finished, run_point
from hivemind_lab.experiments.spec import CALIBRATIONS, ExperimentSpec
from hivemind_lab.inputs import Calibrations
from hivemind_lab.llm.endpoint import EndpointSettings
from hivemind_lab.llm.local import LocalEndpoint
from hivemind_lab.llm.ratelimit import FileGate, RateGate, RayGate
from hivemind_lab.models import Frozen
from hivemind_lab.runs.manifest import Budget
from hivemind_lab.runs.rundir import RunDir
from hivemind_lab.runs.sweepdir import STALE, LastSweep, OptunaBest, SweepDir


class SweepReport(Frozen):
    experiment: str
    root: str
    runs: tuple[RunSummary, ...]
    wall_time_s: float

    @property
    def model_calls(self) -> int:
        """Calls that reached the backend in this invocation."""
        return sum(r.calls - r.reused_calls for r in self.runs if not r.skipped)

    @property
    def reused_calls(self) -> int:
        return sum(r.reused_calls for r in self.runs if not r.skipped)

    @property
    def reused_runs(self) -> int:
        """Finished runs still current, reused as they were."""
        return sum(r.skipped for r in self.runs)

    @property
    def stale_runs(self) -> dict[str, int]:
        """Runs set aside and made again, by reason (a run may count under several)."""
        out: dict[str, int] = {}
        for r in self.runs:
            for reason in r.stale:
                out[reason] = out.get(reason, 0) + 1
        return out

    @property
    def new_runs(self) -> int:
        """Points run for the first time (or finishing an interrupted run)."""
        return sum(not r.skipped and not r.stale for r in self.runs)

    def reuse_line(self) -> str:
        """How many runs were reused, re-run because stale (and why) or new, in words."""
        rerun = sum(bool(r.stale) for r in self.runs)
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.stale_runs.items()))
        return (
            f"{self.reused_runs} reused, {rerun} re-run because stale"
            + (f" ({why}; old runs kept in {STALE}/)" if rerun else "")
            + f", {self.new_runs} new"
        )


@contextmanager
def local_endpoint(
    spec: ExperimentSpec, project: Path, *, slots: int, ray_address: str | None = None
) -> Iterator[LocalEndpoint | None]:
    """For the local backend, one llama.cpp server for the whole sweep (stopped by its PID at
    the end, whatever happens); None for other backends."""
    if spec.backend != "local":
        yield None
        return
    if ray_address not in (None, "local"):
        raise InputError(
            "ray",
            "the local backend serves on 127.0.0.1, out of reach of a Ray cluster",
            allowed="--ray local, or no --ray",
        )
    model_file = project / spec.model_file if spec.model_file else None
    # The spec alone names the weights (run ids hash it): HIVEMIND_MODEL_FILE is not read.
    env = {k: v for k, v in os.environ.items() if k != "HIVEMIND_MODEL_FILE"}
    choice = BackendChoice(backend="local", model_file=model_file)
    with factory.local_server(choice, slots=slots, env=env) as server:
        yield server.endpoint


Job = tuple[RunPoint, Budget | None]
PRELOAD = [
    "hivemind_lab.experiments.runner",
    "hivemind_lab.agents.policy",
    "bm25s",
    "sklearn.feature_extraction.text",
    "polars",
]
"""Imported once by the pool's fork server, so no worker pays for them."""


def _follow_sweep(sweep_pid: int) -> None:
    """In a worker process: exit when the sweep's process is gone (killed outright, it cannot
    stop its pool, and an idle worker would wait for work forever while a busy one went on
    writing a point that the resumed sweep runs again). The point it was running resumes."""

    def watch() -> None:
        while True:
            time.sleep(0.5)
            try:
                os.kill(sweep_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # the pid now belongs to another user's process
                os._exit(1)

    threading.Thread(target=watch, name="follow-sweep", daemon=True).start()


class Dispatcher:
    """Runs sweep points: in this process, in one pool of worker processes kept for the whole
    sweep (deliberations and baselines), or on Ray. Finished points never reach a worker."""

    def __init__(
        self,
        spec: ExperimentSpec,
        root: Path,
        project: Path,
        *,
        workers: int,
        ray_address: str | None,
        on_done: Callable[[RunSummary], None],
        endpoint: LocalEndpoint | None = None,
        settings: EndpointSettings | None = None,
    ) -> None:
        self.spec, self.root, self.project = spec, root, project
        self.endpoint = endpoint
        self.settings = settings
        """The endpoint's settings, resolved once here: every worker and Ray task gets them."""
        self._gate: RateGate | None = None
        self.workers, self.ray_address, self.on_done = workers, ray_address, on_done
        self._pool: ProcessPoolExecutor | None = None
        self._current: dict[str, Current] = {}
        """What each problem's runs would record now (the same for all its points), read once
        per sweep so resuming a finished sweep stays fast."""

    def __enter__(self) -> Dispatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def gate(self) -> RateGate | None:
        """The sweep's one rate gate (when the settings name a rate limit): a file every
        process on this machine locks, or on Ray an actor every task asks."""
        rpm = self.settings.rate_limit_rpm if self.settings else None
        if rpm is None or self.spec.backend not in ("openai", "local"):
            return None
        if self._gate is None:
            if self.ray_address:
                self._gate = RayGate.start(rpm)  # after ray.init (see _ray)
            else:
                path = self.root / ".rate-gate"
                path.unlink(missing_ok=True)  # a start time from an earlier sweep is no limit
                self._gate = FileGate(path, rpm)
        return self._gate

    def _run_point(self, point: RunPoint, budget: Budget | None) -> RunSummary:
        return run_point(
            self.spec,
            point,
            self.root,
            self.project,
            budget,
            self.endpoint,
            settings=self.settings,
            gate=self.gate(),
        )

    def run(self, jobs: Sequence[Job]) -> list[RunSummary]:
        """Every job's summary, in completion order (finished points first)."""
        out: list[RunSummary] = []
        pending: list[Job] = []
        for point, budget in jobs:
            if point.problem not in self._current:
                self._current[point.problem] = current(self.spec, point, self.project)
            now = self._current[point.problem]
            done = finished(self.spec, point, self.root, self.project, budget=budget, now=now)
            if done is None:
                pending.append((point, budget))
            else:
                self.on_done(done)
                out.append(done)
        if not pending:
            return out
        if self.ray_address:
            return out + self._ray(pending)
        if self.workers <= 1 or len(pending) == 1:
            for point, budget in pending:
                out.append(self._report(self._run_point(point, budget)))
            return out
        return out + self._shared(pending)

    def _shared(self, jobs: Sequence[Job]) -> list[RunSummary]:
        """``workers`` points at a time: this process runs points itself while ``workers - 1``
        pool processes take the others, so the pool's start (a couple of seconds of imports) is
        never time lost. A feeder thread hands a worker its next point as soon as it is free."""
        if self._pool is None:
            # forkserver: one clean process imports the package once and forks the workers, so a
            # worker neither re-imports everything (spawn) nor inherits the caller's threads (fork).
            context = get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers - 1,
                mp_context=context,
                initializer=_follow_sweep,
                initargs=(os.getpid(),),
            )
        pool, queue = self._pool, deque(jobs)
        finished_q: Queue[Future[RunSummary]] = Queue()
        free = threading.Semaphore(self.workers - 1)

        def feed() -> None:
            while True:
                free.acquire()
                try:
                    point, budget = queue.popleft()
                except IndexError:
                    return
                try:
                    future = pool.submit(
                        run_point,
                        self.spec,
                        point,
                        self.root,
                        self.project,
                        budget,
                        self.endpoint,
                        settings=self.settings,
                        gate=self.gate(),
                    )
                except Exception as exc:  # the pool broke or shut down: the caller reports it
                    failed: Future[RunSummary] = Future()
                    failed.set_exception(exc)
                    finished_q.put(failed)
                    return
                future.add_done_callback(done)

        def done(future: Future[RunSummary]) -> None:
            finished_q.put(future)
            free.release()

        feeder = threading.Thread(target=feed, name="sweep-feeder", daemon=True)
        feeder.start()
        out: list[RunSummary] = []
        while True:
            try:
                point, budget = queue.popleft()
            except IndexError:
                break
            out.append(self._report(self._run_point(point, budget)))
            while not finished_q.empty():
                out.append(self._report(finished_q.get().result()))
        free.release()  # wake the feeder so it sees the empty queue
        feeder.join()
        while len(out) < len(jobs):
            out.append(self._report(finished_q.get().result()))
        return out

    def _report(self, summary: RunSummary) -> RunSummary:
        self.on_done(summary)
        return summary

    def _ray(self, jobs: Sequence[Job]) -> list[RunSummary]:
        import ray

        from hivemind_lab.experiments import remote

        assert self.ray_address is not None
        if not ray.is_initialized():
            if self.ray_address == "local":
                ray.init(
                    num_cpus=os.cpu_count() or 1,
                    include_dashboard=False,
                    log_to_driver=False,
                    _node_ip_address="127.0.0.1",
                )
            else:
                ray.init(
                    address=self.ray_address,
                    log_to_driver=False,
                    _node_ip_address=remote.driver_address(self.ray_address),
                )
        # Runs come back as files to this folder: a task never writes on its node's disk.
        task = ray.remote(remote.run_on_node)
        pending = {
            task.remote(  # type: ignore[call-arg]  # Ray types remote functions up to 5 args
                self.spec,
                p,
                self.project,
                b,
                self.endpoint,
                remote.prepare(self.spec, p, self.root, self.project, b),
                self.settings,
                self.gate(),
            ): p
            for p, b in jobs
        }
        out = []
        while pending:
            (done,), _ = ray.wait(list(pending), num_returns=1)
            point, back = pending.pop(done), ray.get(done)
            remote.unpack(back.files, self.root / point.run_id(self.spec))
            out.append(self._report(back.summary))
        return out


def objective(summaries: Sequence[RunSummary], name: str) -> float:
    """Lower is better: what an Optuna search minimises."""
    if name == "fewest_conclusions":
        return sum(s.distinct_conclusions for s in summaries) / len(summaries)
    if name == "highest_feasibility":
        return -sum(s.mean_feasibility for s in summaries) / len(summaries)
    return sum(s.rounds + 5 * s.vetoes + 10 * (s.status != "converged") for s in summaries) / len(
        summaries
    )


def run(
    spec: ExperimentSpec,
    *,
    project: str | Path = ".",
    root: str | Path | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    on_done: Callable[[RunSummary], None] | None = None,
    total: Callable[[int], None] | None = None,
    settings: EndpointSettings | None = None,
) -> SweepReport:
    """Run (or resume) every point of ``spec``; baselines get the same number of theory calls
    as their deliberation sibling. ``settings`` bound every worker's requests to the endpoint
    (else read from the environment here, once), their rate limit shared by all of them."""
    project = Path(project).resolve()
    root = Path(root) if root else project / "experiments" / "runs" / spec.name
    settings = settings or EndpointSettings.from_env()
    with _one_sweep(spec, root, project):
        return _run(spec, project, root, workers, ray_address, on_done, total, settings)


@contextmanager
def _one_sweep(spec: ExperimentSpec, root: Path, project: Path) -> Iterator[None]:
    """Hold the experiment folder for one sweep: a second sweep on it (which would run the same
    points into the same run directories) is refused at once, naming the folder, unless every
    point is finished already (then it only reads, as notebooks do)."""
    root.mkdir(parents=True, exist_ok=True)
    with SweepDir(root).lock_path.open("a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if spec.space.kind != "optuna" and all(
                finished(spec, point, root, project) for point in expand(spec)
            ):
                yield
                return
            raise InputError(
                "experiment",
                f"{str(root)!r} is in use by another sweep",
                allowed="one sweep per experiment folder at a time (run it again when the "
                "other ends: finished points are skipped)",
            ) from None
        yield


def _run(
    spec: ExperimentSpec,
    project: Path,
    root: Path,
    workers: int,
    ray_address: str | None,
    on_done: Callable[[RunSummary], None] | None,
    total: Callable[[int], None] | None,
    settings: EndpointSettings,
) -> SweepReport:
    SweepDir(root).write_spec(spec.model_dump(mode="json"), spec.digest)
    done = on_done or (lambda s: None)
    started = time.perf_counter()
    summaries: list[RunSummary] = []
    slots = max(1, workers) * spec.limits.concurrency
    with (
        local_endpoint(spec, project, slots=slots, ray_address=ray_address) as endpoint,
        Dispatcher(
            spec,
            root,
            project,
            workers=workers,
            ray_address=ray_address,
            on_done=done,
            endpoint=endpoint,
            settings=settings,
        ) as dispatcher,
    ):
        if spec.space.kind == "optuna":
            summaries = _optuna(spec, dispatcher, total=total)
        else:
            points = expand(spec)
            if total:
                total(len(points))
            summaries = dispatcher.run([(p, None) for p in points if p.strategy == "deliberation"])
            by_key = {
                (s.point.problem, s.point.seed, s.point.calibrations, s.point.roster): s
                for s in summaries
            }
            baseline_jobs: list[Job] = []
            for p in points:
                if p.strategy != "deliberation":
                    sibling = by_key[(p.problem, p.seed, p.calibrations, p.roster)]
                    score_calls = sibling.calls - sibling.theory_calls
                    budget = Budget(
                        calls=max(1, sibling.calls),
                        tokens=sibling.tokens,
                        tokens_per_score=(sibling.tokens - sibling.theory_tokens)
                        // max(1, score_calls),
                    )
                    baseline_jobs.append((p, budget))
            summaries += dispatcher.run(baseline_jobs)
    report = SweepReport(
        experiment=spec.name,
        root=str(root),
        runs=tuple(summaries),
        wall_time_s=round(time.perf_counter() - started, 3),
    )
    SweepDir(root).write_last_sweep(
        LastSweep(
            reused=report.reused_runs,
            stale=report.stale_runs,
            new=report.new_runs,
            summary=report.reuse_line(),
        )
    )
    return report


def _optuna(
    spec: ExperimentSpec, dispatcher: Dispatcher, *, total: Callable[[int], None] | None
) -> list[RunSummary]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        direction="minimize", sampler=optuna.samplers.TPESampler(seed=spec.space.seed)
    )
    if total:
        total(spec.space.samples * len(spec.problems) * len(spec.seeds))
    out: list[RunSummary] = []
    for _ in range(spec.space.samples):
        trial = study.ask()
        cal = Calibrations(
            **{
                name: round(trial.suggest_float(name, *getattr(spec.space, name)), 4)
                for name in CALIBRATIONS
            }
        )
        points = expand(spec.model_copy(update={"baselines": ()}), [cal])
        batch = dispatcher.run([(p, None) for p in points])
        study.tell(trial, objective(batch, spec.space.objective))
        out += batch
    SweepDir(dispatcher.root).write_optuna(
        OptunaBest(best_value=study.best_value, best_params=study.best_params)
    )
    return out


def load(path: str | Path, *, per_round: bool = False, pandas: bool = False) -> Any:
    """Every run under ``path`` as a polars DataFrame (one row per run, or per round).

    Args:
        path: an experiment's run folder (experiments/runs/<name>) or a single run directory.
        per_round: one row per theory-loop round instead of per run.
        pandas: return a pandas DataFrame instead (needs pandas installed).
    """
    run = RunDir(path)
    files = [run.metrics_path] if run.metrics_path.exists() else SweepDir(path).metrics_paths()
    if not files:
        return pl.DataFrame()
    rounds = pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")
    if per_round:
        return rounds.to_pandas() if pandas else rounds
    # The final state is the last round of the last generation (a regenerated run restarts its
    # rounds at 0, so the round number alone does not order the rows).
    order = [c for c in ("regeneration", "round") if c in rounds.columns]
    frame = (
        rounds.sort(order, maintain_order=True)
        .group_by("run_id", maintain_order=True)
        .last()
        .drop(
            [
                "round",
                "agents",
                "revision_magnitude",
                "diversity",
                "adopted_points",
                "refused_repeats",
                "calls",
                "tokens",
            ],
            strict=False,
        )
    )
    extra = rounds.group_by("run_id").agg(
        # Revisions only: round 0 holds the proposals, which revise nothing.
        pl.col("revision_magnitude")
        .filter(pl.col("round") > 0)
        .mean()
        .fill_null(0.0)
        .alias("mean_revision_magnitude"),
        pl.col("distinct_conclusions").sort_by(order).first().alias("initial_conclusions"),
        # The monitor's diversity of the proposals and of the last round (1 - similarity).
        *(
            [
                pl.col("diversity").sort_by(order).first().alias("initial_diversity"),
                pl.col("diversity").sort_by(order).last().alias("final_diversity"),
            ]
            if "diversity" in rounds.columns
            else []
        ),
    )
    frame = frame.join(extra, on="run_id", how="left").sort("run_id")
    return frame.to_pandas() if pandas else frame
