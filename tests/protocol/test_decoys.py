"""Our helper processes never run what the working directory holds.

`python -m` and `-c` put the working directory first on `sys.path`: from a folder holding
`engines/`, `protocol/` and `mallard/` packages, the board's engine, `mallard warmup`'s workers
and the tuner's engine ran those instead of ours. Every command here runs from a folder of such
decoys, which exit with status 3 when imported, and must do its work.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

DECOY = "raise SystemExit(3)\n"


@pytest.fixture
def decoys(tmp_path) -> Path:
    for package in ("engines", "protocol", "tournaments", "mallard", "mallard/engines",
                    "mallard/protocol", "mallard/protocol/board"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text(DECOY)
    for module in ("protocol/cli.py", "protocol/warmup.py", "mallard/protocol/cli.py",
                   "mallard/protocol/warmup.py"):
        (tmp_path / module).write_text(DECOY)
    (tmp_path / "mallard" / "__init__.py").unlink()  # a namespace portion, as ours is
    return tmp_path


def mallard() -> list[str]:
    """The installed console script, as a user types `mallard`."""
    script = shutil.which("mallard")
    if script is None:
        pytest.skip("the mallard console script is not on the PATH (pip install -e .)")
    return [script]


def test_warmup_runs_our_workers(decoys):
    done = subprocess.run(mallard() + ["warmup"], cwd=decoys, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    assert sorted(line.split()[0] for line in done.stdout.splitlines()) == ["cfour", "duck",
                                                                             "uttt"]


def test_a_match_between_default_engines(decoys):
    done = subprocess.run(mallard() + ["match", "-variant", "cfour", "-engine", "cmd=mallard",
                                       "name=a", "-engine", "cmd=mallard", "name=b", "-each",
                                       "st=0.05", "-games", "2"],
                          cwd=decoys, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    finished = [line for line in done.stdout.splitlines() if line.startswith("Finished game")]
    assert len(finished) == 2 and all("disconnects" not in line for line in finished), finished


def test_the_board_plays_a_move_with_its_default_engine(decoys):
    pytest.importorskip("uvicorn", reason="mallard board needs mallard[board]")
    websockets = pytest.importorskip("websockets", reason="mallard board needs mallard[board]")
    board = subprocess.Popen(mallard() + ["board", "--port", "0"], cwd=decoys,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        address = board.stdout.readline().split()[2]  # http://127.0.0.1:PORT/?token=T
        base, token = address.split("/?token=")
        socket = f"ws{base[len('http'):]}/ws?game=cfour&token={token}"

        async def play() -> list:
            async with websockets.connect(socket, origin=base, open_timeout=30) as ws:
                await ws.send(json.dumps({"cmd": "play", "side": 1, "movetime": 200}))
                while True:  # the page's state after `play`, before the move that starts it
                    message = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    if message["type"] == "state" and message["engine"]["side"] == 1:
                        break
                await ws.send(json.dumps({"cmd": "move", "move": "d"}))
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 120))
                    assert message["type"] != "error", message
                    if message["type"] == "state" and len(message["moves"]) == 2:
                        return message["moves"]

        moves = asyncio.run(play())
        assert moves[0]["text"] == "P@d1" and moves[1]["text"].startswith("P@")
    finally:
        board.terminate()
        board.wait(10)
    assert "Traceback" not in board.stderr.read()
