"""Drivers for the engine front-ends in tests: in-process (a `serve` thread over pipes) and as a
`mallard` subprocess. Both collect stdout lines with arrival times and read them with timeouts."""

from __future__ import annotations

import io
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Optional

import pytest

from mallard.protocol.server import serve

ENGINE_COMMAND = [sys.executable, "-c",
                  "import sys; from mallard.protocol.cli import main; sys.exit(main())"]


class _Lines:
    def __init__(self):
        self.queue: queue.Queue = queue.Queue()
        self.seen: list[str] = []

    def reader(self, stream) -> None:
        for raw in stream:
            self.queue.put(raw.rstrip("\n"))
        self.queue.put(None)

    def next(self, timeout: float) -> Optional[str]:
        line = self.queue.get(timeout=timeout)
        if line is not None:
            self.seen.append(line)
        return line

    def until(self, predicate, timeout: float) -> list[str]:
        """Lines up to and including the first one the predicate accepts."""
        deadline = time.monotonic() + timeout
        got = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching line within {timeout} s; got {got[-10:]}")
            try:
                line = self.next(remaining)
            except queue.Empty:
                raise TimeoutError(
                    f"no matching line within {timeout} s; got {got[-10:]}") from None
            if line is None:
                raise EOFError(f"the engine ended; got {got[-10:]}")
            got.append(line)
            if predicate(line):
                return got

    def drain(self, wait: float = 0.05) -> list[str]:
        got = []
        while True:
            try:
                line = self.next(wait)
            except queue.Empty:
                return got
            if line is None:
                return got
            got.append(line)


class Engine:
    """`serve()` on a thread of this process, fed through pipes."""

    def __init__(self, protocol: Optional[str] = None):
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        self._stdin_writer = os.fdopen(in_write, "w", buffering=1)
        self._stdout = os.fdopen(out_write, "w", buffering=1)
        self.stderr = io.StringIO()
        stdin = os.fdopen(in_read, "r")
        self.lines = _Lines()
        threading.Thread(target=self.lines.reader, args=(os.fdopen(out_read, "r"),),
                         daemon=True).start()
        self.exit_code: Optional[int] = None

        def run() -> None:
            self.exit_code = serve(stdin, self._stdout, self.stderr, protocol)
            self._stdout.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def send(self, *texts: str) -> None:
        for text in texts:
            self._stdin_writer.write(text + "\n")
        self._stdin_writer.flush()

    def until(self, prefix: str, timeout: float = 60) -> list[str]:
        return self.lines.until(lambda line: line.startswith(prefix), timeout)

    def ready(self, timeout: float = 120) -> list[str]:
        """Send `isready` and return the lines before `readyok`."""
        self.send("isready")
        return self.until("readyok", timeout)[:-1]

    def drain(self, wait: float = 0.05) -> list[str]:
        return self.lines.drain(wait)

    def close(self, timeout: float = 10) -> Optional[int]:
        try:
            self.send("quit")
            self._stdin_writer.close()
        except (OSError, ValueError):
            pass
        self.thread.join(timeout)
        return self.exit_code


class Process:
    """`mallard [protocol]` as a subprocess."""

    def __init__(self, *args: str, env: Optional[dict] = None):
        self.process = subprocess.Popen(ENGINE_COMMAND + list(args), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, bufsize=1, env=env)
        self.lines = _Lines()
        threading.Thread(target=self.lines.reader, args=(self.process.stdout,),
                         daemon=True).start()

    def send(self, *texts: str) -> None:
        for text in texts:
            self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def until(self, prefix: str, timeout: float = 60) -> list[str]:
        return self.lines.until(lambda line: line.startswith(prefix), timeout)

    def close_stdin(self) -> None:
        self.process.stdin.close()

    def wait(self, timeout: float = 20) -> tuple[int, str]:
        code = self.process.wait(timeout)
        return code, self.process.stderr.read()


def run_with_timeout(function, timeout: float = 120):
    """Run a blocking python-chess call on a thread; fail instead of hanging the test run."""
    box: dict = {}

    def target():
        try:
            box["value"] = function()
        except BaseException as error:  # re-raised on the test's thread
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        pytest.fail(f"python-chess call did not return within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")
