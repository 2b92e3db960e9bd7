"""Time controls and clocks: cutechess tc= parsing, PGN tags, clock arithmetic on a fake time
source (no sleeps), and the UCI/UGI go fields."""

from __future__ import annotations

import pytest

from mallard.tournaments.timecontrol import Clock, TimeControl, go_fields, ugi_go_fields


class FakeTime:
    """A monotonic_ns stand-in the test advances by hand."""

    def __init__(self) -> None:
        self.ns = 1_000_000_000

    def __call__(self) -> int:
        return self.ns

    def advance_ms(self, ms: float) -> None:
        self.ns += int(ms * 1_000_000)


def make_clock(tc: str | TimeControl, margin_ms: int = 0, **kwargs) -> tuple[Clock, FakeTime]:
    fake = FakeTime()
    control = TimeControl.parse(tc) if isinstance(tc, str) else tc
    return Clock(control, margin_ms, now_ns=fake, **kwargs), fake


def play_move(clock: Clock, fake: FakeTime, ms: float) -> int:
    clock.start()
    fake.advance_ms(ms)
    return clock.stop()


# --- parsing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, moves, time_ms, increment_ms", [
    ("40/60", 40, 60_000, 0),
    ("40/60+0.6", 40, 60_000, 600),
    ("60+0.6", 0, 60_000, 600),
    ("60", 0, 60_000, 0),
    ("2:30+1", 0, 150_000, 1000),
    ("1:00:00", 0, 3_600_000, 0),
    ("0.5+0.05", 0, 500, 50),
    ("40/2:30+1", 40, 150_000, 1000),
    ("1:30:15.5", 0, 5_415_500, 0),
    ("0.29", 0, 290, 0),
    ("0+0.1", 0, 0, 100),
    ("  10+0.1 ", 0, 10_000, 100),
])
def test_parse_clock_forms(text, moves, time_ms, increment_ms):
    tc = TimeControl.parse(text)
    assert (tc.moves, tc.time_ms, tc.increment_ms) == (moves, time_ms, increment_ms)
    assert not tc.infinite and tc.movetime_ms is None
    assert tc.has_clock() and tc.is_bounded()


def test_parse_infinite():
    tc = TimeControl.parse("inf")
    assert tc.infinite and not tc.has_clock()
    assert not tc.is_bounded()


@pytest.mark.parametrize("text", [
    "", "   ", "abc", "-60", "60+-1", "-40/60", "0/60", "0/60+1", "40/", "/60", "60+",
    "60+0.6+1", "1:2:3:4", "0", "0+0", "40/0", "1e3", "nan", "inf+1", "60s", "1.5:00",
])
def test_parse_rejects_bad_text(text):
    with pytest.raises(ValueError) as error:
        TimeControl.parse(text)
    assert repr(text) in str(error.value)


def test_constructor_rejects_inconsistent_fields():
    with pytest.raises(ValueError):
        TimeControl(time_ms=-1)
    with pytest.raises(ValueError):
        TimeControl(moves=40)  # a period with no time
    with pytest.raises(ValueError):
        TimeControl(time_ms=1000, movetime_ms=100)
    with pytest.raises(ValueError):
        TimeControl(infinite=True, time_ms=1000)
    with pytest.raises(ValueError):
        TimeControl(depth=0)


# --- st, depth, nodes and their combinations ----------------------------------------------------

@pytest.mark.parametrize("seconds, movetime_ms", [(1, 1000), (0.5, 500), ("2.5", 2500),
                                                  (0.001, 1), ("0.1", 100)])
def test_fixed_move_time(seconds, movetime_ms):
    tc = TimeControl.fixed_move_time(seconds)
    assert tc.movetime_ms == movetime_ms
    assert not tc.has_clock() and tc.is_bounded()


@pytest.mark.parametrize("seconds", [0, -1, "0", "-1", "x", "", float("nan"), float("inf"), True])
def test_fixed_move_time_rejects(seconds):
    with pytest.raises(ValueError):
        TimeControl.fixed_move_time(seconds)


