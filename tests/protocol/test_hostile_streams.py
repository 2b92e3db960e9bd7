"""Hostile command streams against the UCI, UGI and GTP front-ends (in-process `Engine`).

Hypothesis builds each stream one command at a time (`st.data()`), mixing valid commands
(handshakes, options, positions with partly legal move lists, searches with valid and nonsense
tokens, `stop`, `ponderhit`, `d`, variant switches) with garbage lines (unicode, control
characters, very long lines, blank lines, tabs and runs of spaces, CRLF). While building it the
test keeps its own model of the position the engine should hold, replayed with pyffish (Duck
Chess is built in; Connect Four is `cfour` from tests/oracles.py, checked against the engine's
rules first), stopping at the first illegal move as Fairy-Stockfish does. Each stream ends with
`stop` and `isready`; then the whole output is checked against the model:

- the engine is still running (nothing before `quit` ended it), and `quit` ends it with status 0;
- every `isready` got its `readyok`, every `uci`/`ugi` its `uciok`/`ugiok`;
- every `go` got exactly one `bestmove`, in order, legal in the position the model held at that
  `go` (inside `searchmoves` when some were legal), `(none)` with `score mate 0` / `cp 0` when the
  game was over, an `info ... score` line before it, and a legal ponder move;
- `d` printed the FEN pyffish computes for the model; the `illegal move N 'x'` and
  `invalid position` errors came exactly for the commands that should produce them;
- no `Traceback` or internal error on stdout; stderr stays empty unless `debug on` was sent.

GTP streams are checked the same way (one reply per command, ids echoed, moves and boards
against a plain Connect Four model). Searches are kept tiny (depth 1-2, nodes 50-500, movetime
5-50 ms; anything open-ended is stopped). A slow variant with many more examples runs with
`-m slow`.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

import pyffish
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from mallard.engines.processes import MAX_LINE_BYTES
from mallard.protocol.frontend import OVERLONG_MESSAGE
from mallard.protocol.gtp import GtpFrontEnd
from mallard.protocol.io import LINE_OVERHEAD, Input
from mallard.protocol.uci import UciFrontEnd
from tests import oracles  # noqa: F401  (loads the cfour variant into pyffish)
from tests.protocol.harness import Engine, Process

# --- the rules oracle -------------------------------------------------------------------------

# Connect Four is loaded into pyffish as `cfour` by tests/oracles.py (imported above).
VARIANTS = ("duck", "cfour")
START = {variant: pyffish.start_fen(variant) for variant in VARIANTS}
FILES = "abcdefghijklmnopqrstuvwxyz"
DRAWN_SEQUENCE = "112112113223225334334544644556557667677677"  # fills 7x6 with no four


def drops(sequence: str) -> list[str]:
    """`P@d1` moves of a digit sequence of 1-based columns, as pyffish writes them."""
    moves: list[str] = []
    for char in sequence:
        file = FILES[int(char) - 1]
        legal = [m for m in pyffish.legal_moves("cfour", START["cfour"], moves)
                 if m.startswith(f"P@{file}")]
        assert len(legal) == 1, (sequence, moves)
        moves.append(legal[0])
    return moves


def cfour_fen(sequence: str) -> str:
    return pyffish.get_fen("cfour", START["cfour"], drops(sequence))


VALID_FENS = {
    "duck": [
        START["duck"],
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "rnbqkbnr/pppppppp/8/3*4/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "4k3/8/8/8/8/8/8/4RK2 w - - 0 1",  # the king can be taken at once
        "8/P5k1/8/8/8/8/5p2/K7 w - - 0 1",  # promotions on both sides
        "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 8",  # castling
        "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",  # en passant
        "rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 2",  # e.p. square dropped
        "k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1",  # black cannot move: black has won
    ],
    "cfour": [
        START["cfour"],
        cfour_fen("4"),
        cfour_fen("4453"),
        cfour_fen("44443322"),
        cfour_fen("121212"),  # the first player wins in column 1
        cfour_fen("1212121"),  # over: four in column 1
        cfour_fen(DRAWN_SEQUENCE),  # over: full board
    ],
}
INVALID_FENS = {
    "duck": [
        "8/8/8 w - - 0 1",
        "rnbqkbnr/pppppppp/8/3*4/4P3/3*4/PPPP1PPP/RNBQKBNR b KQkq - 0 1",  # two ducks
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",  # a pawn on the last rank
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNZ w KQkq - 0 1",
        START["duck"] + " 7",
        "hello",
        START["cfour"],
    ],
    "cfour": [
        "7/7/7/7/7 w - - 0 1",
        "7/7/7/7/3P3/7[PPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 1",  # floating stone
        "7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 1",  # wrong side
        "7/7/7/7/7/PPP4[PPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 2",  # 3 to 0 stones
        "7/7/7/7/7/7[PP] w - - 0 1",  # holdings
        "7/7/7/7/7/3X3 b - - 0 1",
        "hello",
        START["duck"],
    ],
}
# Move texts neither engine accepts in any position (they are not in the forms the engines read:
# Duck Chess also reads SAN and `e2e4,d5`, Connect Four also reads `d`, `4` and `p@d1`).
BAD_MOVES = {
    "duck": ["zz", "0000", "e2e4", "P@d1", "e2e4,", ",e4d5", "e2e4,e4d5,d5d6", "e9e4,e4d5",
             "a1a1,a1a2", "@@", "\u00fc", "(none)", "e2e4;e4d5"],
    "cfour": ["P@d9", "P@z1", "P@", "8", "0", "h", "zz", "e2e4,e4d5", "P@d0", "@@", "\u00fc",
              "(none)", "PP@d1"],
}

UCI_COMMANDS = {name[4:] for name in dir(UciFrontEnd) if name.startswith("cmd_")} | {"quit"}


class Model:
    """The position the engine should hold: variant, root FEN and the moves played from it."""

    def __init__(self, variant: str = "duck"):
        self.reset(variant)

    def reset(self, variant: str) -> None:
        self.variant, self.root, self.moves = variant, START[variant], []

    def legal(self, extra=()) -> list[str]:
        return sorted(pyffish.legal_moves(self.variant, self.root, self.moves + list(extra)))

    def fen(self) -> str:
        return pyffish.get_fen(self.variant, self.root, self.moves)

    def white_to_move(self) -> bool:
        return self.fen().split()[1] == "w"

    def winner(self) -> Optional[str]:
        """None while the game goes on, else "white", "black" or "draw"."""
        if self.legal():
            return None
        value = pyffish.game_result(self.variant, self.root, self.moves)
        if value == 0:
            return "draw"
        return "white" if (value > 0) == self.white_to_move() else "black"

    def set_position(self, root: str, moves: list[str]) -> Optional[tuple[int, str]]:
        """Play `moves` from `root` up to the first illegal one; (number, text) of that one."""
        played: list[str] = []
        error = None
        for number, text in enumerate(moves, 1):
            if text not in pyffish.legal_moves(self.variant, root, played):
                error = (number, text)
                break
            played.append(text)
        self.root, self.moves = root, played
        return error


@dataclass
class GoExpectation:
    line: str
    variant: str
    fen: str
    legal: list[str]
    allowed: Optional[set] = None  # the legal `searchmoves`, when there are some
    winner: Optional[str] = None
    root: str = ""
    moves: list = field(default_factory=list)


# --- the stream builder -----------------------------------------------------------------------


class UciStream:
    """Draws a hostile stream for the UCI or UGI front-end, sends it and records expectations."""

    def __init__(self, data, dialect: str):
        self.data = data
        self.dialect = dialect
        self.model = Model("duck")
        self.engine = Engine(dialect)
        self.sent: list[str] = []
        self.readyok = 0
        self.handshakes = {"uciok": 0, "ugiok": 0}
        self.gos: list[GoExpectation] = []
        self.fens: list[str] = []
        self.position_errors: list[tuple] = []
        self.responses: list[str] = []
        self.debug = False
        self.cfour_seen = False

    # plumbing
    def draw(self, strategy, label=None):
        return self.data.draw(strategy, label=label)

    def choose(self, options, label=None):
        return self.draw(st.sampled_from(options), label)

    def send(self, line: str, mangle: bool = True) -> None:
        if mangle:
            line = self.mangle(line)
        self.sent.append(line)
        self.engine.send(line)

    def mangle(self, line: str) -> str:
        """The same command with other whitespace: runs of spaces, tabs, padding, CRLF."""
        style = self.choose(["plain"] * 6 + ["spaces", "tabs", "padded", "crlf"], "whitespace")
        if style == "spaces":
            return re.sub(" ", lambda m: " " * self.draw(st.integers(1, 4)), line)
        if style == "tabs":
            return line.replace(" ", " \t")
        if style == "padded":
            return "  \t" + line + " \t "
        if style == "crlf":
            return line + "\r"
        return line

    # the commands
    def op_isready(self) -> None:
        self.send("isready")
        self.readyok += 1

    def op_handshake(self, first: bool = False) -> None:
        word = self.choose(["uci", "ugi"] if self.dialect == "ugi" else ["uci"])
        if not first and not any(self.handshakes.values()):
            # the session's first handshake never while a search runs: that can hang the
            # engine, see test_a_first_handshake_during_a_search_does_not_hang_the_engine
            self.send("stop")
        self.send(word)
        self.handshakes[word + "ok"] += 1

    def op_newgame(self) -> None:
        self.send("uginewgame" if self.dialect == "ugi" and self.draw(st.booleans())
                  else "ucinewgame")
        self.model.reset(self.model.variant)

    def op_variant(self) -> None:
        variant = self.choose(VARIANTS)
        text = self.choose([variant, variant.upper(), variant.capitalize()])
        name = self.choose(["UCI_Variant", "uci_variant"])
        self.send(f"setoption name {name} value {text}")
        self.model.reset(variant)
        self.cfour_seen |= variant == "cfour"

    def op_setoption(self) -> None:
        """Options other than UCI_Variant (none of them changes the position), valid or not."""
        line = self.choose([
            f"setoption name Hash value {self.draw(st.integers(1, 16))}",
            "setoption name Hash value 0",
            "setoption name Hash value lots",
            "setoption name Hash value 99999999999999999999",
            f"setoption name MultiPV value {self.draw(st.integers(1, 3))}",
            "setoption name MultiPV value 0",
            "setoption name Ponder value true",
            "setoption name Ponder value maybe",
            f"setoption name UCI_ShowWDL value {self.choose(['true', 'false', 'TRUE'])}",
            "setoption name UCI_AnalyseMode value false",
            f"setoption name Move Overhead value {self.draw(st.integers(0, 100))}",
            "setoption name Move Overhead value -1",
            "setoption name Clear Hash",
            "setoption name Clear Hash value now",
            f"setoption name OwnBook value {self.choose(['true', 'false'])}",
            "setoption name UCI_Chess960 value true",
            "setoption name Frobnicate value 12",
            "setoption name UCI_Variant value xiangqi",
            "setoption name UCI_Variant value",
            "setoption name UCI_Variant",
            "setoption name",
            "setoption",
            "setoption value 3",
            "setoption name value 3",
            "setoption foo bar",
        ], "setoption")
        self.send(line)

    def random_walk(self, root: str, moves: list[str], length: int) -> list[str]:
        walk: list[str] = []
        for _ in range(length):
            legal = sorted(pyffish.legal_moves(self.model.variant, root, moves + walk))
            if not legal:
                break
            walk.append(self.choose(legal, "move"))
        return walk

    def op_position(self) -> None:
        model = self.model
        variant = model.variant
        form = self.choose(["startpos", "startpos", "fen", "fen", "extend", "extend",
                            "badfen", "otherfen", "malformed"], "position form")
        if form == "malformed":
            self.send(self.choose(["position", "position fen", "position foo",
                                   "position startpos junk",
                                   "position startpos junk moves e2e4,e4d5",
                                   "position moves P@d1", "position fen moves P@d1"]))
            return
        if form in ("badfen", "otherfen"):
            pool = INVALID_FENS[variant] if form == "badfen" else \
                VALID_FENS["cfour" if variant == "duck" else "duck"][1:]
            fen = self.choose(pool, "invalid fen")
            walk = self.choose([[], ["e2e4,e4d5"], ["P@d1"]])
            self.send(f"position fen {fen}" + (" moves " + " ".join(walk) if walk else ""))
            self.position_errors.append(("invalid position",))
            return
        if form == "extend":
            root, before = model.root, list(model.moves)
        elif form == "fen":
            root, before = self.choose(VALID_FENS[variant], "fen"), []
        else:
            root, before = START[variant], []
        moves = before + self.random_walk(root, before, self.draw(st.integers(0, 6), "length"))
        if self.draw(st.booleans(), "bad move"):
            bad = self.choose(BAD_MOVES[variant] + ["<replay>"], "bad move text")
            at = self.draw(st.integers(0, len(moves)), "bad move index")
            if bad == "<replay>":  # a move played earlier in the list: rarely legal again
                bad = moves[at - 1] if at else (BAD_MOVES[variant][0])
            moves = moves[:at] + [bad] + moves[at:]
        keyword = self.choose(["moves", "moves", "MOVES", "Moves"])
        head = "position startpos" if root == START[variant] and self.draw(st.booleans()) \
            else f"position {self.choose(['fen', 'FEN'])} {root}"
        self.send(head + (f" {keyword} " + " ".join(moves) if moves or
                          self.draw(st.booleans()) else ""))
        error = model.set_position(root, moves)
        if error:
            self.position_errors.append(("illegal move", *error))

    def go_tokens(self) -> tuple[list[str], bool, Optional[list[str]]]:
        """(tokens, ends by itself, searchmoves) of one `go`."""
        variant = self.model.variant
        white = self.model.white_to_move()
        kind = self.choose(["finite", "finite", "finite", "clock", "infinite", "ponder",
                            "nonsense", "mate"], "go kind")
        tokens: list[str] = []
        finite = False

        def bounds() -> list[str]:
            chosen = self.draw(st.sets(st.sampled_from(["depth", "nodes", "movetime"]),
                                       min_size=1), "bounds")
            if variant == "cfour" and chosen == {"depth"}:
                chosen.add("nodes")  # the solver ignores depth: keep it bounded
            out: list[str] = []
            for name in sorted(chosen):
                low, high = {"depth": (1, 2), "nodes": (50, 500), "movetime": (5, 50)}[name]
                out += [name, str(self.draw(st.integers(low, high)))]
            return out

        if kind == "finite":
            tokens, finite = bounds(), True
        elif kind == "mate":
            tokens = ["mate", str(self.draw(st.integers(1, 3)))] + \
                ["nodes", str(self.draw(st.integers(50, 500)))]
            finite = True
        elif kind == "clock":
            names = (("p1time", "p2time", "p1inc", "p2inc") if self.dialect == "ugi"
                     and self.draw(st.booleans()) else ("wtime", "btime", "winc", "binc"))
            own, other = (names[0], names[1]) if white else (names[1], names[0])
            which = self.choose(["both", "both", "own", "other"], "clocks")
            if which in ("both", "own"):
                tokens += [own, str(self.draw(st.integers(0, 300)))]
            if which in ("both", "other"):
                tokens += [other, str(self.draw(st.integers(0, 300)))]
            if self.draw(st.booleans()):
                tokens += [names[2], str(self.draw(st.integers(0, 20))), names[3], "0"]
            if self.draw(st.booleans()):
                tokens += ["movestogo", str(self.draw(st.integers(1, 40)))]
        elif kind == "infinite":
            tokens = ["infinite"]
        elif kind == "ponder":
            tokens = ["ponder"] + (bounds() if self.draw(st.booleans()) else [])
        else:
            tokens = self.draw(st.lists(st.sampled_from([
                "foo", "depth", "depth x", "nodes -5", "movetime 0", "wtime 1.5e2", "mate 0",
                "movestogo 0", "\u00e9\u00e9", "searchmoves", "infinite", "movetime 20.0",
                "DEPTH 1", "nodes 1e9999",
            ]), min_size=1, max_size=3), "nonsense")
            tokens = " ".join(tokens).split()
            if self.draw(st.booleans()):
                tokens = bounds() + tokens
        searchmoves = None
        if kind in ("finite", "infinite", "clock") and self.draw(st.booleans(), "searchmoves"):
            legal = self.model.legal()
            pool = legal[:40] + BAD_MOVES[variant][:3]
            searchmoves = self.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4),
                                    "searchmoves") if legal else ["zz"]
            tokens += ["searchmoves"] + searchmoves
        return tokens, finite and kind != "ponder", searchmoves

    def op_go(self) -> None:
        tokens, finite, searchmoves = self.go_tokens()
        legal = self.model.legal()
        allowed = {m for m in searchmoves if m in legal} if searchmoves else None
        line = "go" + "".join(" " + t for t in tokens)
        self.send(line)
        self.gos.append(GoExpectation(line, self.model.variant, self.model.fen(), legal,
                                      allowed or None, self.model.winner(), self.model.root,
                                      list(self.model.moves)))
        self.cfour_seen |= self.model.variant == "cfour"
        if not finite and self.draw(st.integers(0, 9), "end it") < 7:
            if "ponder" in tokens and "infinite" not in tokens and "mate" not in tokens \
                    and self.draw(st.booleans()):
                self.send("ponderhit")
            else:
                self.send("stop")

    def op_stop(self) -> None:
        self.send(self.choose(["stop", "ponderhit"]))

    def op_d(self) -> None:
        self.send("d")
        self.fens.append(self.model.fen())

    def op_debug(self) -> None:
        word = self.choose(["on", "off", ""])
        self.send(f"debug {word}".strip())
        self.debug |= word == "on"

    def op_query(self) -> None:
        question = self.choose(["p1turn", "gameover", "result", "colour", ""], "query")
        self.send(f"query {question}".strip())
        if self.dialect != "ugi" or question not in ("p1turn", "gameover", "result"):
            return
        winner = self.model.winner()
        if question == "p1turn":
            answer = "true" if self.model.white_to_move() else "false"
        elif question == "gameover":
            answer = "false" if winner is None else "true"
        else:
            answer = {None: "none", "white": "p1win", "black": "p2win", "draw": "draw"}[winner]
        self.responses.append(f"response {answer}")

    def op_garbage(self) -> None:
        if self.draw(st.integers(0, 5), "raw bytes") == 0:
            data = raw_garbage(self.draw, UCI_COMMANDS)
            self.sent.append(repr(data))
            send_bytes(self.engine, data)
            return
        self.send(garbage_line(self.draw, UCI_COMMANDS), mangle=False)

    OPS = (["op_position"] * 5 + ["op_go"] * 5 + ["op_isready"] * 2 + ["op_garbage"] * 3
           + ["op_d"] * 2 + ["op_variant", "op_setoption", "op_setoption", "op_newgame",
                             "op_stop", "op_handshake", "op_debug", "op_query"])

    def run(self, max_ops: int) -> None:
        count = self.draw(st.integers(3, max_ops), "commands")
        if self.draw(st.booleans(), "handshake first"):
            self.op_handshake(first=True)
        if self.draw(st.booleans(), "variant first"):
            self.op_variant()
        for _ in range(count):
            getattr(self, self.choose(self.OPS, "command"))()
        self.send("stop", mangle=False)
        self.send("isready", mangle=False)
        self.readyok += 1
        note("sent:\n" + "\n".join(repr(line[:300]) for line in self.sent))
        seen = [0]

        def last_readyok(line: str) -> bool:
            seen[0] += line == "readyok"
            return seen[0] == self.readyok

        self.engine.lines.until(last_readyok, 60)
        output = self.engine.lines.seen + self.engine.drain(0.05)
        note("output:\n" + "\n".join(output[-80:]))
        self.check(output)
        event(f"go commands: {min(len(self.gos), 10)}+" if len(self.gos) >= 10
              else f"go commands: {len(self.gos)}")
        event(f"games over at a go: {sum(go.winner is not None for go in self.gos) > 0}")
        event(f"position errors: {len(self.position_errors) > 0}")
        event(f"variants: {'both' if self.cfour_seen else 'duck only'}")

    # the checks
    def check(self, output: list[str]) -> None:
        engine = self.engine
        assert engine.thread.is_alive(), "the engine ended before quit"
        for line in output:
            assert "Traceback" not in line, line
            assert "internal error" not in line, line
            if "search failed" in line:  # the known Connect Four book bug; never Duck Chess
                assert self.cfour_seen, line
        assert output.count("readyok") == self.readyok
        for word, count in self.handshakes.items():
            assert output.count(word) == count, word
        assert [line[len("Fen: "):] for line in output if line.startswith("Fen: ")] == self.fens

        errors = []
        for line in output:
            if line.startswith("info string error: invalid position "):
                errors.append(("invalid position",))
            match = re.match(r"info string error: illegal move (\d+) '(.*?)': ", line)
            if match:
                errors.append(("illegal move", int(match.group(1)), match.group(2)))
        assert errors == self.position_errors

        if self.dialect == "ugi":
            assert [line for line in output if line.startswith("response ")] == self.responses
        else:
            assert not any(line.startswith("response ") for line in output)

        bestmoves = [i for i, line in enumerate(output) if line.startswith("bestmove")]
        assert len(bestmoves) == len(self.gos), \
            f"{len(self.gos)} go commands, {len(bestmoves)} bestmove lines"
        start = 0
        for go, at in zip(self.gos, bestmoves):
            self.check_search(go, output[start:at], output[at])
            start = at + 1
        if not self.debug:
            assert engine.stderr.getvalue() == ""

    def check_search(self, go: GoExpectation, infos: list[str], bestmove: str) -> None:
        context = f"{go.line!r} in {go.variant} {go.fen}: {bestmove!r}"
        tokens = bestmove.split()
        scored = [line for line in infos if line.startswith("info ") and " score " in line
                  and not line.startswith("info string")]
        assert scored, f"no info score line before {context}"
        if go.winner is not None:
            assert tokens == ["bestmove", "(none)"], context
            assert scored[-1] == "info depth 0 score " + \
                ("cp 0" if go.winner == "draw" else "mate 0"), context
            return
        assert len(tokens) in (2, 4), context
        move = tokens[1]
        assert move in go.legal, f"illegal {context}"
        if go.allowed:
            assert move in go.allowed, f"outside searchmoves {sorted(go.allowed)}: {context}"
        if self.dialect == "ugi":
            assert len(tokens) == 2, context
        elif len(tokens) == 4:
            assert tokens[2] == "ponder", context
            after = pyffish.legal_moves(go.variant, go.root, go.moves + [move])
            assert tokens[3] in after, f"illegal ponder move: {context}"
        for line in scored:
            pv = line.split(" pv ", 1)
            if len(pv) == 2:
                assert pv[1].split()[0] in go.legal, f"illegal pv start in {line!r}: {context}"


def garbage_line(draw, commands: set, gtp: bool = False) -> str:
    """A line that is not a command: text, unicode, control characters, long lines, blanks."""
    kind = draw(st.sampled_from(["text", "text", "unicode", "blank", "long", "near"]),
                label="garbage kind")
    if kind == "blank":
        line = draw(st.sampled_from(["", " ", "\t", " \t  \t", "\x0c", "\u00a0", "\u2028"]))
    elif kind == "long":
        unit = draw(st.sampled_from(["x", "go ", "\u00e9", "\t", "position startpos moves "]))
        line = "zz" + unit * draw(st.integers(1_000, 60_000), label="length")
    elif kind == "near":
        line = draw(st.sampled_from([
            "isready2", "ISREADY", "Go depth 1", "goinfinite", "positionstartpos",
            "set option name Hash value 1", "uci\x00", "\x00isready", "stopp", "D", "#go",
            "0 go", "-- go", "ucci", "genmove b", "play b d", "boardsize 7 6", "undo",
        ]))
    else:
        alphabet = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n") \
            if kind == "unicode" else st.characters(min_codepoint=32, max_codepoint=126)
        line = draw(st.text(alphabet=alphabet, max_size=60), label="garbage")
    return defuse(line, commands, gtp)


def defuse(line: str, commands: set, gtp: bool = False) -> str:
    """`line`, or `zz ` + line when the engine would read it as a command (or as `quit`)."""
    words = line.split()
    if not gtp and words and (words[0] in commands or (
            len(words) == 2 and words[0].isdigit() and words[1] == "quit")):
        return "zz " + line
    if gtp:
        name = gtp_normalise(line).split()
        if name and name[0].isdigit():
            name = name[1:]
        if name and (name[0].lower() in commands or name[0].lower() == "quit"):
            return "zz " + line
        if words[:1] == ["quit"]:
            return "zz " + line
    return line


def raw_garbage(draw, commands: set, gtp: bool = False) -> bytes:
    """A line of bytes that is not valid UTF-8 (and, decoded with replacement characters as
    the engine reads it, not a command)."""
    data = draw(st.binary(max_size=30), label="bytes").replace(b"\n", b"").replace(b"\r", b"")
    data = draw(st.sampled_from([b"\xff", b"caf\xe9 ", b"\xc3", b"\xed\xa0\x80"])) + data
    text = data.decode("utf-8", "replace")
    return data if defuse(text, commands, gtp) == text else b"zz " + data


def send_bytes(engine: Engine, data: bytes) -> None:
    """Raw bytes on the engine's stdin, past the harness's text layer."""
    writer = engine._stdin_writer
    writer.flush()
    writer.buffer.write(data + b"\n")
    writer.buffer.flush()


# --- fixtures and sanity checks of the oracle and the pools -----------------------------------


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile (or load) both games' code once, with a generous time limit."""
    engine = Engine("uci")
    try:
        engine.send("uci")
        engine.until("uciok", 120)
        engine.ready(120)
        for variant in VARIANTS:
            engine.send(f"setoption name UCI_Variant value {variant}", "position startpos",
                        "go nodes 200")
            engine.until("bestmove", 120)
            engine.ready(120)
    finally:
        engine.close()
    gtp = Engine("gtp")
    try:
        gtp.send("boardsize 4 4", "genmove b")
        gtp.lines.until(lambda line: line.startswith("="), 120)
    finally:
        gtp.close()


