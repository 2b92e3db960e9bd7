"""The six public Connect Four test sets (Pascal Pons), 1000 lines of `<moves> <score>` each."""

from importlib.resources import files

TEST_SETS = {
    "End-Easy": "Test_L3_R1",
    "Middle-Easy": "Test_L2_R1",
    "Middle-Medium": "Test_L2_R2",
    "Begin-Easy": "Test_L1_R1",
    "Begin-Medium": "Test_L1_R2",
    "Begin-Hard": "Test_L1_R3",
}


def load(name: str, limit: int | None = None) -> list[tuple[str, int]]:
    """(moves, score) pairs of a test set, by name (`Begin-Hard`) or file name (`Test_L1_R3`)."""
    filename = TEST_SETS.get(name, name)
    if filename not in TEST_SETS.values():
        raise KeyError(f"unknown test set '{name}' (known: {', '.join(TEST_SETS)})")
    text = files(__name__).joinpath(filename).read_text()
    pairs = []
    for line in text.splitlines():
        if line.strip():
            moves, score = line.split()
            pairs.append((moves, int(score)))
    return pairs[:limit] if limit is not None else pairs
