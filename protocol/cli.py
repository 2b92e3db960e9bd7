"""The `mallard` command line. With no arguments it is the engine (the first command chooses UCI,
UGI or GTP); subcommands `uci`, `ugi`, `gtp` force a protocol; `solve`, `perft`, `prove`, `bench`,
`tune` and `book` are the tools; `match` has cutechess-cli's grammar (tournaments/cli.py).

Conventions every subcommand keeps: arguments are checked while parsing (a bad one prints that
subcommand's usage and one error line on stderr, exit status 2); errors found later are one
`mallard: ...` line, exit 2; a reader that goes away (`| head`) ends the run quietly; no traceback
reaches the user.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Iterator, Optional

from mallard.engines import DEFAULT_GAMES, GAMES, compile_cache, find_game
from mallard.engines.base import MAX_THREADS
from mallard.engines.connect4.testsets import TEST_SETS
from mallard.engines.duck.terms import TERM_NAMES, WEIGHT_GROUP_NAMES
from mallard.engines.workpool import LocalPool, WorkPool
from mallard.protocol import VERSION, print_notice
from mallard.protocol.arguments import (
    depth_list,
    evaluation_terms,
    executable,
    fraction,
    installed,
    non_negative_int,
    number_list,
    port_number,
    positive_int,
    positive_seconds,
    share,
    up_to,
    variant_list,
)

DESCRIPTION = ("A game-engine server: a perfect Connect Four solver, Duck Chess and Ultimate "
               "Tic-Tac-Toe behind UCI, UGI, GTP and the solver line protocol, and a match "
               "runner. Without a command it is the engine: the first line it reads chooses "
               "UCI, UGI or GTP.")
EXIT_BROKEN_PIPE = 128 + 13  # what a C tool killed by SIGPIPE reports


# --- argument types that check with the match runner's code (`mallard.protocol.arguments` has
# the others); each refuses a bad value with a message argparse prints

def weight_groups(text: str) -> list[str]:
    """Comma-separated names of the duck evaluation's weight groups ('none' for none)."""
    from mallard.tournaments.tuning import tuned_columns

    names = [name.strip() for name in text.split(",") if name.strip() not in ("", "none")]
    try:
        tuned_columns(fixed=tuple(names))  # refuses an unknown group, naming the known ones
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return names


def cluster_address(text: str) -> str:
    # imported on use: the tournaments package loads the match runner
    from mallard.tournaments.cluster import parse_address

    try:
        parse_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return installed("distributed", "cluster")(text)


def control_list(text: str) -> list[str]:
    # imported on use, so that the engine and --version start without the match runner
    from mallard.tournaments.bench_timing import parse_control

    controls = [part.strip() for part in text.split(",") if part.strip()]
    try:
        for control in controls:
            parse_control(control)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not controls:
        raise argparse.ArgumentTypeError("no time control given")
    return controls


@contextlib.contextmanager
def _work_pool(cluster: Optional[str], jobs: int) -> Iterator[tuple[WorkPool, str]]:
    """The pool a tool's batch work runs on, and where that is: the Dask cluster at `cluster`,
    or `jobs` local processes."""
    if cluster is None:
        yield LocalPool(jobs), f"{jobs} local process{'es' if jobs > 1 else ''}"
        return
    # imported on use: the tournaments package loads the match runner
    from mallard.tournaments.cluster import open_cluster

    with open_cluster(cluster) as opened:  # its ClusterError is an OSError: one line, exit 2
        opened.wait_for_workers(1)
        yield opened.pool(), f"the cluster at {cluster} ({opened.workers()} workers)"


