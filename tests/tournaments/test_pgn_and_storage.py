"""The runner's data: the schedule, opening files, PGN that pyffish replays, and the database
that rebuilds the PGN after a crash."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

import pyffish
import pytest

from mallard.tournaments import Adjudication, EngineConfig, Match, Opening, TimeControl
from mallard.tournaments.match import Reporter
from mallard.tournaments.openings import OpeningError, ordered, read_openings
from mallard.tournaments.schedule import make_schedule
from mallard.tournaments.stats import Sprt
from mallard.tournaments.storage import MatchStore, StorageError
from tests import oracles  # noqa: F401  (pyffish's cfour)

SCRIPT = str(Path(__file__).with_name("scripted_engine.py"))


def scripted(name: str, protocol: str = "uci") -> EngineConfig:
    return EngineConfig(name=name, command=[sys.executable, SCRIPT, "--protocol", protocol,
                                            "--seed", str(len(name))],
                        protocol=protocol, tc=TimeControl.from_settings(tc="10+0.1"))


# --- schedule ------------------------------------------------------------------------------------
def test_round_robin_alternates_colours_and_pairs_share_openings():
    slots = make_schedule(3, games=2, rounds=2, repeat=True)
    assert len(slots) == 3 * 2 * 2 and [s.index for s in slots] == list(range(1, 13))
    for first, second in zip(slots[::2], slots[1::2]):
        assert (first.white_id, first.black_id) == (second.black_id, second.white_id)
        assert first.pair == second.pair and first.opening_index == second.opening_index
    assert len({s.opening_index for s in slots}) == 6
    encounters = {frozenset((s.white_id, s.black_id)) for s in slots}
    assert encounters == {frozenset(p) for p in ((0, 1), (0, 2), (1, 2))}


def test_without_repeat_every_game_has_its_own_opening_and_gauntlet_centres_engine_0():
    slots = make_schedule(2, games=4)
    assert [s.opening_index for s in slots] == [0, 1, 2, 3]
    assert [s.white_id for s in slots] == [0, 1, 0, 1]
    gauntlet = make_schedule(4, games=2, tournament="gauntlet")
    assert all(0 in (s.white_id, s.black_id) for s in gauntlet) and len(gauntlet) == 6
    with pytest.raises(ValueError):
        make_schedule(1)


@pytest.mark.parametrize("engines", range(2, 12))
def test_a_round_robin_goes_by_berger_sittings_with_balanced_colours(engines):
    # every pair once a round; each run of n // 2 encounters (a sitting) has every engine at
    # most once, so a match cut short has given each engine about as many games; one game an
    # encounter leaves each engine White in half its games, give or take one
    slots = make_schedule(engines, games=1, rounds=2)
    first_round = [(s.white_id, s.black_id) for s in slots if s.round == 1]
    assert sorted(tuple(sorted(pair)) for pair in first_round) == [
        (a, b) for a in range(engines) for b in range(a + 1, engines)]
    sitting = engines // 2
    for start in range(0, len(first_round), sitting):
        seated = [engine for pair in first_round[start:start + sitting] for engine in pair]
        assert len(seated) == len(set(seated)) == 2 * sitting
    for engine in range(engines):
        whites = sum(white == engine for white, _ in first_round)
        assert abs(2 * whites - (engines - 1)) <= 1, (engine, whites)
    second_round = [(s.black_id, s.white_id) for s in slots if s.round == 2]
    assert second_round == first_round  # the same order, colours the other way round


def _whites_of_each_encounter(slots) -> dict[frozenset, list[int]]:
    whites: dict[frozenset, list[int]] = {}
    for slot in slots:
        whites.setdefault(frozenset((slot.white_id, slot.black_id)), []).append(slot.white_id)
    return whites


@pytest.mark.parametrize("engines, games, rounds", [(2, 1, 4), (2, 3, 3), (3, 1, 2), (3, 3, 2),
                                                    (4, 1, 3)])
def test_colours_alternate_across_rounds_and_repeat_pairs_go_on(engines, games, rounds):
    # cutechess: an encounter's engines swap colours after each of their games, round after
    # round, so each encounter's whites alternate and end balanced when it plays evenly often
    slots = make_schedule(engines, games=games, rounds=rounds, repeat=True)
    for pair_of_engines, whites in _whites_of_each_encounter(slots).items():
        first, = {whites[0]}
        second, = pair_of_engines - {first}
        assert whites == [first if n % 2 == 0 else second for n in range(len(whites))]
    # -repeat: with two engines the games pair up two by two across rounds; with more, within
    # each encounter's run of games (a new encounter drops an unpaired game's opening)
    run = len(slots) if engines == 2 else games
    groups = [slots[start:min(start + 2, begin + run)] for begin in range(0, len(slots), run)
              for start in range(begin, begin + run, 2)]
    for group in groups:
        assert len({(slot.pair, slot.opening_index) for slot in group}) == 1
    assert len({group[0].pair for group in groups}) == len(groups)
    assert len({group[0].opening_index for group in groups}) == len(groups)


def test_one_game_a_round_over_rounds_alternates_colours_and_pairs_in_a_match():
    match = Match(variant="cfour", engines=[scripted("a"), scripted("b")], games=1, rounds=4,
                  repeat=True).run()
    records = sorted(match.records, key=lambda record: record.index)
    assert [record.white_name for record in records] == ["a", "b", "a", "b"]
    assert [record.job.round for record in records] == [1, 2, 3, 4]
    assert match.penta.pairs == 2


def test_a_database_of_another_schedule_is_refused(tmp_path):
    db = str(tmp_path / "m.sqlite")
    Match(variant="cfour", engines=[scripted("a"), scripted("b")], games=1, rounds=2,
          db=db).run()
    with sqlite3.connect(db) as connection:  # game 2 as a mallard before the fix played it
        record = json.loads(connection.execute("SELECT record FROM games WHERE idx = 2")
                            .fetchone()[0])
        job = record["job"]
        job["white"], job["black"] = job["black"], job["white"]
        job["white_id"], job["black_id"] = job["black_id"], job["white_id"]
        connection.execute("UPDATE games SET record = ? WHERE idx = 2", (json.dumps(record),))
    with pytest.raises(StorageError, match="holds game 2 as a vs b, round 2, pair 1, where "
                                           "this match's schedule has b vs a"):
        Match(variant="cfour", engines=[scripted("a"), scripted("b")], games=1, rounds=2,
              db=db).run()


# --- openings ------------------------------------------------------------------------------------
def test_opening_formats(tmp_path):
    from mallard.engines import get_game

    duck = get_game("duck")
    epd = tmp_path / "o.epd"
    epd.write_text("# comment\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"x\";\n")
    [opening] = read_openings(str(epd), duck, "epd")
    assert opening.fen.startswith("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq")
    moves = tmp_path / "o.txt"
    moves.write_text("1. e4,e5 d5,d4 2. Nf3,f4\n\ne2e4,e4e5\n")
    first, second = read_openings(str(moves), duck, "moves", plies=2)
    assert first.moves == ("e2e4,e4e5", "d7d5,d5d4") and first.fen is None
    assert second.moves == ("e2e4,e4e5",) and second.label.endswith(":3")
    pgn = tmp_path / "o.pgn"
    pgn.write_text('[Event "a"]\n[Variant "cfour"]\n\n1. P@d1 P@d2 {x} 2. P@c1 *\n\n'
                   '[Event "b"]\n\n1. P@a1 1-0\n')
    cfour = get_game("cfour")
    openings = read_openings(str(pgn), cfour, "pgn")
    assert [o.moves for o in openings] == [("P@d1", "P@d2", "P@c1"), ("P@a1",)]
    assert ordered(openings, "random", 3) == ordered(openings, "random", 3)
    bad = tmp_path / "bad.txt"
    bad.write_text("e4,e5\ne4,e4\n")
    with pytest.raises(OpeningError, match=r"bad.txt:2"):
        read_openings(str(bad), duck, "moves")


# --- PGN replayed through pyffish -----------------------------------------------------------------
def _pgn_games(text: str) -> list[tuple[dict, list[str]]]:
    games = []
    for chunk in re.split(r"\n\n(?=\[)", text.strip()):
        head, _, body = chunk.partition("\n\n")
        tags = dict(re.findall(r'^\[(\w+) "(.*)"\]$', head, re.M))
        body = re.sub(r"\{[^}]*\}", " ", body)
        tokens = [t for t in body.split() if not re.fullmatch(r"\d+\.+", t)]
        games.append((tags, tokens[:-1]))
    return games


def _replay_san(variant: str, fen: str, sans: list[str]) -> list[str]:
    """UCI moves of a SAN list, each found as the unique pyffish move with that SAN."""
    played = []
    for san in sans:
        here = pyffish.get_fen(variant, fen, played)
        duck_square = san.split(",")[1] if "," in san else None
        candidates = [move for move in pyffish.legal_moves(variant, fen, played)
                      if duck_square is None or move.endswith(duck_square)]
        matching = [move for move in candidates if pyffish.get_san(variant, here, move) == san]
        assert len(matching) == 1, (san, matching)
        played.append(matching[0])
    return played


@pytest.mark.parametrize("variant, protocol", [("duck", "uci"), ("cfour", "uci"),
                                               ("cfour", "gtp")])
def test_pgn_of_real_games_replays_in_pyffish(tmp_path, variant, protocol):
    pgn = tmp_path / "out.pgn"
    openings = [Opening(moves=("e2e4,e4e5",))] if variant == "duck" else []
    match = Match(variant=variant, engines=[scripted("a", protocol), scripted("b", protocol)],
                  games=2, repeat=True, pgn_out=str(pgn), openings=openings,
                  adjudication=Adjudication(maxmoves=40)).run()
    games = _pgn_games(pgn.read_text())
    assert len(games) == 2
    for (tags, sans), record in zip(games, match.records):
        assert tags["Variant"] == variant and tags["Result"] == record.result
        assert tags["TimeControl"] == "10+0.1" and tags["PlyCount"] == str(len(sans))
        fen = tags.get("FEN", pyffish.start_fen(variant))
        played = _replay_san(variant, fen, sans)
        assert played == [move.text for move in record.moves]
        if record.termination == "normal":
            assert pyffish.game_result(variant, fen, played) != 0 or \
                record.result == "1/2-1/2"


# --- storage -------------------------------------------------------------------------------------
def test_the_pgn_is_rebuilt_from_the_database_after_a_crash(tmp_path):
    pgn = tmp_path / "games.pgn"
    pgn.write_text("earlier content\n")
    db = str(tmp_path / "m.sqlite")
    match = Match(variant="cfour", engines=[scripted("a"), scripted("b")], games=2,
                  db=db, pgn_out=str(pgn)).run()
    full = pgn.read_text()
    assert full.startswith("earlier content\n") and full.count("[Event ") == 2
    # a crash after the database commit but in the middle of the PGN write
    pgn.write_text(full[: len(full) - 40])
    store = MatchStore(db)
    store.restore_pgn(str(pgn))
    assert pgn.read_text() == full
    # the same game stored twice is refused
    assert store.add(match.records[0], "x") is False
    with pytest.raises(StorageError, match="holds another match"):
        store.bind_settings({"something": "else"})
    store.close()


def test_a_shared_pgn_keeps_every_other_match_s_games_on_resume(tmp_path):
    pgn = tmp_path / "all.pgn"

    def run(db: str, names: tuple[str, str]) -> None:
        Match(variant="cfour", engines=[scripted(names[0]), scripted(names[1])], games=2,
              db=str(tmp_path / db), pgn_out=str(pgn)).run()

    def stored(db: str) -> list[str]:
        with sqlite3.connect(tmp_path / db) as connection:
            return [row[0] for row in connection.execute("SELECT pgn FROM games ORDER BY idx")]

    run("a.sqlite", ("a", "b"))
    run("b.sqlite", ("c", "d"))
    both = pgn.read_text()
    run("a.sqlite", ("a", "b"))  # a resume with nothing left to play: the file is as it was
    assert pgn.read_text() == both
    # a kill in the middle of A's last write, after which B wrote on: A's broken game is not the
    # end of the file, so it stays, B's games stay, and A's game is written whole after them
    a_games, b_games = stored("a.sqlite"), stored("b.sqlite")
    pgn.write_text(a_games[0] + a_games[1][:50])
    with open(pgn, "a", encoding="utf-8") as handle:
        handle.write("".join(b_games))
    run("a.sqlite", ("a", "b"))
    assert pgn.read_text() == a_games[0] + a_games[1][:50] + "".join(b_games) + a_games[1]
    # the PGN gone: every stored game is written again, and only they
    pgn.unlink()
    run("a.sqlite", ("a", "b"))
    assert pgn.read_text() == "".join(a_games)


class Messages(Reporter):
    def __init__(self):
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def test_a_larger_games_on_resume_lengthens_the_match_and_keeps_its_games(tmp_path):
    db = str(tmp_path / "m.sqlite")
    openings = [Opening(moves=(f"P@{column}1",), label=column) for column in "abcde"]

    def match(games: int, **changes) -> Match:
        settings = dict(variant="cfour", engines=[scripted("a"), scripted("bb")], games=games,
                        repeat=True, openings=openings, opening_order="random", seed=3, db=db,
                        reporter=Messages())
        settings.update(changes)
        return Match(**settings)

    match(3).run()  # an odd count: the third game's opening has no second game yet
    with sqlite3.connect(db) as connection:
        before = connection.execute("SELECT idx, record FROM games ORDER BY idx").fetchall()
    longer = match(6).run()
    assert longer.reporter.lines[0] == f"Lengthening the match in '{db}' from 3 to 6 games"
    assert longer.games_this_run == 3 and len(longer.records) == 6
    with sqlite3.connect(db) as connection:
        after = connection.execute("SELECT idx, record FROM games ORDER BY idx").fetchall()
    assert after[:3] == before and [idx for idx, _ in after] == [1, 2, 3, 4, 5, 6]
    games = [json.loads(record) for _, record in after]
    # every game of the longer match is where a 6-game match from the start would put it
    fresh = match(6, db=None).jobs(3)
    assert [(g["white_name"], g["black_name"], g["job"]["opening"]["label"]) for g in games] == \
        [(job.white.name, job.black.name, job.opening.label) for job in fresh]
    third, fourth = games[2]["job"], games[3]["job"]
    assert third["pair"] == fourth["pair"] and third["opening"] == fourth["opening"]
    again = match(6, sprt=Sprt(0, 5))
    assert again.run().games_this_run == 0  # now the recorded match is the 6-game one
    assert again.reporter.lines[0] == ("Warning: the SPRT of this match was none; it is now "
                                       "elo0=0 elo1=5 alpha=0.05 beta=0.05 model=logistic "
                                       "over games")
    assert match(6, sprt=Sprt(0, 5)).run().reporter.lines[0].startswith("Resuming")
    # shorter, or longer in a way that would renumber played games, is refused
    not_lengthened = r"holds this match with -games \d: a larger -games lengthens it when"
    with pytest.raises(StorageError, match=not_lengthened):
        match(4).run()
    three = [scripted("a"), scripted("bb"), scripted("ccc")]
    db = str(tmp_path / "three.sqlite")
    match(2, engines=three).run()  # a-bb, a-ccc, bb-ccc: with 4 each, games 3-4 are a-bb
    with pytest.raises(StorageError, match=not_lengthened):
        match(4, engines=three).run()


def test_tag_values_with_quotes_backslashes_and_newlines_read_back(tmp_path):
    import io

    import chess.pgn

    pgn = tmp_path / "games.pgn"
    names = ['a "quoted"\\name', "two\nlines\tand\x7fmore"]
    engines = [scripted("x"), scripted("y")]
    engines = [EngineConfig(**{**engine.to_dict(), "name": name,
                               "tc": TimeControl.from_settings(tc="10+0.1")})
               for engine, name in zip(engines, names)]
    Match(variant="cfour", engines=engines, games=2, event="line one\nline two",
          site='a\\b "c"', pgn_out=str(pgn)).run()
    text = pgn.read_text()
    handle = io.StringIO(text)
    games = [chess.pgn.read_headers(handle) for _ in range(3)]
    assert games[2] is None  # two games, no more
    for headers in games[:2]:
        # python-chess keeps a value as written; the standard's escapes are \\ and \"
        tags = {name: re.sub(r'\\(["\\])', r"\1", value) for name, value in headers.items()}
        assert tags["Event"] == "line one line two"
        assert tags["Site"] == 'a\\b "c"'
        assert {tags["White"], tags["Black"]} == {'a "quoted"\\name', "two lines and more"}
        assert tags["Result"] in ("1-0", "0-1", "1/2-1/2") and "Termination" in tags
