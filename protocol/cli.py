"""The `mallard` command line. With no arguments it is the engine (the first command chooses UCI,
UGI or GTP); subcommands `uci`, `ugi`, `gtp` force a protocol; `solve`, `perft`, `prove`, `bench`,
`tune` and `book` are the tools; `match` has cutechess-cli's grammar (tournaments/cli.py).

The composition root: the one module that joins `protocol` and `tournaments` (with the board).
Each subcommand's function here takes its parsed arguments and calls one function that does the
work, in `protocol` (front-ends, tools), `engines` (benchmark tables) or `tournaments` (the match
runner, the tuner, the benchmarks that run processes). The grammar (options, help, defaults) is
`mallard.protocol.grammar`, the value parsers `mallard.protocol.arguments`; the argument types
that check with the match runner's code are here.

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

from mallard.engines import GAMES, compile_cache, find_game
from mallard.engines.base import MESSAGE_LIMIT, clip
from mallard.engines.connect4.testsets import TEST_SETS
from mallard.engines.processes import EXIT_BROKEN_PIPE
from mallard.engines.workpool import LocalPool, WorkPool
from mallard.protocol import grammar, interrupt, print_notice
from mallard.protocol.arguments import installed, refused_as_argument

# Subcommands whose work runs in kernels on the main thread: Ctrl-C ends them at once
KERNEL_COMMANDS = ("solve", "prove", "perft", "book", "bench", "warmup")


# --- argument types that check with the match runner's code (`mallard.protocol.arguments` has
# the others); each refuses a bad value with a message argparse prints

def weight_groups(text: str) -> list[str]:
    """Comma-separated names of the duck evaluation's weight groups ('none' for none)."""
    from mallard.tournaments.tuning import tuned_columns

    names = [name.strip() for name in text.split(",") if name.strip() not in ("", "none")]
    # tuned_columns refuses an unknown group, naming the known ones
    refused_as_argument(lambda _: tuned_columns(fixed=tuple(names)), text)
    return names


def cluster_address(text: str) -> str:
    # imported on use: the tournaments package loads the match runner
    from mallard.tournaments.cluster import parse_address

    refused_as_argument(parse_address, text)
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


def _bench_connect4(args) -> int:
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

    if args.game_moves is not None:
        limit = grammar.GAME_ANALYSIS_LIMIT if args.limit is None else args.limit
        return tools.prove_game(args.position, args.game_moves, limit, args.plies, args.hash,
                                not args.no_critical, args.threads, sys.stdout)
    if args.position is None:
        raise ValueError("prove: give a POSITION, or a game with --game MOVES")
    if args.plies is not None:
        raise ValueError("prove: --plies needs --game")
    return tools.prove(args.position, args.limit, args.hash, not args.no_critical, args.threads,
                       sys.stdout)


def _bench_uttt(args) -> int:
    from mallard.engines.uttt.bench import bench_uttt

    return bench_uttt(args.positions, args.limit, args.seed, args.threads, sys.stdout)


def _bench_uttt_reach(args) -> int:
    from mallard.engines.uttt.reach import GAMES_FILE, bench_reach, load_games

    games = load_games(args.file or GAMES_FILE)
    if args.games:
        wanted = [name.strip() for name in args.games.split(",") if name.strip()]
        games = [game for game in games
                 if any(game.name == name or game.name.split("/")[0] == name for name in wanted)]
        if not games:
            raise ValueError(f"bench uttt-reach: no game is named {args.games!r}")
    return bench_reach(games, args.limits, args.threads, args.baseline, args.max_plies,
                       sys.stdout)


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

    return board.run(args.host, args.port, args.engine, args.open,
                     use_token=not args.no_token, max_engines=args.max_engines)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (`mallard.protocol.grammar`), each leading to its function
    here; wired on each call, so that a test may replace one of them."""
    runs = {"uci": _serve, "ugi": _serve, "gtp": _serve, "solve": _solve, "perft": _perft,
            "bench": _bench_signatures, "bench connect4": _bench_connect4,
            "bench duck-perft": _bench_duck_perft, "bench duck": _bench_duck,
            "bench startup": _bench_startup, "bench duck-match": _bench_duck_match,
            "bench uttt": _bench_uttt, "bench uttt-reach": _bench_uttt_reach,
            "bench timing": _bench_timing,
            "bench threads": _bench_threads, "prove": _prove, "match": _match, "tune": _tune,
            "book build": _book_build, "warmup": _warmup, "board": _board}
    return grammar.build_parser(grammar.Wiring(runs, cluster_address=cluster_address,
                                               control_list=control_list,
                                               weight_groups=weight_groups))


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
        if argv[0] in KERNEL_COMMANDS:
            interrupt.end_on_interrupt()
        return args.run(args)
    except BrokenPipeError:
        return _reader_gone()
    except (ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"mallard: {clip(message, MESSAGE_LIMIT)}", file=sys.stderr)
        return 2
    except OSError as error:  # a file, directory or cluster the user named cannot be used
        print(f"mallard: {clip(error, MESSAGE_LIMIT)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one line for the user, never a traceback
        print(f"mallard: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