def test_the_pyffish_cfour_definition_agrees_with_the_engine():
    import random

    from mallard.engines.connect4.rules import Connect4Game

    game = Connect4Game()
    rng = random.Random(7)
    for _ in range(40):
        position, moves = game.start_position(), []
        while True:
            legal = sorted(pyffish.legal_moves("cfour", START["cfour"], moves))
            ours = sorted(position.format_move(m) for m in position.legal_moves()) \
                if position.result() is None else []
            assert legal == ours, moves
            assert pyffish.get_fen("cfour", START["cfour"], moves) == position.fen(), moves
            if not legal:
                value = pyffish.game_result("cfour", START["cfour"], moves)
                assert (value == 0) == (position.result().winner is None)
                break
            column = rng.choice(position.legal_moves())
            moves.append(position.format_move(column))
            position = position.play(column)


def test_the_fen_pools_and_bad_moves_are_what_the_engine_thinks_they_are():
    """Every pool FEN is accepted (and `d` shows pyffish's FEN), every invalid one refused,
    every bad move text refused: the stream model relies on it."""
    engine = Engine("uci")
    try:
        for variant in VARIANTS:
            engine.send(f"setoption name UCI_Variant value {variant}")
            for fen in VALID_FENS[variant]:
                engine.send(f"position fen {fen}", "d")
                lines = engine.until("Fen: ")
                assert not [x for x in lines if x.startswith("info string error")], fen
                assert lines[-1] == "Fen: " + pyffish.get_fen(variant, fen, []), fen
            for fen in INVALID_FENS[variant]:
                engine.send(f"position fen {fen}")
                lines = engine.ready()
                assert len(lines) == 1 and \
                    lines[0].startswith("info string error: invalid position"), (fen, lines)
            for text in BAD_MOVES[variant]:
                engine.send(f"position startpos moves {text}")
                lines = engine.ready()
                assert len(lines) == 1 and lines[0].startswith(
                    f"info string error: illegal move 1 '{text}'"), (text, lines)
                assert text not in pyffish.legal_moves(variant, START[variant], [])
        assert engine.stderr.getvalue() == ""
    finally:
        engine.close()


