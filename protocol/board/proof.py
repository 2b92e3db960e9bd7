"""One board page's proof of a whole UTTT game: `mallard prove uttt --game` run as a subprocess.

`GameProof` runs the command line's game analysis (the prover, from the last position backwards
on one table, each proof reusing the later ones) in a process group of its own, so that the
board's server only reads its lines and a kill ends it at once, helpers included. Each
position's line reaches `on_line(proof, line)` as the dict `tools.read_game_line` makes of it
(ply, value, seconds, nodes); `on_end(proof, error)` comes once, with None when every position
has its line or the proof was stopped, else a one-line reason. Both run on the reader thread.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Optional

from mallard.engines.processes import mallard_command
from mallard.protocol.tools import read_game_line
from mallard.tournaments.players import EngineConfig, EngineError, EngineProcess

MIN_LIMIT_S = 1
MAX_LIMIT_S = 60        # a whole game (81 positions at most) then ends within 81 minutes
DEFAULT_LIMIT_S = 10
MAX_THREADS = 2         # the proof of one page takes at most two cores of the server


def prover_threads() -> int:
    return max(1, min(MAX_THREADS, os.cpu_count() or 1))


class GameProof:
    """The proof of the game `moves` (move texts) from `start_fen` (None: the start position),
    `limit_s` seconds for each position."""

    def __init__(self, start_fen: Optional[str], moves: list[str], limit_s: int,
                 on_line: Callable[["GameProof", dict], None],
                 on_end: Callable[["GameProof", Optional[str]], None]):
        command = mallard_command("prove", "uttt", *([start_fen] if start_fen else []),
                                  "--game", " ".join(moves) or " ", "--limit", str(limit_s),
                                  "--threads", str(prover_threads()))
        self.total = len(moves) + 1
        self.on_line, self.on_end = on_line, on_end
        self._stopped = False
        self.process = EngineProcess(EngineConfig("prover", command))  # EngineError: no start
        try:
            threading.Thread(target=self._read, name="board-game-proof", daemon=True).start()
        except BaseException:
            self.process.kill()
            raise

    def _read(self) -> None:
        seen = 0
        try:
            while seen < self.total:
                _, text = self.process.next_line(None)
                line = read_game_line(text)
                if line is not None:
                    seen += 1
                    self.on_line(self, line)
        except EngineError as error:
            if not self._stopped:
                self.on_end(self, f"the proof stopped after {seen} of {self.total} positions: "
                                  f"{error}")
                return
        self.process.kill()  # the summary line is left unread: the page counts for itself
        self.on_end(self, None)

    def stop(self) -> None:
        """End it now (a kill: it has nothing to save)."""
        self._stopped = True
        self.process.kill()
