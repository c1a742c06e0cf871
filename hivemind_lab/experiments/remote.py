"""Sweep points on a Ray cluster, with every run coming back to the driver's experiment folder.

A Ray task runs on whichever node has room, and that node's disk is not the driver's. So the
task never sees the experiment folder: it runs its point in a scratch folder of its own node
(resuming from the files of an interrupted run the driver sends along) and returns the run's
files as one archive, which the driver unpacks into ``<root>/<run-id>`` atomically (a half-
received run is never visible there). Staleness is decided on the driver, which holds the old
runs. Every node needs the project (problems, knowledge bases) at the driver's path and the
package installed; the experiment folder need not be shared.
"""

from __future__ import annotations

import io
import shutil
import socket
import tarfile
import tempfile
import uuid
from pathlib import Path

from hivemind_lab.errors import InputError
from hivemind_lab.experiments.freshness import StaleReason, current, stale_reasons
from hivemind_lab.experiments.points import RunPoint
from hivemind_lab.experiments.runner import RunSummary, run_point
from hivemind_lab.experiments.spec import ExperimentSpec
from hivemind_lab.llm.endpoint import EndpointSettings
from hivemind_lab.llm.local import LocalEndpoint
from hivemind_lab.llm.ratelimit import RateGate
from hivemind_lab.models import Frozen
from hivemind_lab.runs.manifest import Budget
from hivemind_lab.runs.sweepdir import SweepDir


class RemoteRun(Frozen):
    """What a Ray task sends back: the run's summary and its files."""

    summary: RunSummary
    files: bytes
    """The run directory as a gzipped tar (paths relative to it)."""
    node: str
    """The host name of the node that ran it."""


class Dispatch(Frozen):
    """What the driver sends with a point: the files of its interrupted run, if any."""

    started: bytes | None = None
    stale: tuple[StaleReason, ...] = ()
    """Why the point's earlier run was set aside on the driver (reported in its summary)."""


def pack(folder: Path) -> bytes:
    """``folder``'s files as a gzipped tar, paths relative to it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def unpack(files: bytes, dest: Path) -> None:
    """Replace ``dest`` with the archive's files, atomically: they are unpacked beside it and
    renamed into place, so ``dest`` is either the old run or the whole new one."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:8]
    incoming = dest.parent / f".incoming-{dest.name}-{tag}"
    with tarfile.open(fileobj=io.BytesIO(files), mode="r:gz") as archive:
        archive.extractall(incoming, filter="data")  # no absolute paths, links or devices
    if dest.exists():
        old = dest.parent / f".replaced-{dest.name}-{tag}"
        dest.rename(old)
        incoming.rename(dest)
        shutil.rmtree(old)
    else:
        incoming.rename(dest)


def prepare(
    spec: ExperimentSpec, point: RunPoint, root: Path, project: Path, budget: Budget | None
) -> Dispatch:
    """On the driver, for a point that is not finished-and-current: set a stale run aside (as
    a local run would), or send an interrupted current run along to be resumed."""
    sweep = SweepDir(root)
    run = sweep.run(point.run_id(spec))
    if not run.started:
        return Dispatch()
    before = run.read_manifest()
    stale = stale_reasons(before, current(spec, point, project), budget)
    if stale:
        sweep.move_aside(run, created_at=before.created_at, reasons=stale)
        return Dispatch(stale=stale)
    return Dispatch(started=pack(run.path))


def run_on_node(
    spec: ExperimentSpec,
    point: RunPoint,
    project: Path,
    budget: Budget | None,
    endpoint: LocalEndpoint | None,
    dispatch: Dispatch,
    settings: EndpointSettings | None = None,
    gate: RateGate | None = None,
) -> RemoteRun:
    """In a Ray task: run ``point`` in a scratch folder of this node and return its files."""
    if not project.is_dir():
        raise InputError(
            "project",
            f"{str(project)!r} does not exist on node {socket.gethostname()!r}",
            allowed="the project checked out at the same path on every node of the cluster",
        )
    with tempfile.TemporaryDirectory(prefix="hivemind-run-") as scratch:
        root = Path(scratch)
        run = root / point.run_id(spec)
        if dispatch.started is not None:
            unpack(dispatch.started, run)
        summary = run_point(
            spec, point, root, project, budget, endpoint, settings=settings, gate=gate
        )
        if dispatch.stale:
            summary = summary.model_copy(update={"stale": dispatch.stale})
        return RemoteRun(summary=summary, files=pack(run), node=socket.gethostname())


def driver_address(cluster: str) -> str | None:
    """The address this machine uses to reach the cluster at ``cluster`` (``host:port``), which
    the driver's Ray node must advertise (Ray's own guess asks a public DNS server and falls
    back to the host name's address, which may not reach the cluster); None for ``ray://``."""
    if cluster.startswith("ray://"):
        return None
    host, _, port = cluster.rpartition(":")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host.strip("[]"), int(port or 6379)))  # UDP: picks a route, sends nothing
        return str(s.getsockname()[0])
