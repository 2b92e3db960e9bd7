"""`mallard solve` in a real process: byte-identical output to the reference solver's format."""

import subprocess
import sys

import pytest

from mallard.engines.connect4.testsets import load


def run_solve(stdin: str, *args: str):
    process = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", "solve", *args],
                             input=stdin, capture_output=True, text=True, timeout=300)
    return process.returncode, process.stdout, process.stderr


def test_strong_output_is_byte_identical_on_a_sample():
    lines = []
    for name, step in (("End-Easy", 50), ("Middle-Easy", 50), ("Middle-Medium", 100),
                       ("Begin-Easy", 50), ("Begin-Medium", 250), ("Begin-Hard", 100)):
        lines += [(m, s) for m, s in load(name)[::step] if len(m) != 13]
    code, out, err = run_solve("".join(m + "\n" for m, _ in lines))
    assert code == 0 and err == ""
    assert out == "".join(f"{m} {s}\n" for m, s in lines)


def test_weak_analysis_stats_and_empty_line():
    code, out, _ = run_solve("\n4453\n", "-a")
    assert out == " -2 -1 0 1 0 -1 -2\n4453 -5 -5 -2 -3 -4 -2 -2\n"
    code, out, _ = run_solve("4453\n\n", "-w")
    assert out == "4453 -1\n 1\n"
    code, out, _ = run_solve("2252576253462244111563365343671351441\n", "--stats", "--no-book")
    moves, score, nodes, micros = out.split()
    assert (moves, score) == ("2252576253462244111563365343671351441", "-1")
    assert int(nodes) > 0 and int(micros) >= 0


def test_analysis_marks_full_columns():
    code, out, _ = run_solve("444444\n", "-a")
    assert out.split()[4] == "-1000"


def test_invalid_lines_report_and_continue():
    stdin = "12x4\n4\n4444444\n1212121\n9\n44\n"
    code, out, err = run_solve(stdin)
    assert code == 0
    assert out.splitlines()[0].startswith("4 ") and out.splitlines()[1].startswith("44 ")
    assert len(out.splitlines()) == 2
    errors = err.splitlines()
    assert errors[0].startswith('Line 1: Invalid move 3 "12x4"')
    assert errors[1].startswith('Line 3: Invalid move 7 "4444444"')
    assert errors[2].startswith('Line 4: Invalid move 7 "1212121"')
    assert errors[3].startswith('Line 5: Invalid move 1 "9"')


def test_other_board_size():
    code, out, _ = run_solve("\n11\n", "--width", "4", "--height", "4", "--no-book")
    assert out == " 0\n11 0\n"


def test_unsupported_board_size_is_a_clear_error():
    code, out, err = run_solve("\n", "--width", "9", "--height", "7")
    assert code == 2 and "not supported" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["bench", "nope"], ["book"],
                                  ["bench", "connect4", "--set", "nope"]])
def test_bad_command_lines_exit_with_usage(argv):
    process = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", *argv],
                             capture_output=True, text=True, timeout=60)
    assert process.returncode == 2 and "usage" in process.stderr


def test_only_ascii_digits_are_columns():
    """'٤٤٥٣' (Arabic-Indic digits) was solved as 4453."""
    code, out, err = run_solve("٤٤٥٣\n4453\n")
    assert code == 0 and out == "4453 -2\n"
    assert err == 'Line 1: Invalid move 1 "٤٤٥٣" (not a column 1..7)\n'


def test_a_bad_line_is_echoed_clipped_and_a_huge_one_not_at_all():
    """A 1 MB bad line was echoed in full on stderr; one longer than 1 MB is not even held."""
    long_line = "4" * 1_000_000
    huge_line = "4" * 3_000_000
    code, out, err = run_solve(f"{long_line}\n{huge_line}\n4453\n")
    assert code == 0 and out == "4453 -2\n"
    first, second = err.splitlines()
    assert first == ('Line 1: Invalid move 7 "' + "4" * 80 + '... (1000000 characters)" '
                     "(column 4 is full)")
    assert second == "Line 2: Invalid line (longer than 1048576 bytes)"


@pytest.mark.parametrize("arguments, stdin", [
    (["solve", "--width", "9", "--height", "6", "--no-book"], "\n"),  # minutes in one kernel
    (["perft", "duck", "6"], None),
])
def test_ctrl_c_ends_a_long_kernel_at_once(arguments, stdin):
    """Ctrl-C was ignored during a solve (only SIGTERM ended it): the kernel held the main
    thread, where Python runs its signal handlers."""
    import signal
    import time

    process = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", *arguments],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        if stdin is not None:
            process.stdin.write(stdin)
            process.stdin.flush()
        time.sleep(3)  # well into the kernel (the code is compiled already: the suite ran it)
        assert process.poll() is None
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    _, err = process.communicate()
    assert process.returncode == 130 and "Traceback" not in err
    assert took < 2, f"{took:.1f} s"