# --- the hostile streams ----------------------------------------------------------------------

FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
MANY = settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))


def run_uci_stream(data, dialect: str, max_ops: int) -> None:
    stream = UciStream(data, dialect)
    try:
        stream.run(max_ops)
    finally:
        code = stream.engine.close()
    assert code == 0 and not stream.engine.thread.is_alive()


@FAST
@given(st.data())
def test_hostile_uci_streams(data):
    run_uci_stream(data, "uci", 30)


@settings(FAST, max_examples=25)
@given(st.data())
def test_hostile_ugi_streams(data):
    run_uci_stream(data, "ugi", 15)


@pytest.mark.slow
@MANY
@given(st.data())
def test_hostile_uci_streams_many(data):
    run_uci_stream(data, "uci", 40)


@pytest.mark.slow
@settings(MANY, max_examples=200)
@given(st.data())
def test_hostile_ugi_streams_many(data):
    run_uci_stream(data, "ugi", 40)


# --- GTP --------------------------------------------------------------------------------------

GTP_COMMANDS = {name[4:].replace("_mallard_", "mallard-") for name in dir(GtpFrontEnd)
                if name.startswith("cmd_")}
SMALL_AREA = 25  # full solves (final_score, mallard-solve, mallard-analyze) only up to this


def gtp_normalise(line: str) -> str:
    """A GTP line as the spec says engines read it: control characters dropped, tabs as
    spaces, comments cut."""
    line = line.replace("\t", " ")
    line = "".join(c for c in line if c in "\n" or not (ord(c) < 32 or ord(c) == 127))
    return line.split("#", 1)[0].strip()


