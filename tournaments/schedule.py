"""The order of a match's games, fixed before the first game so a resumed match is the same.

cutechess's conventions: every round, each encounter (every pair of engines in a round robin;
the first engine against each other one in a gauntlet) plays `games` games. An encounter's two
engines swap colours after every game they play, and the next round goes on from there, so
with `-games 1` (or any odd count) over several rounds they still alternate. With `repeat`, a
game whose two engines played the previous game with colours the other way round shares its
opening (a game pair: the unit of pentanomial statistics), across rounds too; with more than two
engines a new encounter always starts a new opening, and a game left without its twin keeps its
opening alone. Without `repeat` every game takes the next opening. Games are numbered from 1 in
schedule order.

A round robin's encounters come in the order of Berger tables, as in cutechess: n - 1 sittings
(n, if odd, counts one more, a bye) in each of which every engine meets one other, so a match
stopped early has given every engine about as many games; and an encounter's first white is
chosen so that over a round each engine has White in half its encounters, give or take one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

TOURNAMENTS = ("round-robin", "gauntlet")


@dataclass(frozen=True)
class Slot:
    index: int
    round: int
    pair: int
    white_id: int
    black_id: int
    opening_index: int


def berger_encounters(engine_count: int) -> list[tuple[int, int]]:
    """Every pair of engines once, (first white, first black), sitting by sitting: the circle
    method, engine `fixed` staying while the others turn. In sitting r the turning engines i and
    j with i + j = 2r (mod turning) meet, and the one with i = r meets `fixed` (or sits out when
    `fixed` is the bye). White goes to the engine the other is at most half a turn ahead of,
    which gives each turning engine the same count; against `fixed` the colours alternate by
    sitting."""
    fixed = engine_count - 1 + engine_count % 2   # the bye, when the count is odd
    turning = fixed                               # engines 0 .. fixed - 1 turn; an odd count
    order: list[tuple[int, int]] = []
    for sitting in range(turning):
        if fixed < engine_count:
            order.append((fixed, sitting) if sitting % 2 else (sitting, fixed))
        for step in range(1, (turning + 1) // 2):
            a, b = (sitting - step) % turning, (sitting + step) % turning
            order.append((a, b) if (b - a) % turning <= turning // 2 else (b, a))
    return order


def encounters(engine_count: int, tournament: str) -> list[tuple[int, int]]:
    if tournament == "round-robin":
        return berger_encounters(engine_count)
    if tournament == "gauntlet":
        return [(0, b) for b in range(1, engine_count)]
    raise ValueError(f"unknown tournament '{tournament}' (use {', '.join(TOURNAMENTS)})")


def make_schedule(engine_count: int, games: int = 1, rounds: int = 1, repeat: bool = False,
                  tournament: str = "round-robin") -> list[Slot]:
    if engine_count < 2:
        raise ValueError("a match needs at least two engines")
    if games < 1 or rounds < 1:
        raise ValueError("-games and -rounds must be at least 1")
    slots: list[Slot] = []
    swapped: dict[tuple[int, int], bool] = {}  # an encounter's colours, kept across rounds
    opening = pair = 0
    waiting: Optional[tuple[int, int]] = None  # (white, black) of a pair's first game
    for round_number in range(1, rounds + 1):
        for encounter in encounters(engine_count, tournament):
            for _ in range(games):
                white, black = encounter[::-1] if swapped.get(encounter) else encounter
                swapped[encounter] = not swapped.get(encounter)
                if waiting == (black, white):  # the twin of the previous game
                    waiting = None
                    if not repeat:
                        opening += 1
                else:
                    pair += 1
                    opening += 1
                    waiting = (white, black)
                slots.append(Slot(len(slots) + 1, round_number, pair, white, black, opening - 1))
    return slots
