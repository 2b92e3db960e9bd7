"""The grammar of the `mallard` command line: every subcommand's arguments, their help texts and
defaults, in the order `mallard --help` lists them. `build_parser(wiring)` makes the parser.

What a subcommand runs, and the argument types that check a value with the match runner's code,
come from the command line that composes `protocol` and `tournaments` (`mallard.protocol.cli`,
whose `build_parser()` is this one wired): a `Wiring`. So this module imports neither
`tournaments` nor the tools, and `mallard uci` and `--version` start without them.

Help lines end with the default where there is one to say (`HelpFormatter`); each parser
records itself as the one whose usage an error prints (`Parser`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable, Mapping

from mallard.engines import DEFAULT_GAMES, GAMES
from mallard.engines.base import DEV_OPTIONS_VARIABLE, MAX_THREADS
from mallard.engines.connect4.testsets import TEST_SETS
from mallard.engines.duck.terms import TERM_NAMES, WEIGHT_GROUP_NAMES
from mallard.protocol import VERSION
from mallard.protocol.arguments import (
    depth_list,
    evaluation_terms,
    executable,
    fraction,
    installed,
    list_of,
    non_negative_int,
    number_list,
    port_number,
    positive_int,
    positive_seconds,
    share,
    up_to,
    variant_list,
)
from mallard.protocol.board.limits import DEFAULT_MAX_ENGINES

GAME_ANALYSIS_LIMIT = 10.0  # seconds per position of `mallard prove --game` without --limit

DESCRIPTION = ("A game-engine server: a perfect Connect Four solver, Duck Chess and Ultimate "
               "Tic-Tac-Toe behind UCI, UGI, GTP and the solver line protocol, and a match "
               "runner. Without a command it is the engine: the first line it reads chooses "
               "UCI, UGI or GTP.")


class HelpFormatter(argparse.HelpFormatter):
    """Help lines end with the default, where there is one to say."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.option_strings and "default" not in text and \
                action.default not in (None, False, argparse.SUPPRESS):
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.set_defaults(usage_parser=self)  # the innermost parser used reports leftovers
        self._intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        """A subcommand's positionals may come after its options (`prove uttt --limit 5 POS`):
        argparse alone gives an optional positional nothing once an option came between."""
        leaf = self._subparsers is None and not any(
            action.nargs in (argparse.REMAINDER, argparse.PARSER) for action in self._actions)
        if not leaf or self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # parse_known_intermixed_args calls back here
        try:
            return super().parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

@dataclass(frozen=True)
class Wiring:
    """What the grammar takes from the command line: the function each subcommand runs, by its
    words ("solve", "bench connect4", "book build"; given the parsed arguments, it returns the
    exit status), and the argument types that check with the match runner's code."""

    runs: Mapping[str, Callable[[argparse.Namespace], int]]
    cluster_address: Callable[[str], str]  # a Dask cluster: tcp://HOST:PORT or local[:N]
    control_list: Callable[[str], list[str]]  # time controls as in `mallard match`
    weight_groups: Callable[[str], list[str]]  # the duck evaluation's weight groups


