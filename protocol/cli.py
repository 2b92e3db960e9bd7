"""The `mallard` command line. With no arguments it is the engine (the first command chooses UCI,
UGI or GTP); subcommands `uci`, `ugi`, `gtp` force a protocol; `solve`, `perft`, `bench`, `book`
are the tools (argparse); `match` has cutechess-cli's grammar (protocol/match_cli.py)."""

from __future__ import annotations

import argparse
import sys

from engines import GAMES as GAME_NAMES
from engines import compile_cache
from engines.connect4.testsets import TEST_SETS


def _serve(args) -> int:
    from protocol.server import serve

    return serve(protocol=getattr(args, "protocol", None), variant=getattr(args, "variant", None))


def _solve(args) -> int:
    from protocol import solve

    return solve.run(sys.stdin, sys.stdout, sys.stderr, weak=args.weak, analyze=args.analyze,
                     book=not args.no_book, stats=args.stats, width=args.width,
                     height=args.height, hash_mb=args.hash)


def _bench(args) -> int:
    from protocol.bench import bench_connect4

    sets = args.set or list(TEST_SETS)
    return bench_connect4(sets, args.limit, not args.no_book, args.weak, args.reference)


def _perft(args) -> int:
    from engines import get_game

    game = get_game(args.game)
    compile_cache.announce_compile(game.variant, "perft")
    position = game.parse_position(args.fen) if args.fen else game.start_position()
    bulk = not args.no_bulk
    if args.divide:
        total = 0
        for move, count in position.divide(args.depth, bulk):
            print(f"{position.format_move(move)}: {count}")
            total += count
        print()
    else:
        total = position.perft(args.depth, bulk)
    print(f"Nodes searched: {total}")
    return 0


def _bench_duck_perft(args) -> int:
    from protocol.bench import bench_duck_perft

    return bench_duck_perft(args.reference)


def _bench_duck(args) -> int:
    from protocol.bench import bench_duck

    depths = [int(d) for d in args.enumeration.split(",") if d] if args.enumeration else []
    return bench_duck(args.depth, depths, args.enumeration_positions)


def _bench_startup(args) -> int:
    from protocol.bench import bench_startup

    return bench_startup(args.rounds)


def _bench_duck_match(args) -> int:
    from protocol.bench import bench_duck_match

    return bench_duck_match(args.a, args.b, args.pairs, args.nodes, args.jobs, args.seed)


def _prove(args) -> int:
    from engines.uttt.prover import Prover, format_outcome, solve_interruptibly
    from engines.uttt.rules import UtttGame

    compile_cache.announce_compile("uttt")
    position = UtttGame().parse_position(args.position)
    prover = Prover(hash_mb=args.hash, critical=not args.no_critical)
    outcome, interrupted = solve_interruptibly(prover, position, args.limit)
    print(format_outcome(position, outcome))
    return 130 if interrupted else 0


def _bench_uttt(args) -> int:
    from protocol.uttt_bench import bench_uttt

    return bench_uttt(args.positions, args.limit, args.seed)


def _bench_timing(args) -> int:
    from protocol.bench_timing import bench_timing

    return bench_timing(args.games, args.variants, args.controls, args.concurrency)


def variant_list(text: str) -> list[str]:
    from protocol.session import VARIANTS

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in VARIANTS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected variants among {', '.join(VARIANTS)}, "
                                         f"not '{text}'")
    return names


def control_list(text: str) -> list[str]:
    from protocol.bench_timing import parse_control

    controls = [part.strip() for part in text.split(",") if part.strip()]
    try:
        for control in controls:
            parse_control(control)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not controls:
        raise argparse.ArgumentTypeError("no time control given")
    return controls


