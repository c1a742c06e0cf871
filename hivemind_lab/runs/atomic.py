"""Whole-or-absent files: write a temporary file beside the target, fsync, rename over it.

The temporary name is unique to the writing process and call, so two writers of one file never
write into each other's temporary file (each rename installs one whole version). A temporary
file left by a killed writer is removed by the next write of the same target.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def _stale_temporaries(path: Path) -> list[Path]:
    """Temporary files of ``path`` whose writing process is gone."""
    stale = []
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        pid = tmp.name[len(path.name) + 2 :].split(".", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            stale.append(tmp)
        except PermissionError:  # alive, another user's
            pass
    return stale


def write_bytes_atomic(
    path: str | Path, data: bytes, *, mode: int = 0o666, replace: bool = True
) -> Path:
    """Write ``data`` to ``path`` so that readers (and a crash) see the old file or the new one,
    never part of one. ``mode`` is the new file's permissions (before the umask).

    Raises:
        FileExistsError: ``replace`` is false and ``path`` exists (checked atomically: of two
            writers creating one file, exactly one succeeds)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
            tmp.unlink()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    for stale in _stale_temporaries(path):
        stale.unlink(missing_ok=True)
    return path


def write_text_atomic(path: str | Path, text: str, *, mode: int = 0o666) -> Path:
    """`write_bytes_atomic` of ``text`` in UTF-8."""
    return write_bytes_atomic(path, text.encode("utf-8"), mode=mode)