class _HelpFormatter(argparse.HelpFormatter):
    """Help lines end with the default, where there is one to say."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.option_strings and "default" not in text and \
                action.default not in (None, False, argparse.SUPPRESS):
            text += " (default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self.set_defaults(usage_parser=self)  # the innermost parser used reports leftovers


# --- the subcommands -------------------------------------------------------------------------
# Each imports what it runs when it runs: `mallard uci` and `--version` start without the
# benchmarks, the match runner, the book builder or the prover's tools.

def _serve(args) -> int:
    from mallard.protocol.server import serve

    protocol, variant = getattr(args, "protocol", None), getattr(args, "variant", None)
    if protocol == "gtp" and variant is not None and not find_game(variant).speaks("gtp"):
        args.usage_parser.error(f"{variant} cannot be played over GTP "
                                "(GTP plays Connect Four and Ultimate Tic-Tac-Toe)")
    return serve(protocol=protocol, variant=variant)


def _solve(args) -> int:
    from mallard.protocol import solve

    return solve.run(sys.stdin, sys.stdout, sys.stderr, weak=args.weak, analyze=args.analyze,
                     book=not args.no_book, stats=args.stats, width=args.width,
                     height=args.height, hash_mb=args.hash, threads=args.threads)


def _bench(args) -> int:
    from mallard.engines.connect4.bench import bench_connect4

    sets = args.set or list(TEST_SETS)
    return bench_connect4(sets, args.limit, not args.no_book, args.weak, args.reference,
                          sys.stdout, threads=args.threads)


def _perft(args) -> int:
    from mallard.protocol import tools

    return tools.perft(args.game, args.depth, args.fen, args.divide, not args.no_bulk, sys.stdout)


def _bench_duck_perft(args) -> int:
    from mallard.engines.duck.bench import bench_duck_perft

    return bench_duck_perft(args.reference, sys.stdout)


def _bench_duck(args) -> int:
    from mallard.engines.duck.bench import bench_duck

    return bench_duck(args.depth, args.enumeration, args.enumeration_positions, sys.stdout)


def _bench_threads(args) -> int:
    from mallard.engines.bench_threads import bench_threads

    return bench_threads(args.variants, args.movetime, args.threads, sys.stdout)


def _bench_startup(args) -> int:
    # imported on use, so that the engine and --version start without the match runner
    from mallard.tournaments.bench_startup import bench_startup

    return bench_startup(args.rounds)


def _bench_duck_match(args) -> int:
    from mallard.engines.duck.bench import bench_duck_match

    with _work_pool(args.cluster, args.jobs) as (pool, where):
        return bench_duck_match(args.a, args.b, args.pairs, args.nodes, args.seed, pool, where,
                                sys.stdout)


def _prove(args) -> int:
    from mallard.protocol import tools

    return tools.prove(args.position, args.limit, args.hash, not args.no_critical, args.threads,
                       sys.stdout)


def _bench_uttt(args) -> int:
    from mallard.engines.uttt.bench import bench_uttt

    return bench_uttt(args.positions, args.limit, args.seed, args.threads, sys.stdout)


def _bench_signatures(args) -> int:
    from mallard.protocol.signature import bench_signatures

    variants = [args.variant] if args.variant else [game.name for game in GAMES if game.bench]
    return bench_signatures(variants)


def _bench_timing(args) -> int:
    # imported on use, so that the engine and --version start without the match runner
    from mallard.tournaments.bench_timing import bench_timing

    return bench_timing(args.games, args.variants, args.controls, args.concurrency)


def _book_build(args) -> int:
    from mallard.protocol import tools

    with _work_pool(args.cluster, args.jobs) as (pool, _):
        return tools.build_book(args.width, args.height, args.depth, args.output,
                                not args.no_base, pool, sys.stdout, sys.stderr)


def _match(args) -> int:
    # imported on use, so that the engine and --version start without the match runner
    from mallard.tournaments.cli import main as match_main

    return match_main(args.match_arguments)


def _tune(args) -> int:
    # imported on use: the tuner reads match databases with the tournaments package
    from mallard.tournaments.tuning import tune

    if args.labelled_only and (not args.scores or args.label_nodes):
        raise ValueError("--labelled-only fits the positions --scores FILE holds, searching "
                         "none: it needs --scores and does not take --label-nodes")
    return tune(args.databases, sys.stdout, skip_plies=args.skip_plies,
                labelled_only=args.labelled_only, scores_file=args.scores, sample=args.sample,
                seed=args.seed, label_nodes=args.label_nodes, result_share=args.result_share,
                jobs=args.jobs, ridges=args.ridges, validation=args.validation,
                fixed=tuple(args.fixed), write=args.write)


def _warmup(args) -> int:
    from mallard.protocol import warmup

    return warmup.run()


def _board(args) -> int:
    # imported on use: the web page's server is an optional extra
    from mallard.protocol import board

    return board.run(args.host, args.port, args.engine, args.open)


def _add_engines(commands) -> None:
    """`mallard` subcommands: the engine under each protocol: uci, ugi, gtp."""
    for name, what in (("uci", "UCI (Fairy-Stockfish dialect)"), ("ugi", "UGI"),
                       ("gtp", "GTP version 2")):
        engine = commands.add_parser(name, help=f"the engine, speaking {what} on stdin/stdout",
                                     description=f"The engine, speaking {what} on stdin/stdout.")
        engine.set_defaults(run=_serve, protocol=name)
        engine.add_argument("--variant", choices=sorted(n for game in GAMES for n in game.names),
                            help=f"the game to start with (default: {DEFAULT_GAMES[name]})")


def _add_threads_argument(parser, default: int, what: str) -> None:
    """`--threads N`, 1 to the number of cores (the `Threads` option's range)."""
    parser.add_argument("--threads", type=up_to(MAX_THREADS), default=default,
                        help=f"{what} (1 to {MAX_THREADS}, the cores)")


def _add_solve(commands) -> None:
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
    solve.set_defaults(run=_solve)


def _add_perft(commands) -> None:
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
    perft.set_defaults(run=_perft)


def _add_connect4_bench(benchmarks) -> None:
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
    c4.set_defaults(run=_bench)


def _add_duck_perft_bench(benchmarks) -> None:
    """`mallard bench` benchmarks: Duck Chess perft speed."""
    dp = benchmarks.add_parser("duck-perft", help="Duck Chess perft speed",
                                description="Duck Chess perft speed.")
    dp.add_argument("--reference", metavar="ENGINE", type=executable,
                    help="a Fairy-Stockfish binary to time on the same perfts in the same run")
    dp.set_defaults(run=_bench_duck_perft)


def _add_duck_bench(benchmarks) -> None:
    """`mallard bench` benchmarks: the Duck Chess search."""
    duck = benchmarks.add_parser("duck", help="Duck Chess search: bench signature and speed",
                                  description="Duck Chess search: bench signature and speed.")
    duck.add_argument("--depth", type=positive_int, default=6, help="search depth")
    duck.add_argument("--enumeration", type=depth_list, default=[2, 3], metavar="DEPTHS",
                      help="comma-separated depths at which to compare node counts with full "
                           "enumeration ('' for none; default 2,3)")
    duck.add_argument("--enumeration-positions", type=up_to(10), default=10, metavar="N",
                      help="positions used for the enumeration comparison (1 to 10)")
    duck.set_defaults(run=_bench_duck)


def _add_startup_bench(benchmarks) -> None:
    """`mallard bench` benchmarks: engine start-up and stop latency."""
    su = benchmarks.add_parser("startup", help="engine start-up (cold and warm numba cache) "
                                                "and stop -> bestmove latency",
                                description="Engine start-up and stop -> bestmove latency.")
    su.add_argument("--rounds", type=positive_int, default=10,
                    help="stop latency searches per variant")
    su.set_defaults(run=_bench_startup)


def _add_duck_match_bench(benchmarks) -> None:
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
    dm.add_argument("--cluster", type=cluster_address, metavar="ADDRESS",
                    help="play the games on a Dask cluster instead: tcp://HOST:PORT or "
                         "local[:N] (needs mallard[cluster])")
    dm.add_argument("--seed", type=non_negative_int, default=1, help="random seed")
    dm.set_defaults(run=_bench_duck_match)


def _add_uttt_bench(benchmarks) -> None:
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
    ut.set_defaults(run=_bench_uttt)


def _add_timing_bench(benchmarks) -> None:
    """`mallard bench` benchmarks: time losses in the match runner."""
    tm = benchmarks.add_parser("timing", help="time losses of mallard against itself in the "
                                "match runner", description="Time losses of mallard against "
                                "itself in the match runner, per variant and time control.")
    tm.add_argument("--games", type=positive_int, default=200, help="games per row")
    tm.add_argument("--variants", default="duck,cfour", type=variant_list,
                    help="comma-separated variants")
    tm.add_argument("--controls", default="tc=1+0.01,st=0.05", type=control_list,
                    help="comma-separated time controls as in mallard match")
    tm.add_argument("--concurrency", type=positive_int, default=2, help="games at once")
    tm.set_defaults(run=_bench_timing)


def _add_threads_bench(benchmarks) -> None:
    """`mallard bench` benchmarks: search threads."""
    th = benchmarks.add_parser("threads", help="search speed and depth with 1 to N threads",
                               description="Each variant's bench positions searched for a fixed "
                               "time with 1 to N threads: depth reached and nodes per second.")
    th.add_argument("--variants", default="duck,uttt", type=variant_list,
                    help="comma-separated variants")
    th.add_argument("--movetime", type=positive_int, default=5000, metavar="MS",
                    help="milliseconds per position")
    _add_threads_argument(th, MAX_THREADS, "the most threads")
    th.set_defaults(run=_bench_threads)


BENCHMARKS = (_add_connect4_bench, _add_duck_perft_bench, _add_duck_bench, _add_startup_bench,
              _add_duck_match_bench, _add_uttt_bench, _add_timing_bench, _add_threads_bench)


def _add_bench(commands) -> None:
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
    bench.set_defaults(run=_bench_signatures)
    bench_games = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK",
                                       parser_class=_Parser, prog="mallard bench")
    for add_benchmark in BENCHMARKS:
        add_benchmark(bench_games)