def test_with_limits_adds_depth_and_nodes():
    tc = TimeControl.parse("60+0.6").with_limits(depth=12)
    assert tc.depth == 12 and tc.nodes is None and tc.time_ms == 60_000
    tc = tc.with_limits(nodes="5000")
    assert (tc.depth, tc.nodes) == (12, 5000)
    for bad in (0, -3, "ten", "", True, 1.5):
        with pytest.raises(ValueError):
            tc.with_limits(depth=bad)


def test_depth_or_nodes_alone_are_bounds():
    assert TimeControl().with_limits(depth=5).is_bounded()
    assert TimeControl().with_limits(nodes=100).is_bounded()
    assert TimeControl.parse("inf").with_limits(depth=5).is_bounded()
    assert not TimeControl().is_bounded()


def test_from_settings():
    assert TimeControl.from_settings(tc="40/60+0.6") == TimeControl(40, 60_000, 600)
    assert TimeControl.from_settings(st="0.5").movetime_ms == 500
    assert TimeControl.from_settings(depth="8") == TimeControl(depth=8)
    assert TimeControl.from_settings(tc="inf", nodes=1000) == TimeControl(nodes=1000, infinite=True)
    assert TimeControl.from_settings(tc="10", depth=3) == TimeControl(time_ms=10_000, depth=3)


@pytest.mark.parametrize("settings", [{}, {"tc": "inf"}, {"tc": "60", "st": "1"}])
def test_from_settings_rejects_unbounded_or_conflicting(settings):
    with pytest.raises(ValueError):
        TimeControl.from_settings(**settings)


# --- texts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("tc, tag", [
    (TimeControl.parse("40/60+0.6"), "40/60+0.6"),
    (TimeControl.parse("40/60"), "40/60"),
    (TimeControl.parse("60+0.6"), "60+0.6"),
    (TimeControl.parse("60"), "60"),
    (TimeControl.parse("60+0"), "60"),
    (TimeControl.parse("2:30+1"), "150+1"),
    (TimeControl.parse("0.5+0.05"), "0.5+0.05"),
    (TimeControl.parse("2.50"), "2.5"),
    (TimeControl.fixed_move_time(1), "1/move"),
    (TimeControl.fixed_move_time(0.25), "0.25/move"),
    (TimeControl.parse("inf"), "-"),
    (TimeControl(depth=10), "-"),
    (TimeControl(nodes=10_000), "-"),
    (TimeControl.parse("60+1").with_limits(depth=10), "60+1"),
])
def test_pgn_tag(tc, tag):
    assert tc.pgn_tag() == tag
    assert str(tc) == tag


@pytest.mark.parametrize("text", ["40/60", "40/60+0.6", "60+0.6", "60", "2:30+1", "1:00:00",
                                  "0.5+0.05", "inf", "40/2:30+1", "0+0.1", "0.001"])
def test_cutechess_string_round_trip(text):
    tc = TimeControl.parse(text)
    assert TimeControl.parse(tc.cutechess_string()) == tc


def test_cutechess_string_needs_a_tc():
    with pytest.raises(ValueError):
        TimeControl.fixed_move_time(1).cutechess_string()
    with pytest.raises(ValueError):
        TimeControl(depth=4).cutechess_string()


@pytest.mark.parametrize("tc", [
    TimeControl.parse("40/60+0.6").with_limits(depth=9),
    TimeControl.fixed_move_time(0.75).with_limits(nodes=123),
    TimeControl.parse("inf").with_limits(depth=2),
    TimeControl(nodes=50),
])
def test_cutechess_settings_round_trip(tc):
    assert TimeControl.from_settings(**tc.cutechess_settings()) == tc


# --- clock arithmetic -------------------------------------------------------------------------

def test_preincrement_at_start():
    clock, _ = make_clock("10+0.1")
    assert clock.remaining_ms == 10_100
    assert clock.increment_ms == 100
    assert clock.moves_to_go is None
    assert not clock.flagged


def test_no_preincrement_for_ugi():
    clock, _ = make_clock("10+0.1", preincrement=False)
    assert clock.remaining_ms == 10_000


def test_increment_after_each_move():
    clock, fake = make_clock("10+0.1")
    assert play_move(clock, fake, 250) == 250
    assert clock.remaining_ms == 10_100 - 250 + 100
    assert play_move(clock, fake, 1000) == 1000
    assert clock.remaining_ms == 10_100 - 250 + 100 - 1000 + 100
    assert clock.last_move_ms == 1000