def _add_engines(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: the engine under each protocol: uci, ugi, gtp."""
    for name, what in (("uci", "UCI (Fairy-Stockfish dialect)"), ("ugi", "UGI"),
                       ("gtp", "GTP version 2")):
        description = f"The engine, speaking {what} on stdin/stdout."
        if name != "gtp":  # GTP has no options
            description += (f" With {DEV_OPTIONS_VARIABLE}=1 in its environment it also lists "
                            "developer options, switches for experiments (the duck search's "
                            "pieces) that a GUI's user never sets.")
        engine = commands.add_parser(name, help=f"the engine, speaking {what} on stdin/stdout",
                                     description=description)
        engine.set_defaults(run=wiring.runs[name], protocol=name)
        engine.add_argument("--variant", choices=sorted(n for game in GAMES for n in game.names),
                            help=f"the game to start with (default: {DEFAULT_GAMES[name]})")


def _add_threads_argument(parser, default: int, what: str) -> None:
    """`--threads N`, 1 to the number of cores (the `Threads` option's range)."""
    parser.add_argument("--threads", type=up_to(MAX_THREADS), default=default,
                        help=f"{what} (1 to {MAX_THREADS}, the cores)")


def _add_solve(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: the Connect Four solver line protocol."""
    solve = commands.add_parser(
        "solve", help="Connect Four solver line protocol (stdin -> stdout)",
        description="Solve Connect Four positions, one per line of stdin (1-based column "
                    "digits; an empty line is the empty board), printing '<moves> <score>'.")
    solve.add_argument("-w", "--weak", action="store_true", help="weak solve: print -1/0/1")
    solve.add_argument("-a", "--analyze", action="store_true", help="score of every column")
    solve.add_argument("--no-book", action="store_true", help="do not probe the opening book")
    solve.add_argument("--stats", action="store_true", help="append nodes and microseconds")
    solve.add_argument("--width", type=positive_int, default=7, help="board width")
    solve.add_argument("--height", type=positive_int, default=6, help="board height")
    solve.add_argument("--hash", type=positive_int, default=128, metavar="MB",
                       help="transposition table size in MB")
    _add_threads_argument(solve, 1, "search threads sharing the table")
    solve.set_defaults(run=wiring.runs["solve"])


def _add_perft(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: perft and divide."""
    perft = commands.add_parser("perft", help="count the leaves of the move tree",
                                description="Count the leaves of the move tree to a depth.")
    perft.add_argument("game", choices=[game.name for game in GAMES if game.perft],
                       help="the game")
    perft.add_argument("depth", type=non_negative_int, metavar="DEPTH", help="plies")
    perft.add_argument("--fen", "--position", dest="fen",
                       help="start from this position (default: the start position)")
    perft.add_argument("--divide", action="store_true",
                       help="first print 'move: count' for every root move")
    perft.add_argument("--no-bulk", action="store_true",
                       help="play the last ply instead of counting it")
    perft.set_defaults(run=wiring.runs["perft"])


def _add_connect4_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: the Connect Four test sets."""
    c4 = benchmarks.add_parser("connect4", help="the public Connect Four test sets",
                                description="Solve the public Connect Four test sets.")
    c4.add_argument("--set", action="append", choices=list(TEST_SETS), metavar="NAME",
                    help=f"test set (repeatable; default all): {', '.join(TEST_SETS)}")
    c4.add_argument("--limit", type=positive_int,
                    help="first N positions of each set (default all, Begin-Hard 100)")
    c4.add_argument("--no-book", action="store_true", help="solve without the opening book")
    _add_threads_argument(c4, 1, "search threads")
    c4.add_argument("--weak", action="store_true", help="weak solve (win/draw/loss only)")
    c4.add_argument("--reference", choices=["bitbully"], type=installed("bitbully", "bench"),
                    help="time BitBully in the same run")
    c4.set_defaults(run=wiring.runs["bench connect4"])


def _add_duck_perft_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: Duck Chess perft speed."""
    dp = benchmarks.add_parser("duck-perft", help="Duck Chess perft speed",
                                description="Duck Chess perft speed.")
    dp.add_argument("--reference", metavar="ENGINE", type=executable,
                    help="a Fairy-Stockfish binary to time on the same perfts in the same run")
    dp.set_defaults(run=wiring.runs["bench duck-perft"])


def _add_duck_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: the Duck Chess search."""
    duck = benchmarks.add_parser("duck", help="Duck Chess search: bench signature and speed",
                                  description="Duck Chess search: bench signature and speed.")
    duck.add_argument("--depth", type=positive_int, default=6, help="search depth")
    duck.add_argument("--enumeration", type=depth_list, default=[2, 3], metavar="DEPTHS",
                      help="comma-separated depths at which to compare node counts with full "
                           "enumeration ('' for none; default 2,3)")
    duck.add_argument("--enumeration-positions", type=up_to(10), default=10, metavar="N",
                      help="positions used for the enumeration comparison (1 to 10)")
    duck.set_defaults(run=wiring.runs["bench duck"])


def _add_startup_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: engine start-up and stop latency."""
    su = benchmarks.add_parser("startup", help="engine start-up (cold and warm numba cache) "
                                                "and stop -> bestmove latency",
                                description="Engine start-up and stop -> bestmove latency.")
    su.add_argument("--rounds", type=positive_int, default=10,
                    help="stop latency searches per variant")
    su.set_defaults(run=wiring.runs["bench startup"])


def _add_duck_match_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: Duck Chess self-play."""
    dm = benchmarks.add_parser("duck-match", help="self-play match between two evaluations",
                                description="In-process self-play between two evaluations.")
    dm.add_argument("--a", default="all", type=evaluation_terms,
                    help=f"terms of engine A: {','.join(TERM_NAMES)} | all | none")
    dm.add_argument("--b", default="none", type=evaluation_terms, help="terms of engine B")
    dm.add_argument("--pairs", type=positive_int, default=100,
                    help="openings, each played twice")
    dm.add_argument("--nodes", type=positive_int, default=20000, help="nodes per move")
    dm.add_argument("--jobs", type=positive_int, default=2, help="worker processes")
    dm.add_argument("--cluster", type=wiring.cluster_address, metavar="ADDRESS",
                    help="play the games on a Dask cluster instead: tcp://HOST:PORT or "
                         "local[:N] (needs mallard[cluster])")
    dm.add_argument("--seed", type=non_negative_int, default=1, help="random seed")
    dm.set_defaults(run=wiring.runs["bench duck-match"])


def _add_uttt_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: UTTT perft and the prover."""
    ut = benchmarks.add_parser("uttt", help="UTTT perft speed and the df-pn prover",
                                description="Ultimate Tic-Tac-Toe perft speed and the prover.")
    ut.add_argument("--positions", type=positive_int, default=5, metavar="N",
                    help="random positions per row of the prover tables")
    ut.add_argument("--limit", type=positive_seconds, default=10.0, metavar="SECONDS",
                    help="time limit per proof")
    ut.add_argument("--seed", type=non_negative_int, default=1, help="random seed")
    _add_threads_argument(ut, 1, "with more than 1, a last table compares the prover's speed "
                          "with 1 thread and with this many")
    ut.set_defaults(run=wiring.runs["bench uttt"])


def _add_uttt_reach_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: the UTTT prover's reach on real games."""
    ur = benchmarks.add_parser(
        "uttt-reach", help="how far from the end of real UTTT games the prover proves",
        description="How many plies before the end of real Ultimate Tic-Tac-Toe games the prover "
        "proves every position, within each time limit, for each number of threads.")
    ur.add_argument("--limits", type=list_of(positive_seconds), default=[1.0, 10.0, 60.0],
                    metavar="S,S,...",
                    help="time limits per position in seconds (default 1,10,60); one scan at "
                    "the largest gives every column")
    ur.add_argument("--threads", type=list_of(up_to(MAX_THREADS)), default=[1, 2],
                    metavar="N,N,...", help="prover threads, one column group each (default "
                    f"1,2; each 1 to {MAX_THREADS}, the cores)")
    ur.add_argument("--baseline", action="store_true",
                    help="also the prover as it was before the reach work (plain df-pn "
                    "numbers, a solve's two searches one after the other)")
    ur.add_argument("--games", metavar="NAMES",
                    help="only these games or groups, comma-separated (st=0.1/2,depth=6)")
    ur.add_argument("--max-plies", type=positive_int, default=40, metavar="N",
                    help="plies before the end where a scan stops (default 40)")
    ur.add_argument("--file", metavar="FILE",
                    help="another games file (one game's moves per line)")
    ur.set_defaults(run=wiring.runs["bench uttt-reach"])


def _add_timing_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: time losses in the match runner."""
    tm = benchmarks.add_parser("timing", help="time losses of mallard against itself in the "
                                "match runner", description="Time losses of mallard against "
                                "itself in the match runner, per variant and time control.")
    tm.add_argument("--games", type=positive_int, default=200, help="games per row")
    tm.add_argument("--variants", default="duck,cfour", type=variant_list,
                    help="comma-separated variants")
    tm.add_argument("--controls", default="tc=1+0.01,st=0.05", type=wiring.control_list,
                    help="comma-separated time controls as in mallard match")
    tm.add_argument("--concurrency", type=positive_int, default=2, help="games at once")
    tm.set_defaults(run=wiring.runs["bench timing"])


def _add_threads_bench(benchmarks, wiring: Wiring) -> None:
    """`mallard bench` benchmarks: search threads."""
    th = benchmarks.add_parser("threads", help="search speed and depth with 1 to N threads",
                               description="Each variant's bench positions searched for a fixed "
                               "time with 1 to N threads: depth reached and nodes per second.")
    th.add_argument("--variants", default="duck,uttt", type=variant_list,
                    help="comma-separated variants")
    th.add_argument("--movetime", type=positive_int, default=5000, metavar="MS",
                    help="milliseconds per position")
    _add_threads_argument(th, MAX_THREADS, "the most threads")
    th.set_defaults(run=wiring.runs["bench threads"])


BENCHMARKS = (_add_connect4_bench, _add_duck_perft_bench, _add_duck_bench, _add_startup_bench,
              _add_duck_match_bench, _add_uttt_bench, _add_uttt_reach_bench, _add_timing_bench,
              _add_threads_bench)


def _add_bench(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: bench signatures and the benchmarks."""
    bench = commands.add_parser(
        "bench", help="bench signatures and benchmark tables",
        usage="mallard bench [-h] [--variant VARIANT] [BENCHMARK ...]",
        description="Without a benchmark: the bench signature of every game (or --variant's), "
                    "fixed positions searched to a fixed depth as a UCI 'go depth N' does, "
                    "printed as '<variant>: Nodes searched: N' and a last 'Nodes searched: "
                    "<total>' (time and speed on stderr). The benchmarks print Markdown tables.")
    bench.add_argument("--variant", choices=sorted(n for game in GAMES if game.bench
                                                   for n in game.names),
                       metavar="VARIANT", help="only this game's signature (default: every "
                       "game's): " + ", ".join(game.name for game in GAMES if game.bench))
    bench.set_defaults(run=wiring.runs["bench"])
    bench_games = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK",
                                       parser_class=Parser, prog="mallard bench")
    for add_benchmark in BENCHMARKS:
        add_benchmark(bench_games, wiring)


def _add_prove(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: the UTTT prover."""
    prove = commands.add_parser("prove", help="prove a position's value (win/draw/loss)",
                                description="Prove a position's value (win, draw or loss).")
    prove.add_argument("game", choices=["uttt"], help="the game")
    prove.add_argument("position", metavar="POSITION", nargs="?",
                       help="the position text (quote it); with --game, where the game starts "
                       "(default: the start position)")
    prove.add_argument("--game", dest="game_moves", metavar="MOVES",
                       help="analyse a game: its moves (quoted, separated by spaces; move "
                       "numbers are skipped), each position proven from the last backwards, "
                       "one line each")
    prove.add_argument("--plies", type=positive_int, metavar="N",
                       help="with --game: only the last N plies' positions (default: all)")
    prove.add_argument("--limit", type=positive_seconds, metavar="SECONDS",
                       help="give up after this many seconds; with --game, per position "
                       f"(default: no limit; {GAME_ANALYSIS_LIMIT:g} s per position with --game)")
    prove.add_argument("--no-critical", action="store_true",
                       help="without the critical-board analysis")
    prove.add_argument("--hash", type=positive_int, default=64, metavar="MB",
                       help="table size in MB")
    _add_threads_argument(prove, 1, "search threads sharing the table")
    prove.set_defaults(run=wiring.runs["prove"])


def _add_match(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: the match runner (its own grammar)."""
    match = commands.add_parser(
        "match", help="engine-vs-engine match with cutechess-cli's options "
                      "(mallard match -help)", add_help=False, prefix_chars="+",
        description="Engine-vs-engine matches; see 'mallard match -help'.")
    match.add_argument("match_arguments", nargs=argparse.REMAINDER,
                       help="cutechess-cli's options (mallard match -help)")
    match.set_defaults(run=wiring.runs["match"])


def _add_tune(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: fitting the evaluation to games."""
    tune = commands.add_parser(
        "tune", help="fit the Duck Chess evaluation weights to match games (Texel tuning)",
        usage="mallard tune [-h] duck DB [DB ...] [options]",
        description="Fit the Duck Chess evaluation weights to the results of the games in "
                    "match databases (mallard match ... -db FILE): Texel's method on the "
                    "quiet positions of the games. Prints the new weights block, or writes it "
                    "into a copy of the duck evaluation's source.")
    tune.add_argument("game", choices=["duck"], help="the game")
    tune.add_argument("databases", nargs="+", metavar="DB", help="match databases (-db files)")
    tune.add_argument("--write", metavar="FILE",
                      help="replace the weights block of FILE, a copy of the duck "
                           "evaluation's source")
    tune.add_argument("--ridges", type=number_list, default="1e-8,1e-7,1e-6,1e-5",
                      metavar="R,R,...",
                      help="strengths of the pull toward the current weights to try; the one "
                           "best on the held-out games is kept")
    tune.add_argument("--fixed", type=wiring.weight_groups, default="none", metavar="GROUP,...",
                      help="weight groups the fit leaves as they are: "
                           f"{', '.join(WEIGHT_GROUP_NAMES)}")
    tune.add_argument("--validation", type=fraction, default=0.1,
                      help="share of the games held out to choose the ridge")
    tune.add_argument("--skip-plies", type=non_negative_int, default=8,
                      help="plies after the opening left out")
    tune.add_argument("--seed", type=non_negative_int, default=1,
                      help="chooses the held-out games (and the --sample)")
    tune.add_argument("--sample", type=non_negative_int, default=0, metavar="N",
                      help="fit N of the quiet positions, taken at random (0: all)")
    tune.add_argument("--label-nodes", type=non_negative_int, default=0, metavar="N",
                      help="label each position also by a search of N nodes (mallard uci as "
                           "a subprocess); 0: by the game result alone")
    tune.add_argument("--result-share", type=share, default=0.5, metavar="F",
                      help="with --label-nodes: the label is F * result + (1 - F) * the "
                           "search score's expected result")
    tune.add_argument("--jobs", type=positive_int, default=1,
                      help="with --label-nodes: engine processes searching at once")
    tune.add_argument("--scores", metavar="FILE",
                      help="with --label-nodes: search scores read from FILE where it has "
                           "them, and all written back to it (FEN<tab>score lines)")
    tune.add_argument("--labelled-only", action="store_true",
                      help="with --scores, instead of --label-nodes: fit only the positions "
                           "FILE holds a score for, searching none")
    tune.set_defaults(run=wiring.runs["tune"])


def _add_book(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: opening books."""
    book = commands.add_parser("book", help="opening books", description="Opening books.")
    book_commands = book.add_subparsers(dest="book_command", metavar="ACTION", required=True,
                                        parser_class=Parser)
    build = book_commands.add_parser(
        "build", help="solve every position up to a depth",
        description="Build a Connect Four opening book: solve every position up to a depth.")
    build.add_argument("--depth", type=non_negative_int, required=True,
                       help="stones on the board of the deepest positions")
    build.add_argument("--width", type=positive_int, default=7, help="board width")
    build.add_argument("--height", type=positive_int, default=6, help="board height")
    build.add_argument("--jobs", type=positive_int, default=1, help="worker processes")
    build.add_argument("--cluster", type=wiring.cluster_address, metavar="ADDRESS",
                       help="solve the chunks on a Dask cluster instead: tcp://HOST:PORT or "
                            "local[:N] (needs mallard[cluster]); the book is the same")
    build.add_argument("--output", help="book file (default: the cache directory)")
    build.add_argument("--no-base", action="store_true",
                       help="for 7x6, do not search with BitBully's 12-ply book while building")
    build.set_defaults(run=wiring.runs["book build"])


def _add_warmup(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: compiling ahead of use."""
    warm = commands.add_parser(
        "warmup", help="compile every game's code for this machine now (optional)",
        description="Compile every game's code for this machine into the cache, one process "
                    "per game, so that no later first start compiles. Optional: an engine "
                    "compiles what its game needs on first use anyway.")
    warm.set_defaults(run=wiring.runs["warmup"])


def _add_board(commands, wiring: Wiring) -> None:
    """`mallard` subcommands: the local web page."""
    board = commands.add_parser(
        "board", help="a local web page to play and analyse the games (needs mallard[board])",
        description="Serve a web page on this machine to play Duck Chess, Connect Four and "
                    "Ultimate Tic-Tac-Toe against an engine and watch its analysis; prints the "
                    "page's address, with a token that only this server's pages know. Each "
                    "open page runs its own engine process, while one is free.")
    board.add_argument("--port", type=port_number, default=8765,
                       help="TCP port (0: any free one)")
    board.add_argument("--host", default="127.0.0.1",
                       help="address to serve on; another than loopback only when asked, "
                            "with a warning")
    board.add_argument("--engine", metavar="CMD",
                       help="a UCI engine's command line, quoted if it has arguments "
                            "(default: mallard uci)")
    board.add_argument("--open", action="store_true", help="open the page in a web browser")
    board.add_argument("--max-engines", type=positive_int, default=DEFAULT_MAX_ENGINES,
                       help="engine processes running at once, for all pages together "
                            f"(default: {DEFAULT_MAX_ENGINES}); a page beyond them is told why "
                            "it has none")
    board.add_argument("--no-token", action="store_true",
                       help="serve without the token in the printed address (then any local "
                            "user of this machine can use the page)")
    board.set_defaults(run=wiring.runs["board"])


# in the order `mallard --help` lists them
SUBCOMMANDS = (_add_engines, _add_solve, _add_perft, _add_bench, _add_prove, _add_match,
               _add_tune, _add_book, _add_warmup, _add_board)


def build_parser(wiring: Wiring) -> argparse.ArgumentParser:
    parser = Parser(prog="mallard", description=DESCRIPTION)
    parser.add_argument("-V", "--version", action="version", version=f"mallard {VERSION}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for add_subcommand in SUBCOMMANDS:
        add_subcommand(commands, wiring)
    return parser
