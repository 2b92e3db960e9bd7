"""The order of a match's games, fixed before the first game so a resumed match is the same.

cutechess's conventions: every round, each encounter (every pair of engines in a round robin;
the first engine against each other one in a gauntlet) plays `games` games. An encounter's two
engines swap colours after every game they play, and the next round goes on from there, so
with `-games 1` (or any odd count) over several rounds they still alternate. With `repeat`, a
game whose two engines played the previous game with colours the other way round shares its
opening (a game pair: the unit of pentanomial statistics), across rounds too; with more than two
engines a new encounter always starts a new opening, and a game left without its twin keeps its
opening alone. Without `repeat` every game takes the next opening. Games are numbered from 1 in
schedule order. (cutechess orders a round robin's encounters by Berger tables; here they come
in the order of the engines: 1-2, 1-3, ..., 2-3, ...)
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


def encounters(engine_count: int, tournament: str) -> list[tuple[int, int]]:
    if tournament == "round-robin":
        return [(a, b) for a in range(engine_count) for b in range(a + 1, engine_count)]
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
