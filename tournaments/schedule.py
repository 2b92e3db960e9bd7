"""The order of a match's games, fixed before the first game so a resumed match is the same.

cutechess's conventions: every round, each encounter (every pair of engines in a round robin;
the first engine against each other one in a gauntlet) plays `games` games, the two engines
alternating colours. With `repeat`, two consecutive games of an encounter share an opening with
colours swapped (a game pair: the unit of pentanomial statistics); without it every game takes
the next opening. Games are numbered from 1 in schedule order.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    opening = pair = 0
    for round_number in range(1, rounds + 1):
        for first, second in encounters(engine_count, tournament):
            for game in range(games):
                white, black = (first, second) if game % 2 == 0 else (second, first)
                if game % 2 == 0:
                    pair += 1
                slots.append(Slot(len(slots) + 1, round_number, pair, white, black, opening))
                if not repeat or game % 2 == 1 or game == games - 1:
                    opening += 1
    return slots
