"""GTP front-end: framing, the required commands, Connect Four play, clocks, private commands and
bad input (each case answered `?` with the state kept)."""

import pytest

from tests.protocol.harness import Engine, Process


class Gtp:
    def __init__(self):
        self.engine = Engine("gtp")

    def raw(self, command: str, timeout: float = 120) -> list[str]:
        """The reply lines (without the terminating empty line)."""
        self.engine.send(command)
        return self.engine.lines.until(lambda line: line == "", timeout)[:-1]

    def ok(self, command: str, timeout: float = 120) -> str:
        reply = self.raw(command, timeout)
        assert reply[0].startswith("="), (command, reply)
        first = reply[0].split(" ", 1)[1] if " " in reply[0] else ""
        return "\n".join([first] + reply[1:]).strip("\n") if len(reply) > 1 else first

    def fails(self, command: str) -> str:
        reply = self.raw(command)
        assert len(reply) == 1 and reply[0].startswith("?"), (command, reply)
        return reply[0][1:].strip()

    def board(self) -> str:
        return self.ok("showboard")

    def close(self):
        return self.engine.close()


@pytest.fixture
def gtp():
    g = Gtp()
    yield g
    g.close()


def test_framing_with_and_without_ids(gtp):
    assert gtp.raw("1 protocol_version") == ["=1 2"]
    assert gtp.raw("name") == ["= Mallard"]
    assert gtp.raw("  17   version  # a comment") == ["=17 0.1.0"]
    assert gtp.raw("42 no_such_command") == ["?42 unknown command"]
    assert gtp.raw("known_command genmove") == ["= true"]
    assert gtp.raw("known_command fly") == ["= false"]
    commands = gtp.ok("list_commands").split("\n")
    for required in ("protocol_version", "name", "version", "known_command", "list_commands",
                     "quit", "boardsize", "clear_board", "komi", "play", "genmove", "undo",
                     "showboard", "final_score", "time_settings", "time_left",
                     "mallard-analyze", "mallard-solve"):
        assert required in commands
    gtp.engine.send("", "# only a comment", "\t")
    assert gtp.raw("2\tname") == ["=2 Mallard"]  # tabs are spaces, blank lines are skipped


def test_play_genmove_undo_and_showboard(gtp):
    gtp.ok("boardsize 7 6")
    gtp.ok("clear_board")
    gtp.ok("komi 0")
    gtp.ok("play b d")      # column letter
    gtp.ok("play white 4")  # 1-based column
    board = gtp.board().split("\n")
    assert board[-2].split() == ["a", "b", "c", "d", "e", "f", "g"]
    assert board[-3].split()[1:] == [".", ".", ".", "X", ".", ".", "."]
    assert board[-4].split()[1:] == [".", ".", ".", "O", ".", ".", "."]
    assert board[-1] == "black to move"
    move = gtp.ok("genmove b")
    assert move in "abcdefg" and len(move) == 1
    assert "white to move" in gtp.board()
    gtp.ok("undo")
    assert "black to move" in gtp.board()
    gtp.ok("undo")
    gtp.ok("undo")
    assert "undo" in gtp.fails("undo")


def test_bad_input_is_refused_and_the_state_kept(gtp):
    gtp.ok("play b d")
    before = gtp.board()
    assert "turn" in gtp.fails("play b e")          # white's turn
    assert "color" in gtp.fails("play red e")
    assert "illegal move" in gtp.fails("play w z9")
    assert "illegal move" in gtp.fails("play w pass")
    assert gtp.fails("play w")
    assert gtp.fails("komi lots")
    assert gtp.fails("genmove")
    assert "unacceptable size" in gtp.fails("boardsize 19")
    assert "unacceptable size" in gtp.fails("boardsize 8 8")  # 8 x 9 bits > 64
    assert gtp.fails("boardsize seven")
    assert gtp.fails("time_settings 1 2")
    assert gtp.fails("time_left purple 10 0")
    assert gtp.board() == before
    for column in "ddddd":  # d fills up: 6 stones
        if gtp.raw(f"play {'w' if 'white' in gtp.board() else 'b'} {column}")[0].startswith("?"):
            break
    assert "full" in gtp.fails(f"play {'w' if 'white' in gtp.board() else 'b'} d")


def test_boardsize_changes_the_game_and_clears_it(gtp):
    gtp.ok("play b a")
    gtp.ok("boardsize 5 4")
    board = gtp.board().split("\n")
    assert board[-2].split() == ["a", "b", "c", "d", "e"] and len(board) == 6
    assert "X" not in gtp.board()
    gtp.ok("boardsize 6")  # one size: square
    assert gtp.board().split("\n")[-2].split() == list("abcdef")
    # a 4 x 4 board is a proven draw: the solver says so from the empty board
    gtp.ok("boardsize 4 4")
    assert gtp.ok("mallard-solve").startswith("draw ")
    assert gtp.ok("final_score") == "0"


def test_a_whole_game_to_the_end(gtp):
    gtp.ok("boardsize 5 4")
    colour = "b"
    for _ in range(20):
        reply = gtp.raw(f"genmove {colour}")
        if reply[0].startswith("?"):
            assert "game is over" in reply[0]
            break
        colour = "w" if colour == "b" else "b"
    assert "game over" in gtp.board()
    assert gtp.ok("final_score") in ("B+1", "W+1", "0")
    assert "game is over" in gtp.fails("genmove b")


def test_analyze_and_solve_on_the_standard_board(gtp):
    # four stones in a column each: d1 d2 d3 d4 -> the side to move (black) has exact scores
    for colour, column in zip("bwbw", "dddd"):
        gtp.ok(f"play {colour} {column}")
    lines = gtp.ok("mallard-analyze").split("\n")
    assert sorted(line.split()[0] for line in lines) == list("abcdefg")
    for line in lines:
        vertex, kind, value = line.split()
        assert kind in ("mate", "cp") and int(value) == int(value)
    outcome, vertex, kind, value = gtp.ok("mallard-solve").split()
    assert outcome in ("win", "draw", "loss") and vertex in "abcdefg"
    assert (outcome == "draw") == (kind == "cp")
    best = lines[0].split()
    assert [best[1], best[2]] == [kind, value]  # the best analysed move has the solve's score


def test_clock_commands_drive_genmove(gtp):
    gtp.ok("time_settings 10 0 0")
    gtp.ok("time_left b 5 0")
    assert len(gtp.ok("genmove b")) == 1
    gtp.ok("time_settings 0 1 5")  # byo-yomi: 5 moves in 1 second
    gtp.ok("time_left w 1 5")
    assert len(gtp.ok("genmove w")) == 1


def test_process_autodetects_gtp_and_quits():
    p = Process()
    p.send("1 name")
    assert p.until("=1") == ["=1 Mallard"]
    p.send("2 quit")
    assert p.until("=2")[-1] == "=2"
    code, stderr = p.wait()
    assert code == 0 and stderr == ""
