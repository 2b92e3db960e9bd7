"""A GTP session through Sabaki's GTP client library (`@sabaki/gtp`, its `Controller` class)
against `mallard gtp`, driven by tests/protocol/sabaki_client.js under node.

The npm module is not vendored: `.ci/run` installs it (when npm is there) with
`npm install --no-save --prefix .cache/node @sabaki/gtp`, and this test looks for it under
`.cache/node/node_modules` of the repository, or in the `node_modules` folder named by the
environment variable MALLARD_NODE_MODULES. Without node or the module the test is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.protocol.harness import ENGINE_COMMAND

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("sabaki_client.js")


def node_modules() -> Path:
    return Path(os.environ.get("MALLARD_NODE_MODULES") or ROOT / ".cache" / "node" / "node_modules")


def run_session(commands: list[dict], timeout_ms: int = 120_000) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    modules = node_modules()
    if not (modules / "@sabaki" / "gtp" / "package.json").is_file():
        pytest.skip(f"the npm module @sabaki/gtp is not installed under {modules} (install it "
                    "with: npm install --no-save --prefix .cache/node @sabaki/gtp, or set "
                    "MALLARD_NODE_MODULES to a node_modules folder that has it)")
    spec = {"modules": str(modules), "engine": ENGINE_COMMAND + ["gtp"], "cwd": str(ROOT),
            "commands": commands, "timeout_ms": timeout_ms}
    done = subprocess.run([node, str(DRIVER)], input=json.dumps(spec), capture_output=True,
                          text=True, timeout=timeout_ms / 1000 * 3 + 30, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def command(ident, name, *args):
    return {"id": ident, "name": name, "args": list(args)}


def board_rows(content: str) -> list[str]:
    """The rows of a `showboard` reply (Sabaki trims the reply, so the first row's padding
    may be gone), top row first."""
    return [line.strip() for line in content.split("\n") if re.match(r"\s*\d+ ", line)]


def rows_of(stones: dict) -> list[str]:
    """The rows `showboard` draws for {(file, rank): "X" or "O"} on 7x6, top row first."""
    return [f"{rank} " + " ".join(stones.get((file, rank), ".") for file in "abcdefg")
            for rank in range(6, 0, -1)]


def test_a_gtp_session_through_the_sabaki_controller():
    commands = [
        command(1, "protocol_version"),
        command(2, "name"),
        command(3, "boardsize", "7", "6"),
        command(4, "clear_board"),
        command(5, "play", "b", "d"),
        command(6, "genmove", "w"),
        command(7, "showboard"),
        command(8, "undo"),
        command(9, "showboard"),
        command(10, "known_command", "genmove"),
        command(11, "known_command", "frobnicate"),
        command(12, "frobnicate"),
        {"name": "play", "args": ["w", "z"]},  # no id
        command(14, "play", "b", "a"),  # not black's turn
        command(15, "final_score"),
        # a finished game: black's four in column a
        command(16, "clear_board"),
        *[command(17 + i, "play", "bw"[i % 2], "ab"[i % 2]) for i in range(7)],
        command(24, "final_score"),
        command(25, "genmove", "w"),
        command(26, "showboard"),
        command(27, "list_commands"),
        command(99, "quit"),
    ]
    result = run_session(commands)
    assert result["error"] is None, result
    responses = result["responses"]
    assert [r["command"]["name"] for r in responses] == [c["name"] for c in commands]
    by_id = {}
    for sent, entry in zip(commands, responses):
        response = entry["response"]
        assert response["id"] == sent.get("id"), entry  # ids echoed, none when none was sent
        if sent.get("id") is not None:
            by_id[sent["id"]] = response

    def ok(ident) -> str:
        assert by_id[ident]["error"] is False, by_id[ident]
        return by_id[ident]["content"]

    def failed(ident) -> str:
        assert by_id[ident]["error"] is True, by_id[ident]
        return by_id[ident]["content"]

    assert ok(1) == "2"
    assert ok(2) == "Mallard"
    assert ok(3) == "" and ok(4) == "" and ok(5) == ""
    reply = ok(6)
    assert re.fullmatch(r"[a-g]", reply), reply
    assert board_rows(ok(7)) == rows_of({("d", 1): "X", (reply, 2 if reply == "d" else 1): "O"})
    assert ok(7).endswith("black to move")
    assert ok(8) == ""
    assert board_rows(ok(9)) == rows_of({("d", 1): "X"})
    assert ok(9).endswith("white to move")
    assert ok(10) == "true" and ok(11) == "false"
    assert failed(12) == "unknown command"
    no_id = responses[12]["response"]
    assert no_id["error"] is True and "illegal move" in no_id["content"]
    assert "illegal move" in failed(14)
    if not by_id[15]["error"]:  # scores of Connect Four searches are not asserted here
        assert ok(15) in ("B+1", "W+1", "0")
    for ident in range(16, 24):
        assert ok(ident) == ""
    assert ok(24) == "B+1"
    assert "game is over" in failed(25)
    assert "game over: black wins" in ok(26)
    assert {"protocol_version", "name", "version", "known_command", "list_commands", "quit",
            "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
            "final_score"} <= set(ok(27).split("\n"))
    assert ok(99) == ""
    assert result["exit"] == {"code": 0, "signal": None}
    assert result["stderr"] == []