def test_allowed_time_of_the_next_move():
    clock, fake = make_clock("1+0.01", margin_ms=50)
    assert clock.allowed_ms == 1010  # pre-incremented, the margin aside
    play_move(clock, fake, 1040)  # 30 ms over, within the margin: the clock stays at zero
    assert not clock.flagged and clock.allowed_ms == 10
    assert make_clock(TimeControl.fixed_move_time(0.05))[0].allowed_ms == 50
    assert make_clock(TimeControl(depth=3))[0].allowed_ms is None


def test_elapsed_is_truncated_to_whole_ms():
    clock, fake = make_clock("10")
    assert play_move(clock, fake, 2.9) == 2
    assert clock.remaining_ms == 9_998


def test_period_resets_after_its_moves():
    clock, fake = make_clock("40/60")
    assert (clock.remaining_ms, clock.moves_to_go) == (60_000, 40)
    for move in range(39):
        play_move(clock, fake, 1000)
        assert clock.moves_to_go == 40 - move - 1
    assert (clock.remaining_ms, clock.moves_to_go) == (21_000, 1)
    play_move(clock, fake, 1000)
    assert (clock.remaining_ms, clock.moves_to_go) == (20_000 + 60_000, 40)
    play_move(clock, fake, 500)
    assert (clock.remaining_ms, clock.moves_to_go) == (79_500, 39)


def test_period_with_increment():
    clock, fake = make_clock("2/10+1")
    assert clock.remaining_ms == 11_000
    play_move(clock, fake, 3000)
    assert (clock.remaining_ms, clock.moves_to_go) == (9_000, 1)
    play_move(clock, fake, 3000)
    assert (clock.remaining_ms, clock.moves_to_go) == (9_000 - 3000 + 1000 + 10_000, 2)


def test_flag_when_over_by_more_than_margin():
    clock, fake = make_clock("1", margin_ms=50)
    play_move(clock, fake, 1051)
    assert clock.flagged
    assert clock.remaining_ms == -51
    with pytest.raises(RuntimeError):
        clock.start()


def test_flag_without_margin():
    clock, fake = make_clock("1")
    play_move(clock, fake, 1000)  # exactly all the time: still in the game
    assert not clock.flagged and clock.remaining_ms == 0
    play_move(clock, fake, 1)
    assert clock.flagged


def test_overrun_within_margin_clamps_to_zero_and_continues():
    clock, fake = make_clock("1+0.1", margin_ms=50)
    assert clock.remaining_ms == 1100
    play_move(clock, fake, 1150)  # 50 ms over: exactly the margin
    assert not clock.flagged
    assert clock.remaining_ms == 100  # clamped to 0, then the increment
    play_move(clock, fake, 90)
    assert not clock.flagged and clock.remaining_ms == 110


def test_fixed_move_time_flagging():
    clock, fake = make_clock(TimeControl.fixed_move_time(1), margin_ms=20)
    assert clock.remaining_ms is None and clock.moves_to_go is None
    play_move(clock, fake, 1020)
    assert not clock.flagged
    play_move(clock, fake, 1021)
    assert clock.flagged


@pytest.mark.parametrize("tc", [TimeControl(depth=3), TimeControl(nodes=10),
                                TimeControl.parse("inf")])
def test_unbounded_clocks_never_flag(tc):
    clock, fake = make_clock(tc)
    play_move(clock, fake, 10_000_000)
    assert not clock.flagged
    assert clock.remaining_ms is None
    assert clock.deadline_ms(grace_ms=500) is None


def test_start_and_stop_misuse():
    clock, _ = make_clock("10")
    with pytest.raises(RuntimeError):
        clock.stop()
    clock.start()
    assert clock.running
    with pytest.raises(RuntimeError):
        clock.start()


def test_negative_margin_rejected():
    with pytest.raises(ValueError):
        make_clock("10", margin_ms=-1)