class Connect4:
    """A plain Connect Four model for any board size."""

    def __init__(self, width: int = 7, height: int = 6):
        self.width, self.height = width, height
        self.columns: list[list[int]] = [[] for _ in range(width)]
        self.history: list[int] = []
        self.winner: Optional[int] = None

    @property
    def to_move(self) -> int:
        return len(self.history) % 2

    def over(self) -> bool:
        return self.winner is not None or len(self.history) == self.width * self.height

    def legal(self) -> list[int]:
        return [] if self.over() else [c for c in range(self.width)
                                       if len(self.columns[c]) < self.height]

    def play(self, column: int) -> None:
        player = self.to_move
        self.columns[column].append(player)
        self.history.append(column)
        row = len(self.columns[column]) - 1
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            count = 1
            for sign in (1, -1):
                c, r = column + sign * dc, row + sign * dr
                while 0 <= c < self.width and 0 <= r < len(self.columns[c]) \
                        and self.columns[c][r] == player:
                    count += 1
                    c, r = c + sign * dc, r + sign * dr
            if count >= 4:
                self.winner = player

    def undo(self) -> None:
        history = self.history[:-1]
        self.__init__(self.width, self.height)
        for column in history:
            self.play(column)

    def rows(self) -> list[str]:
        """The board as `showboard` draws it: top row first, X first player, O second."""
        out = []
        for row in range(self.height - 1, -1, -1):
            cells = ["XO"[self.columns[c][row]] if row < len(self.columns[c]) else "."
                     for c in range(self.width)]
            out.append(f"{row + 1:>2} " + " ".join(cells))
        return out

    def status(self) -> str:
        if self.winner is not None:
            return "game over: " + ("black" if self.winner == 0 else "white") + " wins"
        if self.over():
            return "game over: draw"
        return ("black" if self.to_move == 0 else "white") + " to move"


