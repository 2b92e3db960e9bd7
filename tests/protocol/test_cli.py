"""The `mallard` command line as a user meets it: any argv ends in exit status 0 or 2 without a
traceback (hypothesis over every subcommand's options), the version and help, each subcommand's
own usage on its errors, and quiet exits when the reader of stdout goes away."""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import os
import shlex
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mallard.protocol.server
from mallard.protocol import VERSION, cli
from mallard.tournaments import cli as match_cli
from mallard.tournaments.match import Match
from tests.protocol.harness import ENGINE_COMMAND

MALLARD = [sys.executable, "-m", "mallard.protocol.cli"]


def leaf_parsers(parser: argparse.ArgumentParser, path=()):
    """(subcommand words, parser) for every subcommand that runs something."""
    subparsers = [action for action in parser._actions
                  if isinstance(action, argparse._SubParsersAction)]
    if not subparsers:
        yield path, parser
        return
    for name, child in subparsers[0].choices.items():
        yield from leaf_parsers(child, path + (name,))


LEAVES = dict(leaf_parsers(cli.build_parser()))
OPTION_WORDS = sorted({word for parser in LEAVES.values() for action in parser._actions
                       for word in action.option_strings})
MATCH_WORDS = ["-engine", "-each", "-variant", "-games", "-rounds", "-concurrency", "-sprt",
               "-openings", "-draw", "-resign", "-maxmoves", "-adjudicate", "-pgnout", "-db",
               "-json", "-tournament", "-srand", "-repeat", "-recover", "-report", "-progress",
               "-startuptimeout", "-stalltimeout", "-ratinginterval", "cmd=mallard", "cmd=",
               "proto=uci", "proto=gtp", "proto=xboard", "tc=10+0.1", "tc=-1", "tc=inf",
               "st=0.1", "st=nan", "depth=0", "nodes=-3", "option.Hash=16", "elo0=0", "elo1=5",
               "file=none.epd", "format=pgn", "movenumber=1", "movecount=x", "score=10",
               "restart=maybe", "timemargin=-5", "name=", "solved", "penta=true"]
VALUES = ["0", "1", "-1", "7", "99999999999999999999", "1e300", "nan", "inf", "-inf", "0.5",
          "x", "", "duck", "cfour", "uttt", "bitbully", "Begin-Hard", "4453", "2,3", ",",
          "all", "none", "mobility", "--", "-", "=", "é", "\x00"]


def runners():
    """The functions a subcommand's parser dispatches to (they do the work, not the checks)."""
    return [name for name, function in vars(cli).items()
            if name.startswith("_") and inspect.isfunction(function)
            and list(inspect.signature(function).parameters) == ["args"] and name != "_serve"]


@st.composite
def command_lines(draw):
    words = draw(st.sampled_from(sorted(LEAVES) + [("match",), ()]))
    vocabulary = MATCH_WORDS if words == ("match",) else OPTION_WORDS + ["-h", "--help", "-V"]
    tokens = draw(st.lists(st.sampled_from(vocabulary) | st.sampled_from(VALUES)
                           | st.text(max_size=6), max_size=8))
    return list(words) + tokens