def test_deadlines():
    clock, fake = make_clock("10+0.1", margin_ms=50)
    assert clock.deadline_ms() == 10_150
    assert clock.deadline_ms(grace_ms=1000) == 11_150
    play_move(clock, fake, 100)
    assert clock.deadline_ms() == 10_100 + 50
    st_clock, _ = make_clock(TimeControl.fixed_move_time(0.5), margin_ms=30)
    assert st_clock.deadline_ms() == 530
    assert st_clock.deadline_ms(grace_ms=200) == 730
    depth_clock, _ = make_clock(TimeControl.parse("5").with_limits(depth=4))
    assert depth_clock.deadline_ms() == 5000  # the clock still bounds a depth-limited move


# --- go fields --------------------------------------------------------------------------------

def test_go_fields_sudden_death():
    white, white_time = make_clock("10+0.1")
    black, _ = make_clock("10+0.1")
    play_move(white, white_time, 300)
    expected = {"wtime": 9_900, "btime": 10_100, "winc": 100, "binc": 100}
    assert go_fields(white, black, white_to_move=False) == expected
    assert go_fields(white, black, white_to_move=True) == expected


def test_go_fields_movestogo_is_the_movers():
    white, white_time = make_clock("40/60")
    black, _ = make_clock("40/60")
    play_move(white, white_time, 1000)
    assert go_fields(white, black, True) == {
        "wtime": 59_000, "btime": 60_000, "winc": 0, "binc": 0, "movestogo": 39}
    assert go_fields(white, black, False)["movestogo"] == 40


def test_go_fields_movetime_and_limits():
    st_clock, _ = make_clock(TimeControl.fixed_move_time(0.5).with_limits(depth=7))
    other, _ = make_clock(TimeControl.fixed_move_time(0.5))
    assert go_fields(st_clock, other, True) == {"movetime": 500, "depth": 7}
    assert go_fields(st_clock, other, False) == {"movetime": 500}
    nodes_clock, _ = make_clock(TimeControl(nodes=20_000))
    assert go_fields(other, nodes_clock, False) == {"nodes": 20_000}
    mixed, _ = make_clock(TimeControl.parse("60+1").with_limits(depth=10, nodes=500))
    assert go_fields(mixed, mixed, True) == {
        "wtime": 61_000, "btime": 61_000, "winc": 1000, "binc": 1000, "depth": 10, "nodes": 500}


def test_go_fields_opponent_without_clock_sends_only_movers_time():
    # cutechess allows a different limit per engine; the opponent's missing clock is left out.
    white, _ = make_clock("10")
    black, _ = make_clock(TimeControl(depth=5))
    assert go_fields(white, black, True) == {"wtime": 10_000, "winc": 0}


def test_ugi_go_fields_without_preincrement():
    first, first_time = make_clock("10+0.1", preincrement=False)
    second, _ = make_clock("10+0.1", preincrement=False)
    assert ugi_go_fields(first, second, True) == {
        "p1time": 10_000, "p2time": 10_000, "p1inc": 100, "p2inc": 100}
    play_move(first, first_time, 400)
    assert ugi_go_fields(first, second, False) == {
        "p1time": 9_700, "p2time": 10_000, "p1inc": 100, "p2inc": 100}


def test_ugi_go_fields_period_and_movetime():
    first, _ = make_clock("20/30", preincrement=False)
    second, _ = make_clock("20/30", preincrement=False)
    assert ugi_go_fields(first, second, False) == {
        "p1time": 30_000, "p2time": 30_000, "p1inc": 0, "p2inc": 0, "movestogo": 20}
    st_clock, _ = make_clock(TimeControl.fixed_move_time(2), preincrement=False)
    assert ugi_go_fields(first, st_clock, False) == {"movetime": 2000}


def test_a_limit_of_more_than_a_year_is_refused_and_a_year_is_not():
    year_s = 365 * 24 * 3600
    assert TimeControl.fixed_move_time(year_s).movetime_ms == year_s * 1000
    assert TimeControl.parse(f"{year_s}+{year_s}").increment_ms == year_s * 1000
    for text in (f"{year_s + 1}", "99999999999999999999", f"1+{year_s + 1}"):
        with pytest.raises(ValueError, match="more than a year"):
            TimeControl.parse(text)
    with pytest.raises(ValueError, match="a move time of 9999999999 s is more than a year"):
        TimeControl.fixed_move_time("9999999999")