@dataclass
class GtpExpectation:
    line: str
    ident: str
    ok: Optional[bool]  # None: either
    check: Optional[object] = None  # a function of the reply content
    genmove: bool = False  # a genmove whose reply the model plays


class GtpStream:
    SIZES = [(1, 1), (2, 3), (3, 3), (4, 4), (5, 4), (4, 5), (5, 5), (7, 6)]
    BAD_SIZES = ["0 0", "9 9", "27 1", "32 1", "-1 4", "x", "4 4 4", "", "7 y"]

    def __init__(self, data):
        self.data = data
        self.engine = Engine("gtp")
        self.board = Connect4(5, 4)
        self.sent: list[str] = []
        self.expected: list[GtpExpectation] = []
        self.debug = False

    def draw(self, strategy, label=None):
        return self.data.draw(strategy, label=label)

    def choose(self, options, label=None):
        return self.draw(st.sampled_from(options), label)

    def command(self, text: str, ok: Optional[bool], check=None, mangle: bool = True) -> None:
        ident = ""
        if self.draw(st.booleans(), "id"):
            ident = str(self.draw(st.integers(0, 99999), "id number"))
            text = f"{ident} {text}"
        if mangle:
            style = self.choose(["plain"] * 5 + ["tabs", "comment", "control", "crlf"])
            if style == "tabs":
                text = text.replace(" ", "\t ")
            elif style == "comment":
                text += " # a comment"
            elif style == "control":
                text = "\x01" + text.replace(" ", " \x7f")
            elif style == "crlf":
                text += "\r"
        self.sent.append(text)
        self.engine.send(text)
        self.expected.append(GtpExpectation(text, ident, ok, check))

    def vertex(self, column: int) -> str:
        return FILES[column]

    def move_text(self) -> tuple[str, Optional[int]]:
        """A move text and the column it plays (None when it is not a legal move)."""
        board = self.board
        legal = board.legal()
        kind = self.choose(["letter", "letter", "number", "drop", "full", "outside",
                            "wrong rank", "junk"], "move kind")
        if kind in ("letter", "number", "drop") and legal:
            column = self.choose(legal, "column")
            text = {"letter": self.choose([FILES[column], FILES[column].upper()]),
                    "number": str(column + 1),
                    "drop": f"P@{FILES[column]}{len(board.columns[column]) + 1}"}[kind]
            return text, column
        if kind == "full":
            full = [c for c in range(board.width) if len(board.columns[c]) == board.height]
            if full:
                return FILES[self.choose(full)], None
        if kind == "wrong rank":
            column = self.draw(st.integers(0, board.width - 1))
            return f"P@{FILES[column]}{len(board.columns[column]) + 2}", None
        if kind == "outside":
            return self.choose([FILES[board.width], str(board.width + 1), "0"]), None
        return self.choose(["pass", "resign", "zz", "d4", "P@", "\u00e9"]), None

    def op_play(self) -> None:
        board = self.board
        colour_ok = self.draw(st.integers(0, 5), "colour") > 0
        colour = ("b", "black", "B") if board.to_move == 0 else ("w", "white", "W")
        wrong = ("w", "white") if board.to_move == 0 else ("b", "black")
        text, column = self.move_text()
        if not colour_ok:
            name = self.choose(list(wrong) + ["x", "red"])
            self.command(f"play {name} {text}", False)
            return
        legal = column is not None and not board.over()
        self.command(f"play {self.choose(colour)} {text}", legal)
        if legal:
            board.play(column)

    def op_genmove(self) -> None:
        board = self.board
        reg = self.draw(st.integers(0, 3), "reg") == 0
        name = "reg_genmove" if reg else "genmove"
        right = self.draw(st.integers(0, 5), "colour") > 0
        colour = ("b" if board.to_move == 0 else "w") if right else \
            ("w" if board.to_move == 0 else "b")
        if board.over() or not right:
            self.command(f"{name} {colour}", False)
            return
        legal = [FILES[c] for c in board.legal()]
        self.command(f"{name} {colour}", True, lambda content: content in legal)
        # the model follows once the reply is known (see `run`): remember which
        self.expected[-1].genmove = not reg

    def op_undo(self) -> None:
        ok = bool(self.board.history)
        self.command("undo", ok)
        if ok:
            self.board.undo()

    def op_boardsize(self) -> None:
        if self.draw(st.integers(0, 3), "good size") > 0:
            width, height = self.choose(self.SIZES, "size")
            square = width == height and self.draw(st.booleans())
            self.command(f"boardsize {width}" if square else f"boardsize {width} {height}", True)
            self.board = Connect4(width, height)
        else:
            self.command(f"boardsize {self.choose(self.BAD_SIZES)}".strip(), False)

    def op_clear(self) -> None:
        self.command("clear_board", True)
        self.board = Connect4(self.board.width, self.board.height)

    def op_showboard(self) -> None:
        rows, status = self.board.rows(), self.board.status()

        def check(content: str) -> bool:
            lines = content.split("\n")
            return lines[:-2] == rows and lines[-1].startswith(status)

        self.command("showboard", True, check)

    def op_info(self) -> None:
        name = self.choose(["protocol_version", "name", "version", "list_commands",
                            "known_command", "komi", "time_settings", "time_left"], "info")
        if name == "protocol_version":
            self.command(name, True, lambda content: content == "2")
        elif name == "name":
            self.command(name, True, lambda content: content == "Mallard")
        elif name == "version":
            self.command(name, True, lambda content: bool(content))
        elif name == "list_commands":
            self.command(name, True, lambda content: set(content.split("\n")) == GTP_COMMANDS)
        elif name == "known_command":
            word = self.choose(sorted(GTP_COMMANDS) + ["frobnicate", "GENMOVE", "quit2"])
            self.command(f"known_command {word}", True,
                         lambda content, word=word: content ==
                         ("true" if word.lower() in GTP_COMMANDS else "false"))
        elif name == "komi":
            value = self.choose(["6.5", "0", "-3", "x", ""])
            ok = value not in ("x", "")
            self.command(f"komi {value}".strip(), ok)
        elif name == "time_settings":
            value = self.choose(["0.3 0 0", "1 0.1 2", "0.5 0 0", "a b c", "1 2", "-1 0 0"])
            ok = value in ("0.3 0 0", "1 0.1 2", "0.5 0 0")
            self.command(f"time_settings {value}", ok)
        else:
            value = self.choose(["b 0.2 0", "w 0.1 0", "black 0 0", "w 0.5 3", "x 1 0",
                                 "b x 0", "b 1"])
            ok = value in ("b 0.2 0", "w 0.1 0", "black 0 0", "w 0.5 3")
            self.command(f"time_left {value}", ok)

    def op_solve(self) -> None:
        """Full solves, only on small boards; the values are not checked (see the brief on
        the Connect Four book), only the form of the reply."""
        board = self.board
        if board.width * board.height > SMALL_AREA:
            self.command("version", True)
            return
        name = self.choose(["final_score", "mallard-solve", "mallard-analyze"], "solve")
        if name == "final_score":
            if board.over():
                expected = "0" if board.winner is None else ("B+1" if board.winner == 0
                                                            else "W+1")
                self.command(name, True, lambda content: content == expected)
            else:
                self.command(name, None, lambda content: content in ("B+1", "W+1", "0")
                             or "solved" in content)
        elif board.over():
            self.command(name, False)
        elif name == "mallard-solve":
            legal = {FILES[c] for c in board.legal()}
            self.command(name, None, lambda content: re.fullmatch(
                r"(win|draw|loss) ([a-z]) (cp|mate) -?\d+", content) is not None
                and content.split()[1] in legal)
        else:
            legal = {FILES[c] for c in board.legal()}
            self.command(name, None, lambda content: {
                line.split()[0] for line in content.split("\n")} <= legal)

    def op_unknown(self) -> None:
        self.command(self.choose(["frobnicate", "go depth 1", "isready", "uci", "UNDOX"]),
                     False)

    def op_garbage(self) -> None:
        if self.draw(st.integers(0, 5), "raw bytes") == 0:
            data = raw_garbage(self.draw, GTP_COMMANDS, gtp=True)
            self.sent.append(repr(data))
            send_bytes(self.engine, data)
            line = data.decode("utf-8", "replace")
        else:
            line = garbage_line(self.draw, GTP_COMMANDS, gtp=True)
            self.sent.append(line)
            self.engine.send(line)
        normal = gtp_normalise(line)
        if normal:
            words = normal.split()
            ident = words[0] if words[0].isdigit() else ""
            self.expected.append(GtpExpectation(line, ident, False))

    OPS = (["op_play"] * 6 + ["op_genmove"] * 3 + ["op_undo", "op_boardsize", "op_clear",
           "op_showboard", "op_showboard", "op_info", "op_info", "op_solve", "op_unknown"]
           + ["op_garbage"] * 3)

    def run(self, max_ops: int) -> None:
        # a small board and a clock first, so that every genmove is quick
        self.command("boardsize 5 4", True, mangle=False)
        self.command("time_settings 0.3 0 0", True, mangle=False)
        count = self.draw(st.integers(3, max_ops), "commands")
        replies: list[str] = []
        for _ in range(count):
            getattr(self, self.choose(self.OPS, "command"))()
            # GTP is synchronous: read the replies as we go, so genmove can update the model
            while len(replies) < len(self.expected):
                replies.append(self.read_reply())
                expectation = self.expected[len(replies) - 1]
                if getattr(expectation, "genmove", False) and replies[-1].startswith("="):
                    content = replies[-1].split(None, 1)[1] if " " in replies[-1] else ""
                    if content.strip() in FILES:
                        self.board.play(FILES.index(content.strip()))
        note("sent:\n" + "\n".join(repr(line[:300]) for line in self.sent))
        note("replies:\n" + "\n---\n".join(replies))
        assert self.engine.thread.is_alive()
        assert self.engine.drain(0.05) == [], "output after the last reply"
        for expectation, reply in zip(self.expected, replies):
            self.check(expectation, reply)
        assert self.engine.stderr.getvalue() == ""

    def read_reply(self) -> str:
        lines = self.engine.lines.until(lambda line: line == "", 60)
        return "\n".join(lines[:-1])

    def check(self, expectation: GtpExpectation, reply: str) -> None:
        context = f"{expectation.line!r} -> {reply!r}"
        assert "Traceback" not in reply and "internal error" not in reply, context
        assert reply[:1] in ("=", "?"), context
        head = reply.split("\n", 1)[0]
        match = re.match(r"([=?])(\S*)", head)
        assert match.group(2) == expectation.ident, context
        if expectation.ok is not None:
            assert (match.group(1) == "=") == expectation.ok, context
        content = reply[len(match.group(0)):]
        content = content[1:] if content.startswith((" ", "\n")) else content
        if expectation.check is not None and match.group(1) == "=":
            assert expectation.check(content), context