def _book_build(args) -> int:
    from engines.connect4.book import BITBULLY_FILE, bitbully_book, build_book, cache_dir

    def progress(level: int, done: int, total: int) -> None:
        print(f"level {level}: {done}/{total} chunks", file=sys.stderr, flush=True)

    base = None
    if not args.no_base and (args.width, args.height) == (7, 6) and args.depth < 12:
        if bitbully_book() is not None:  # converts and caches it on first use
            base = cache_dir() / BITBULLY_FILE
    path = build_book(args.width, args.height, args.depth, jobs=args.jobs, output=args.output,
                      base=base, progress=progress)
    print(path)
    return 0


def _warmup(args) -> int:
    from protocol import warmup

    return warmup.run()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mallard", description=__doc__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    for name, what in (("uci", "UCI (Fairy-Stockfish dialect)"), ("ugi", "UGI"),
                       ("gtp", "GTP version 2")):
        engine = commands.add_parser(name, help=f"the engine, speaking {what} on stdin/stdout")
        engine.set_defaults(run=_serve, protocol=name)
        engine.add_argument("--variant", choices=sorted(GAME_NAMES),
                            help="the game to start with (default: duck; cfour for GTP)")

    solve = commands.add_parser("solve", help="Connect Four solver line protocol (stdin -> stdout)")
    solve.add_argument("-w", "--weak", action="store_true", help="weak solve: print -1/0/1")
    solve.add_argument("-a", "--analyze", action="store_true", help="score of every column")
    solve.add_argument("--no-book", action="store_true", help="do not probe the opening book")
    solve.add_argument("--stats", action="store_true", help="append nodes and microseconds")
    solve.add_argument("--width", type=int, default=7)
    solve.add_argument("--height", type=int, default=6)
    solve.add_argument("--hash", type=int, default=128, metavar="MB", help="table size (MB)")
    solve.set_defaults(run=_solve)

    perft = commands.add_parser("perft", help="count the leaves of the move tree")
    perft.add_argument("game", choices=["duck", "uttt"], help="the game")
    perft.add_argument("depth", type=int, metavar="DEPTH")
    perft.add_argument("--fen", "--position", dest="fen",
                       help="start from this position (default: the start position)")
    perft.add_argument("--divide", action="store_true",
                       help="first print 'move: count' for every root move")
    perft.add_argument("--no-bulk", action="store_true",
                       help="play the last ply instead of counting it")
    perft.set_defaults(run=_perft)

    bench = commands.add_parser("bench", help="benchmark tables")
    bench_games = bench.add_subparsers(dest="game", metavar="GAME", required=True)
    c4 = bench_games.add_parser("connect4", help="the public Connect Four test sets")
    c4.add_argument("--set", action="append", choices=list(TEST_SETS), metavar="NAME",
                    help=f"test set (repeatable; default all): {', '.join(TEST_SETS)}")
    c4.add_argument("--limit", type=int, help="first N positions of each set "
                                              "(default all, Begin-Hard 100)")
    c4.add_argument("--no-book", action="store_true")
    c4.add_argument("--weak", action="store_true")
    c4.add_argument("--reference", choices=["bitbully"], help="time BitBully in the same run")
    c4.set_defaults(run=_bench)

    dp = bench_games.add_parser("duck-perft", help="Duck Chess perft speed")
    dp.add_argument("--reference", metavar="ENGINE",
                    help="a Fairy-Stockfish binary to time on the same perfts in the same run")
    dp.set_defaults(run=_bench_duck_perft)

    duck = bench_games.add_parser("duck", help="Duck Chess search: bench signature and speed")
    duck.add_argument("--depth", type=int, default=6, help="search depth (default 6)")
    duck.add_argument("--enumeration", default="2,3", metavar="DEPTHS",
                      help="depths at which to compare node counts with full enumeration "
                           "(default 2,3; '' for none)")
    duck.add_argument("--enumeration-positions", type=int, default=10, metavar="N",
                      help="positions used for the enumeration comparison (default all 10)")
    duck.set_defaults(run=_bench_duck)

    su = bench_games.add_parser("startup", help="engine start-up (cold and warm numba cache) "
                                                "and stop -> bestmove latency")
    su.add_argument("--rounds", type=int, default=10, help="stop latency searches per variant")
    su.set_defaults(run=_bench_startup)

    dm = bench_games.add_parser("duck-match", help="self-play match between two evaluations")
    dm.add_argument("--a", default="all", help="terms of engine A: mobility,king,pawns | all | none")
    dm.add_argument("--b", default="none", help="terms of engine B (default none)")
    dm.add_argument("--pairs", type=int, default=100, help="openings, each played twice")
    dm.add_argument("--nodes", type=int, default=20000, help="nodes per move")
    dm.add_argument("--jobs", type=int, default=2, help="worker processes")
    dm.add_argument("--seed", type=int, default=1)
    dm.set_defaults(run=_bench_duck_match)

    ut = bench_games.add_parser("uttt", help="UTTT perft speed and the df-pn prover")
    ut.add_argument("--positions", type=int, default=5, metavar="N",
                    help="random positions per row of the prover tables (default 5)")
    ut.add_argument("--limit", type=float, default=10.0, metavar="SECONDS",
                    help="time limit per proof (default 10)")
    ut.add_argument("--seed", type=int, default=1)
    ut.set_defaults(run=_bench_uttt)

    tm = bench_games.add_parser("timing", help="time losses of mallard against itself in the "
                                "match runner", description="Time losses of mallard against "
                                "itself in the match runner, per variant and time control.")
    tm.add_argument("--games", type=int, default=200, help="games per row")
    tm.add_argument("--variants", default="duck,cfour", type=variant_list,
                    help="comma-separated variants")
    tm.add_argument("--controls", default="tc=1+0.01,st=0.05", type=control_list,
                    help="comma-separated time controls as in mallard match")
    tm.add_argument("--concurrency", type=int, default=2, help="games at once")
    tm.set_defaults(run=_bench_timing)

    prove = commands.add_parser("prove", help="prove a position's value (win/draw/loss)")
    prove.add_argument("game", choices=["uttt"], help="the game")
    prove.add_argument("position", metavar="POSITION", help="the position text (quote it)")
    prove.add_argument("--limit", type=float, metavar="SECONDS",
                       help="give up after this many seconds (default: no limit)")
    prove.add_argument("--no-critical", action="store_true",
                       help="without the critical-board analysis")
    prove.add_argument("--hash", type=int, default=64, metavar="MB", help="table size (MB)")
    prove.set_defaults(run=_prove)
    
    commands.add_parser("match", help="engine-vs-engine match, cutechess-cli's options "
                        "(mallard match -help)", add_help=False)
    book = commands.add_parser("book", help="opening books")
    book_commands = book.add_subparsers(dest="book_command", metavar="ACTION", required=True)
    build = book_commands.add_parser("build", help="solve every position up to a depth")
    build.add_argument("--depth", type=int, required=True)
    build.add_argument("--width", type=int, default=7)
    build.add_argument("--height", type=int, default=6)
    build.add_argument("--jobs", type=int, default=1, help="worker processes")
    build.add_argument("--output", help="book file (default: the cache directory)")
    build.add_argument("--no-base", action="store_true",
                       help="for 7x6, do not search with BitBully's 12-ply book while building")
    build.set_defaults(run=_book_build)

    warm = commands.add_parser(
        "warmup", help="compile every game's code for this machine now (optional)",
        description="Compile every game's code for this machine into the cache, one process "
                    "per game, so that no later first start compiles. Optional: an engine "
                    "compiles what its game needs on first use anyway.")
    warm.set_defaults(run=_warmup)
    return parser


def _notice(text: str) -> None:
    """Notices from the engines (cache healed, first compile): one stderr line, never stdout."""
    print(f"mallard: {text}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    compile_cache.set_notice_handler(_notice)
    if not argv:  # the engine: the first command chooses the protocol
        return _serve(argparse.Namespace(protocol=None))
    if argv[0] == "match":  # cutechess-cli's single-dash grammar, not argparse's
        from protocol.match_cli import main as match_main

        return match_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        return args.run(args)
    except (ValueError, KeyError) as error:
        print(f"mallard: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
