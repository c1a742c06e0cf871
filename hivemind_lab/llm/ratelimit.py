"""One request rate for every caller of an endpoint: this process, a sweep's worker processes,
its Ray tasks.

A gate hands out start times one interval apart (``60 / rpm`` seconds): a request reserves the
next free time, then sleeps until it. Reserving is the only shared step and takes microseconds,
so the gates differ only in where the next free time lives: in this process (`LocalGate`), in a
file every process of one machine locks (`FileGate`: a sweep's pool), or in a Ray actor
(`RayGate`: nodes share no disk). With no burst allowed, no window of any length holds more
requests than the rate allows plus one.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class RateGate(Protocol):
    """Waits until the caller may send its next request."""

    async def wait(self) -> None: ...


class _Schedule:
    """The next free start time of a gate, and the reservation rule every gate applies."""

    @staticmethod
    def reserve(next_free: float, now: float, interval: float) -> tuple[float, float]:
        """(the start time granted, the next free time after it)."""
        start = max(now, next_free)
        return start, start + interval


@dataclass
class LocalGate:
    """The gate of one process (threads included: `run_sync` may run a loop in a thread)."""

    rpm: float
    _next: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    async def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start, self._next = _Schedule.reserve(self._next, now, 60.0 / self.rpm)
        if start > now:
            await asyncio.sleep(start - now)


@dataclass(frozen=True)
class FileGate:
    """The gate of every process on this machine that names the same file (picklable, so a
    sweep's worker processes each get the driver's). The file holds the next free start time
    (wall clock, which every process reads alike), under an exclusive lock while it changes."""

    path: Path
    rpm: float

    def reserve(self) -> float:
        """Seconds to wait before this request may start."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, 8, 0)
            next_free = struct.unpack("<d", raw)[0] if len(raw) == 8 else 0.0
            now = time.time()
            start, after = _Schedule.reserve(next_free, now, 60.0 / self.rpm)
            os.pwrite(fd, struct.pack("<d", after), 0)
            return start - now
        finally:
            os.close(fd)  # releases the lock

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


class RateActor:
    """The Ray actor behind `RayGate`: the next free time on the actor's own clock, granted as a
    delay so that nodes' clocks need not agree."""

    def __init__(self, rpm: float) -> None:
        self.interval = 60.0 / rpm
        self.next_free = 0.0

    def reserve(self) -> float:
        now = time.monotonic()
        start, self.next_free = _Schedule.reserve(self.next_free, now, self.interval)
        return start - now


@dataclass(frozen=True)
class RayGate:
    """The gate of every Ray task of a sweep: an actor handle (Ray pickles it to each task)."""

    actor: Any
    rpm: float

    @classmethod
    def start(cls, rpm: float) -> RayGate:
        import ray

        return cls(ray.remote(num_cpus=0)(RateActor).remote(rpm), rpm)

    async def wait(self) -> None:
        delay = await self.actor.reserve.remote()
        if delay > 0:
            await asyncio.sleep(delay)