@settings(FAST, max_examples=30)
@given(st.data())
def test_hostile_gtp_streams(data):
    stream = GtpStream(data)
    try:
        stream.run(25)
    finally:
        code = stream.engine.close()
    assert code == 0 and not stream.engine.thread.is_alive()


@pytest.mark.slow
@settings(MANY, max_examples=200)
@given(st.data())
def test_hostile_gtp_streams_many(data):
    stream = GtpStream(data)
    try:
        stream.run(40)
    finally:
        code = stream.engine.close()
    assert code == 0


# --- findings kept as regression tests --------------------------------------------------------


def test_a_non_utf8_byte_on_stdin_does_not_end_the_engine():
    """Also when Python's own stdin decoder is strict (a non-C locale without UTF-8 mode)."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    process = Process("uci", env=env)
    try:
        process.process.stdin.write("isready\n")
        process.process.stdin.flush()
        process.process.stdin.buffer.write(b"caf\xe9\n")
        process.process.stdin.buffer.flush()
        process.send("isready")
        lines = process.until("readyok", 60) + process.until("readyok", 10)
        assert lines.count("readyok") == 2
    finally:
        try:
            process.close_stdin()
        except OSError:
            pass
        process.process.kill()
        process.process.wait(10)


def test_non_utf8_bytes_with_the_default_decoder_are_ignored():
    env = dict(os.environ, PYTHONIOENCODING="utf-8:surrogateescape")
    process = Process("uci", env=env)
    process.process.stdin.buffer.write(b"isready\ncaf\xe9\n\xff\xfe\nisready\n")
    process.process.stdin.flush()
    lines = process.until("readyok", 60) + process.until("readyok", 10)
    assert lines.count("readyok") == 2
    process.close_stdin()
    code, stderr = process.wait(20)
    assert code == 0 and stderr == ""


def test_an_over_long_first_line_before_the_protocol_is_known_is_said_on_stderr():
    """With no protocol given, a first line over the limit cannot be answered in a protocol's
    form; it is said once on stderr, and the next line still picks the protocol."""
    process = Process()
    try:
        stream = process.process.stdin.buffer
        stream.write(b"u" * (MAX_LINE_BYTES + 10) + b"\n")
        stream.flush()
        process.send("uci")
        lines = process.until("uciok", 60)
        assert not any("longer" in line for line in lines), lines
        process.send("quit")
        code, stderr = process.wait(20)
        assert code == 0 and "Traceback" not in stderr
        assert stderr.splitlines() == [f"mallard: {OVERLONG_MESSAGE} (no protocol chosen yet)"]
    finally:
        process.process.kill()
        process.process.wait(10)


@pytest.mark.parametrize("first", [False, True], ids=["later", "first"])
@pytest.mark.parametrize("protocol, answer", [("uci", "info string error: "),
                                               ("gtp", "? ")])
def test_a_line_over_the_limit_is_dropped_in_pieces_with_one_error(protocol, answer, first):
    """A client that sends 3 MB without a line end: one error line, and the engine answers
    the next command (the line is read and dropped a piece at a time, never held whole). Also
    as the very first line: with the protocol given on the command line the front-end answers
    from the start (it used to be made at the first line it could read)."""
    process = Process(protocol)
    try:
        ready = "isready" if protocol == "uci" else "1 name"
        expected = "readyok" if protocol == "uci" else "=1 Mallard"
        if not first:
            process.send(ready)
            process.until(expected, 60)
        stream = process.process.stdin.buffer
        for _ in range(3):
            stream.write(b"x" * (MAX_LINE_BYTES - 1000))
            stream.flush()
        stream.write(b"\n")
        process.send(ready)
        lines = process.until(expected, 60)
        errors = [line for line in lines if line.startswith(answer)]
        assert errors == [f"{answer}{OVERLONG_MESSAGE}"], lines
        process.close_stdin()
        code, stderr = process.wait(20)
        assert code == 0 and "Traceback" not in stderr
    finally:
        process.process.kill()
        process.process.wait(10)


HANDSHAKE_DURING_SEARCH = """
import os, sys
from tests.protocol.harness import Engine
for attempt in range(int(sys.argv[1])):
    engine = Engine("uci")
    engine.send("position startpos", "go infinite", "uci", "isready", "stop", "isready")
    try:
        engine.until("readyok", 5)
        engine.until("readyok", 5)
    except TimeoutError:
        print("hang at attempt", attempt, [x for x in engine.lines.seen
                                           if not x.startswith("option")][-4:], flush=True)
        os._exit(1)  # the search thread spins in compiled code: end it with the process
    engine.close()
