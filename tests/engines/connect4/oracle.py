"""An independent Connect Four oracle for tests: plain memoised minimax over a list-of-columns
board, with its own four-in-a-row check. Scores use Pons' convention."""

from functools import lru_cache


def _wins(columns, width, height, column, player):
    row = len(columns[column]) - 1

    def owner(c, r):
        if 0 <= c < width and 0 <= r < len(columns[c]):
            return columns[c][r]
        return None

    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        count = 1
        for sign in (1, -1):
            c, r = column + sign * dc, row + sign * dr
            while owner(c, r) == player:
                count += 1
                c, r = c + sign * dc, r + sign * dr
        if count >= 4:
            return True
    return False


@lru_cache(maxsize=None)
def minimax(columns, width, height):
    """Score for the side to move of a non-terminal position given as a tuple of column tuples."""
    moves = sum(len(c) for c in columns)
    if moves == width * height:
        return 0
    player = moves & 1
    best = None
    for column in range(width):
        if len(columns[column]) >= height:
            continue
        grown = list(columns)
        grown[column] = columns[column] + (player,)
        grown = tuple(grown)
        if _wins(grown, width, height, column, player):
            score = (width * height + 1 - moves) // 2
        else:
            score = -minimax(grown, width, height)
        if best is None or score > best:
            best = score
    return best


def columns_of(sequence, width):
    """The column tuples after playing 0-based columns; None when a move is illegal or ends the
    game."""
    columns = [()] * width
    for i, column in enumerate(sequence):
        columns[column] = columns[column] + (i & 1,)
    return tuple(columns)


def move_scores(columns, width, height):
    """Score of each column (None when full), by the oracle."""
    moves = sum(len(c) for c in columns)
    player = moves & 1
    scores = []
    for column in range(width):
        if len(columns[column]) >= height:
            scores.append(None)
            continue
        grown = list(columns)
        grown[column] = columns[column] + (player,)
        grown = tuple(grown)
        if _wins(grown, width, height, column, player):
            scores.append((width * height + 1 - moves) // 2)
        else:
            scores.append(-minimax(grown, width, height))
    return scores