def _add_prove(commands) -> None:
    """`mallard` subcommands: the UTTT prover."""
    prove = commands.add_parser("prove", help="prove a position's value (win/draw/loss)",
                                description="Prove a position's value (win, draw or loss).")
    prove.add_argument("game", choices=["uttt"], help="the game")
    prove.add_argument("position", metavar="POSITION", help="the position text (quote it)")
    prove.add_argument("--limit", type=positive_seconds, metavar="SECONDS",
                       help="give up after this many seconds (default: no limit)")
    prove.add_argument("--no-critical", action="store_true",
                       help="without the critical-board analysis")
    prove.add_argument("--hash", type=positive_int, default=64, metavar="MB",
                       help="table size in MB")
    _add_threads_argument(prove, 1, "search threads sharing the table")
    prove.set_defaults(run=_prove)


def _add_match(commands) -> None:
    """`mallard` subcommands: the match runner (its own grammar)."""
    match = commands.add_parser(
        "match", help="engine-vs-engine match with cutechess-cli's options "
                      "(mallard match -help)", add_help=False, prefix_chars="+",
        description="Engine-vs-engine matches; see 'mallard match -help'.")
    match.add_argument("match_arguments", nargs=argparse.REMAINDER,
                       help="cutechess-cli's options (mallard match -help)")
    match.set_defaults(run=_match)


