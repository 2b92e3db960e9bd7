"""`mallard.engines.locks`: one holder at a time, the second refused at once naming the first's
pid, and no stale lock after a holder dies."""

import os
import subprocess
import sys
import time

import pytest

from mallard.engines import locks

HOLDER = ("import sys, time; from mallard.engines import locks; "
          "lock = locks.hold(sys.argv[1], 'the test file'); print('held', flush=True); "
          "time.sleep(60)")


def _holder(path):
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout.readline() == "held\n"
    return process


def test_a_second_holder_is_refused_naming_the_first(tmp_path):
    path = tmp_path / "lock"
    holder = _holder(path)
    try:
        started = time.monotonic()
        with pytest.raises(locks.LockHeldError) as refused:
            locks.hold(path, "the test file")
        assert holder.poll() is None  # refused while the holder still holds: no waiting
        assert time.monotonic() - started < 30  # (it holds for 60 s)
        assert str(refused.value) == f"the test file is in use by process {holder.pid} ({path})"
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    path = tmp_path / "lock"
    holder = _holder(path)
    holder.kill()
    holder.wait()
    assert path.read_text().strip() == str(holder.pid)  # the file stays, the lock does not
    with locks.hold(path, "the test file"):
        assert path.read_text().strip() == str(os.getpid())


def test_released_locks_can_be_taken_again(tmp_path):
    path = tmp_path / "lock"
    first = locks.hold(path, "the test file")
    first.release()
    first.release()  # twice is harmless
    with locks.hold(path, "the test file"):
        with pytest.raises(locks.LockHeldError):
            locks.hold(path, "the test file")  # one process, two descriptors: still refused