def run_main(argv) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as stop:
            code = stop.code
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(argv=command_lines())
def test_any_command_line_exits_0_or_2_without_a_traceback(argv, tmp_path_factory):
    folder = tmp_path_factory.mktemp("argv")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)  # -db, -pgnout and --output land here
        for name in runners():
            patch.setattr(cli, name, lambda args: 0)
        patch.setattr(mallard.protocol.server, "serve", lambda **kwargs: 0)
        patch.setattr(Match, "run", lambda self: None)
        patch.setattr(sys, "stdin", io.StringIO(""))
        code, out, err = run_main(argv)
    assert code in (0, 2, None), (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    if code == 2:
        assert err.strip(), argv  # a refusal always says why


def test_version():
    for flag in ("--version", "-V"):
        code, out, _ = run_main([flag])
        assert code == 0 and out.strip() == f"mallard {VERSION}"


def test_help_names_no_internals_and_every_flag_has_help():
    code, out, _ = run_main(["--help"])
    assert code == 0 and "usage: mallard" in out
    for words, parser in LEAVES.items():
        text = parser.format_help()
        for internal in ("argparse", ".py", "protocol/", "engines/"):
            assert internal not in text, (words, internal)
        formatter = parser._get_formatter()
        for action in parser._actions:
            assert action.help, (words, action.dest)
            if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
                assert "default" in formatter._get_help_string(action), (words, action.dest)


@pytest.mark.parametrize("flag", ["-h", "-help", "--help"])
def test_match_help_goes_to_stdout_with_status_0(flag):
    code, out, err = run_main(["match", flag])
    assert code == 0 and err == ""
    assert out == match_cli.HELP and "-variant V" in out and "uttt" in out


@pytest.mark.parametrize("argv, usage, message", [
    (["solve", "--depth", "3"], "usage: mallard solve", "unrecognized arguments: --depth 3"),
    (["solve", "--hash", "0"], "usage: mallard solve", "0 is below 1"),
    (["solve", "--hash", "-5"], "usage: mallard solve", "-5 is below 1"),
    (["bench", "connect4", "--limit", "0"], "usage: mallard bench connect4", "0 is below 1"),
    (["bench", "duck", "--depth", "0"], "usage: mallard bench duck", "0 is below 1"),
    (["bench", "duck", "--enumeration", "2,x"], "usage: mallard bench duck",
     "'x' is not a whole number"),
    (["bench", "duck-perft", "--reference", "/no/such/engine"], "usage: mallard bench duck-perft",
     "no executable program"),
    (["bench", "uttt", "--limit", "nan"], "usage: mallard bench uttt", "positive number"),
    (["bench", "threads", "--movetime", "0"], "usage: mallard bench threads", "0 is below 1"),
    (["bench", "threads", "--variants", "chess"], "usage: mallard bench threads",
     "expected variants among"),
    (["bench", "--variant", "duck", "duck-perft"], "usage: mallard bench duck-perft",
     "a named benchmark does not take it"),
    (["bench", "--variant", "chess"], "usage: mallard bench [-h] [--variant VARIANT] "
     "[BENCHMARK ...]", "invalid choice: 'chess'"),
    (["prove", "uttt", "x", "--limit", "-1"], "usage: mallard prove", "positive number"),
    (["prove", "uttt", "x", "--threads", "0"], "usage: mallard prove", "0 is below 1"),
    (["book", "build", "--depth", "3", "--cluster", "10.0.0.5"], "usage: mallard book build",
     "is not a cluster address: tcp://HOST:PORT or local[:N]"),
    (["bench", "duck-match", "--cluster", "local:0"], "usage: mallard bench duck-match",
     "local:N needs a whole number of workers"),
    (["gtp", "--variant", "duck"], "usage: mallard gtp", "duck cannot be played over GTP"),
    (["perft", "duck", "-1"], "usage: mallard perft", "-1 is below 0"),
    (["bench", "duck", "--enumeration", "9" * 23], "usage: mallard bench duck",
     "is above 9223372036854775807"),
    (["bench", "threads", "--movetime", "9" * 23], "usage: mallard bench threads",
     "is above 9223372036854775807"),
    (["bench", "uttt-reach", "--threads", "1,99"], "usage: mallard bench uttt-reach",
     "99 is above"),
    (["bench", "uttt-reach", "--threads", ","], "usage: mallard bench uttt-reach",
     "no value given"),
    (["bench", "uttt-reach", "--limits", "1,0"], "usage: mallard bench uttt-reach",
     "'0' is not a positive number of seconds"),
])
def test_each_subcommand_shows_its_own_usage(argv, usage, message):
    code, out, err = run_main(argv)
    assert code == 2 and out == ""
    assert err.startswith(usage) and message in err.splitlines()[-1]


def test_errors_after_parsing_are_one_line():
    code, out, err = run_main(["perft", "duck", "1", "--fen", "not a fen"])
    assert code == 2 and out == ""
    problems = [line for line in err.splitlines() if "(first run only)" not in line]
    assert len(problems) == 1 and problems[0].startswith("mallard: ")


def test_gtp_refuses_duck_before_reading_any_input():
    process = subprocess.run(MALLARD + ["gtp", "--variant", "duck"], input="genmove black\n",
                             capture_output=True, text=True, timeout=60)
    assert process.returncode == 2 and process.stdout == ""
    assert "duck cannot be played over GTP" in process.stderr and "Traceback" not in process.stderr


# --- the reader goes away --------------------------------------------------------------------

PRINTING = [
    (["solve"], "4453\n" * 20000),
    (["solve", "-a", "--stats"], "4\n" * 20000),
    (["perft", "duck", "2", "--divide"], ""),
    (["perft", "uttt", "3", "--divide"], ""),
    (["--help"], ""),
    (["match", "-help"], ""),
    (["prove", "uttt", "X;.........;" + "/".join(["........."] * 9), "--limit", "0.2"], ""),
    (["bench", "duck", "--depth", "1", "--enumeration", ""], ""),
    (["bench", "connect4", "--set", "End-Easy", "--limit", "50"], ""),
    (["uci"], "uci\nisready\ngo depth 3\n"),
]


@pytest.mark.parametrize("command", ["solve", "uci", "gtp", ""])
def test_a_process_started_with_stdin_closed_ends_as_at_the_end_of_input(command):
    done = subprocess.run(["bash", "-c", f"{shlex.join(ENGINE_COMMAND)} {command} <&-"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "error" not in done.stderr, done.stderr


@pytest.mark.parametrize("engine, says", [
    ("/bin/false", "ended"), ("/bin/cat", "did not answer 'uciok' within 1 s")])
def test_a_reference_engine_that_fails_is_one_line_before_any_timing(engine, says,
                                                                     monkeypatch):
    from mallard.engines.duck import bench as duck_bench
    monkeypatch.setattr(duck_bench._UciPerft, "HANDSHAKE_S", 1)
    code, out, err = run_main(["bench", "duck-perft", "--reference", engine])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"mallard: the reference engine '{engine}' {says}"), err


@pytest.mark.parametrize("argv, says", [
    (["perft", "uttt", "0", "--divide"], "mallard: --divide needs a depth of at least 1\n"),
    (["perft", "duck", "0", "--divide"], "mallard: --divide needs a depth of at least 1\n"),
    (["perft", "duck", "1", "--fen", ""], "mallard: empty FEN\n")])
def test_perft_refuses_a_divide_at_depth_0_and_an_empty_fen_alike_for_every_game(argv, says):
    code, out, err = run_main(argv)  # uttt's divide listed 81 moves; '' was the start position
    assert (code, out) == (2, "") and err.endswith(says), err


@pytest.mark.parametrize("output, says", [
    (".", "is not a file name"), ("", "is not a file name"), ("{tmp}", "is not a file name"),
    ("{tmp}/missing/book.npz", "no directory")])
def test_a_book_output_that_cannot_be_the_book_file_is_refused_before_the_build(output, says,
                                                                               tmp_path):
    output = output.format(tmp=tmp_path)
    code, out, err = run_main(["book", "build", "--depth", "2", "--width", "5", "--height", "4",
                               "--output", output])
    assert (code, out) == (2, "") and err.startswith(f"mallard: --output '{output}'"), err
    assert says in err and err.count("\n") == 1 and list(tmp_path.iterdir()) == []


LATE_POSITION = ("O;.....@.O.;.X.OOX.X./OXO.OX.XX/...O.X..X/XOOX...XX/.OX.X.O.X/XO.X...O./"
                 "O......XX/OX..OOXOO/.O.OXOOXO")


@pytest.mark.parametrize("argv", [
    ["prove", "uttt", LATE_POSITION, "--limit", "5"],
    ["prove", "uttt", "--limit", "5", LATE_POSITION],
    ["prove", "uttt", "--threads", "1", "--hash", "16", LATE_POSITION, "--limit", "5"],
    ["prove", "--limit", "5", "uttt", LATE_POSITION]], ids=["after", "before", "between", "first"])
def test_a_subcommand_reads_its_positionals_wherever_they_stand_among_options(argv):
    code, out, err = run_main(argv)
    assert (code, err) == (0, "") and out.startswith("O wins  proof "), (out, err)


@pytest.mark.parametrize("argv, stdin", PRINTING, ids=[" ".join(a[:3]) for a, _ in PRINTING])
def test_a_closed_reader_ends_the_run_quietly(argv, stdin, tmp_path):
    """`mallard ... | head -1`: the first line arrives, then the pipe closes."""
    source = tmp_path / "input.txt"
    source.write_text(stdin)
    read_end, write_end = os.pipe()
    with open(source) as input_file:
        process = subprocess.Popen(MALLARD + argv, stdin=input_file, stdout=write_end,
                                   stderr=subprocess.PIPE, text=True)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        first = reader.readline()
    _, err = process.communicate(timeout=120)
    assert first, "no first line"
    assert "Traceback" not in err and "Error" not in err, err
    assert process.returncode in (0, cli.EXIT_BROKEN_PIPE), (process.returncode, err)


def test_ctrl_c_while_the_command_loads_ends_it_without_a_traceback():
    """The console script loads numpy, numba and the engines before `main` can catch Ctrl-C;
    a Ctrl-C in that moment printed a traceback. The process signals itself from a timer set
    as the console script's function starts, early to late, so that some signals land while
    the modules load and some after."""
    import signal

    for delay in (0.001, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8):
        script = ("import os, signal, sys; from mallard.protocol.command import run; "
                  "signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT)); "
                  f"signal.setitimer(signal.ITIMER_REAL, {delay}); "
                  "sys.argv[0] = 'mallard'; run()")
        # stdin stays open: `solve` waits on it, so only the signal can end the run (with
        # stdin closed, a quick load reached the end of input first and exited 0)
        process = subprocess.Popen([sys.executable, "-c", script, "solve"],
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            process.wait(timeout=60)
        finally:
            process.kill()
            process.stdin.close()
        stderr = process.stderr.read()
        assert "Traceback" not in stderr, (delay, stderr)
        assert process.returncode in (128 + signal.SIGINT, -signal.SIGINT), (delay, stderr)
