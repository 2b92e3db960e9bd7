"""Files that one process at a time may write: a match database, a book build's work directory.

`hold(path, what)` takes an exclusive lock on the lock file `path` and writes its pid there; a
second process is refused at once with a `LockHeldError` that names the holder's pid. The lock is
the kernel's (`flock`), so it ends with its holder, however that ends: a killed process leaves
no stale lock, and the pid in the file is only read to name the holder.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path


class LockHeldError(OSError):
    """Another process holds the lock; the message names it and its pid."""

    def __str__(self) -> str:
        return self.strerror


class Lock:
    """A held lock; `release()` (or leaving a `with` block) ends it."""

    def __init__(self, descriptor: int, path: Path):
        self._descriptor = descriptor
        self.path = path

    def release(self) -> None:
        if self._descriptor >= 0:
            os.close(self._descriptor)  # closing the descriptor ends the flock
            self._descriptor = -1

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def hold(path: Path, what: str) -> Lock:
    """The lock on `path` (created if need be), or LockHeldError naming `what` and the holder."""
    path = Path(path)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_pid(descriptor)
        os.close(descriptor)
        who = f"process {holder}" if holder else "another process"
        raise LockHeldError(errno.EBUSY, f"{what} is in use by {who} ({path})") from None
    except OSError:
        os.close(descriptor)
        raise
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{os.getpid()}\n".encode())
    return Lock(descriptor, path)


def _read_pid(descriptor: int) -> str:
    try:
        text = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""