os._exit(0)
"""


def test_a_first_handshake_during_a_search_does_not_hang_the_engine():
    """In-process engines in a child process (a hung search spins for ever: the child is the
    only thing that can end it). Before the fix (the warm-up searched on the searcher that was
    searching) it hung within a few attempts."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-c", HANDSHAKE_DURING_SEARCH, "60"], cwd=root,
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("the check itself hung")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_a_go_with_only_the_opponents_clock_ends_by_itself():
    """As Stockfish: a missing own clock is an empty one (it searched until `stop` before)."""
    engine = Engine("uci")
    try:
        engine.send("position startpos", "go btime 100")
        started = time.monotonic()
        try:
            engine.until("bestmove", 5)
        finally:
            engine.send("stop")
        assert time.monotonic() - started < 5
    finally:
        engine.close()


def test_a_flood_of_lines_waits_in_the_pipe_not_in_memory():
    """Nobody takes lines from `Input` (the main thread in a long GTP `genmove`) while a client
    writes 20,000 short lines: the queue stops at its bound and the writer is held back by the
    pipe; then every line arrives, in order."""
    read_end, write_end = os.pipe()
    reader, writer = os.fdopen(read_end, "r"), os.fdopen(write_end, "w")
    budget = 64 * 1024
    input_ = Input(reader, max_queued_bytes=budget)
    lines = [f"{i} name" for i in range(20_000)]
    written = []

    def write_all():
        for line in lines:
            writer.write(line + "\n")
            writer.flush()
            written.append(line)
        writer.close()

    thread = threading.Thread(target=write_all, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    before = -1
    while time.monotonic() < deadline:  # until the reader stops taking
        time.sleep(0.2)
        if len(written) == before:
            break
        before = len(written)
    assert thread.is_alive() and len(written) < len(lines)
    assert 0 < input_.queued_bytes <= budget
    assert input_.queued_lines * LINE_OVERHEAD <= budget
    received = [input_.next() for _ in lines]
    assert received == lines
    assert input_.next() is None and input_.queued_bytes == 0
    thread.join(10)
