"""A small engine for the runner's tests that misbehaves on request; legal moves come from
pyffish (Fairy-Stockfish's rules), not from our own rules.

    python scripted_engine.py [--protocol uci|ugi|gtp] [--behaviour B] [--at N] [--delay S]

Behaviours: `random` (a random legal move), `first` (the first legal move in pyffish's order),
`illegal` (an illegal move at its N-th `go`), `garbage` (an unparsable `bestmove` line at its
N-th go), `crash` (exits with status 1 at its N-th go, saying so on stderr), `hang` (never answers
its N-th go), `slow` (sleeps `--delay` seconds before each move), `slowstart` (sleeps `--delay`
before the handshake answer), `mute` (never answers the handshake), `san` (answers in SAN instead of
UCI notation), `slowplay` (GTP: sleeps `--delay` before acknowledging each `play`), `flood` (2 GB
without a newline at its N-th go), `none` (`bestmove (none)` at its N-th go), `slowload` (sleeps
`--delay` after each `UCI_Variant`, and each move's `info string` says whether its `go` was
sent after the `readyok` that followed the switch).
`--score CP` makes it report that score with every move (for adjudication tests).
"""

from __future__ import annotations

import argparse
import os
import random
import select
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import pyffish  # noqa: E402

from tests import oracles  # noqa: E402,F401  (loads pyffish's cfour definition)


class Stdin:
    """The lines of stdin, read without a hidden buffer so `waiting` can tell what came."""

    def __init__(self):
        self.buffer = b""

    def __iter__(self):
        while True:
            while b"\n" not in self.buffer:
                chunk = os.read(0, 1 << 16)
                if not chunk:
                    if self.buffer:
                        yield self.buffer.decode("utf-8", "replace")
                    return
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            yield line.decode("utf-8", "replace")

    def waiting(self) -> bool:
        """Whether more input has come than the lines read so far."""
        return bool(self.buffer) or bool(select.select([0], [], [], 0)[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="uci")
    parser.add_argument("--behaviour", default="random")
    parser.add_argument("--at", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--score", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    variant = "duck" if args.protocol != "gtp" else "cfour"
    fen = pyffish.start_fen(variant)
    moves: list[str] = []
    gos = 0
    loaded = True  # no `UCI_Variant` since a `readyok` the client waited for
    stdin = Stdin()

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def choose() -> str:
        legal = pyffish.legal_moves(variant, fen, moves)
        if args.behaviour == "first":
            return sorted(legal)[0]
        return rng.choice(sorted(legal))

    for raw in stdin:
        tokens = raw.split()
        if not tokens:
            continue
        if args.protocol == "gtp" and tokens[0].isdigit():
            ident, tokens = tokens[0], tokens[1:]
        else:
            ident = ""
        command = tokens[0] if tokens else ""
        if command in ("uci", "ugi"):
            if args.behaviour == "mute":
                continue
            if args.behaviour == "slowstart":
                time.sleep(args.delay)
            say(f"id name scripted-{args.behaviour}")
            say("id author tests")
            say("option name UCI_Variant type combo default duck var duck var cfour")
            say(f"{command}ok")
        elif command == "isready":
            # a line already waiting was written before our `readyok`, so it did not wait for it
            loaded = not stdin.waiting()
            say("readyok")
        elif command == "setoption" and "UCI_Variant" in tokens:
            variant = tokens[-1]
            fen = pyffish.start_fen(variant)
            if args.behaviour == "slowload":
                time.sleep(args.delay)
                loaded = False
        elif command == "position":
            if tokens[1] == "fen":
                end = tokens.index("moves") if "moves" in tokens else len(tokens)
                fen = " ".join(tokens[2:end])
            else:
                fen = pyffish.start_fen(variant)
            moves = tokens[tokens.index("moves") + 1:] if "moves" in tokens else []
        elif command == "go":
            gos += 1
            if args.behaviour == "slowload":
                say("info string go " + ("after readyok" if loaded else "before readyok"))
            if gos == args.at or args.behaviour in ("slow",):
                if args.behaviour == "crash":
                    sys.exit(f"scripted-crash: crashing at go {gos}")
                if args.behaviour == "hang":
                    time.sleep(3600)
                if args.behaviour == "slow":
                    time.sleep(args.delay)
                if args.behaviour == "illegal":
                    say("bestmove a1a1,a1a2" if variant == "duck" else "bestmove P@a9")
                    continue
                if args.behaviour == "garbage":
                    say("bestmove")
                    continue
                if args.behaviour == "flood":  # 2 GB without a newline, then the move
                    chunk = b"x" * (1 << 20)
                    try:
                        for _ in range(2048):
                            sys.stdout.buffer.write(chunk)
                    except (BrokenPipeError, OSError):
                        sys.exit(0)
                    sys.stdout.buffer.flush()
                if args.behaviour == "none":
                    say("bestmove (none)")
                    continue
            move = choose()
            if args.behaviour == "san" and gos == args.at:
                move = pyffish.get_san(variant, fen, move, False)
            if args.score is not None:
                say(f"info depth 1 score cp {args.score} pv {move}")
            else:
                say(f"info depth 1 score cp 0 pv {move}")
            say(f"bestmove {move}")
        elif command == "quit":
            return
        # GTP (Connect Four): black is the first player; vertices are column letters
        elif command == "protocol_version":
            if args.behaviour == "mute":
                continue
            say(f"={ident} 2\n")
        elif command == "name":
            say(f"={ident} scripted-{args.behaviour}\n")
        elif command in ("boardsize", "clear_board", "komi", "time_settings", "time_left"):
            if command == "clear_board":
                moves = []
            say(f"={ident}\n")
        elif command == "play":
            if args.behaviour == "slowplay":
                time.sleep(args.delay)
            column = tokens[2].lower()
            height = sum(1 for move in moves if move[2] == column) + 1
            moves.append(f"P@{column}{height}")
            say(f"={ident}\n")
        elif command == "genmove":
            gos += 1
            if gos == args.at and args.behaviour == "crash":
                sys.exit(f"scripted-crash: crashing at genmove {gos}")
            if gos == args.at and args.behaviour == "hang":
                time.sleep(3600)
            move = choose()
            if gos == args.at and args.behaviour == "illegal":
                say(f"={ident} z\n")
                continue
            moves.append(move)
            say(f"={ident} {move[2]}\n")
        elif args.protocol == "gtp":
            say(f"?{ident} unknown command\n")


if __name__ == "__main__":
    main()