def _add_tune(commands) -> None:
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
    tune.add_argument("--fixed", type=weight_groups, default="none", metavar="GROUP,...",
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
    tune.set_defaults(run=_tune)


def _add_book(commands) -> None:
    """`mallard` subcommands: opening books."""
    book = commands.add_parser("book", help="opening books", description="Opening books.")
    book_commands = book.add_subparsers(dest="book_command", metavar="ACTION", required=True,
                                        parser_class=_Parser)
    build = book_commands.add_parser(
        "build", help="solve every position up to a depth",
        description="Build a Connect Four opening book: solve every position up to a depth.")
    build.add_argument("--depth", type=non_negative_int, required=True,
                       help="stones on the board of the deepest positions")
    build.add_argument("--width", type=positive_int, default=7, help="board width")
    build.add_argument("--height", type=positive_int, default=6, help="board height")
    build.add_argument("--jobs", type=positive_int, default=1, help="worker processes")
    build.add_argument("--cluster", type=cluster_address, metavar="ADDRESS",
                       help="solve the chunks on a Dask cluster instead: tcp://HOST:PORT or "
                            "local[:N] (needs mallard[cluster]); the book is the same")
    build.add_argument("--output", help="book file (default: the cache directory)")
    build.add_argument("--no-base", action="store_true",
                       help="for 7x6, do not search with BitBully's 12-ply book while building")
    build.set_defaults(run=_book_build)


def _add_warmup(commands) -> None:
    """`mallard` subcommands: compiling ahead of use."""
    warm = commands.add_parser(
        "warmup", help="compile every game's code for this machine now (optional)",
        description="Compile every game's code for this machine into the cache, one process "
                    "per game, so that no later first start compiles. Optional: an engine "
                    "compiles what its game needs on first use anyway.")
    warm.set_defaults(run=_warmup)


def _add_board(commands) -> None:
    """`mallard` subcommands: the local web page."""
    board = commands.add_parser(
        "board", help="a local web page to play and analyse the games (needs mallard[board])",
        description="Serve a web page on this machine to play Duck Chess, Connect Four and "
                    "Ultimate Tic-Tac-Toe against an engine and watch its analysis; prints the "
                    "page's address. Each open page runs its own engine process.")
    board.add_argument("--port", type=port_number, default=8765,
                       help="TCP port (0: any free one)")
    board.add_argument("--host", default="127.0.0.1",
                       help="address to serve on; another than loopback only when asked, "
                            "with a warning")
    board.add_argument("--engine", metavar="CMD",
                       help="a UCI engine's command line, quoted if it has arguments "
                            "(default: mallard uci)")
    board.add_argument("--open", action="store_true", help="open the page in a web browser")
    board.set_defaults(run=_board)


SUBCOMMANDS = (_add_engines, _add_solve, _add_perft, _add_bench, _add_prove, _add_match,
               _add_tune, _add_book, _add_warmup, _add_board)  # in the order `mallard --help` lists them


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mallard", description=DESCRIPTION)
    parser.add_argument("-V", "--version", action="version", version=f"mallard {VERSION}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add_subcommand in SUBCOMMANDS:
        add_subcommand(commands)
    return parser


def _reader_gone() -> int:
    """stdout's reader closed the pipe: send what is left to nowhere and end quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    compile_cache.set_notice_handler(print_notice)
    try:
        if not argv:  # the engine: the first command chooses the protocol
            return _serve(argparse.Namespace(protocol=None))
        parser = build_parser()
        if argv[0] == "match":  # cutechess-cli's single-dash grammar, not argparse's
            args = argparse.Namespace(run=_match, match_arguments=list(argv[1:]))
        else:
            args, unknown = parser.parse_known_args(argv)
            if unknown:
                args.usage_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
            if getattr(args, "benchmark", None) and getattr(args, "variant", None):
                args.usage_parser.error("--variant chooses a bench signature; a named "
                                        "benchmark does not take it")
        if not getattr(args, "run", None):
            parser.print_help()
            return 0
        return args.run(args)
    except BrokenPipeError:
        return _reader_gone()
    except (ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"mallard: {message}", file=sys.stderr)
        return 2
    except OSError as error:  # a file, directory or cluster the user named cannot be used
        print(f"mallard: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one line for the user, never a traceback
        print(f"mallard: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
