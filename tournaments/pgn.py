"""PGN export of finished games, in the form cutechess writes and pyffish replays.

Tags: the seven-tag roster, then `Variant` (`duck`, `cfour`), `FEN`/`SetUp` when the game did
not start from the variant's start position, `PlyCount`, `TimeControl` (per side when the two
differ), `Termination`, and cutechess's `GameDuration`/`GameStartTime`. Movetext is the
variant's PGN notation (duck SAN `e4,d5`, Connect Four drops `P@d1`), each move followed by
`{score/depth time}` or `{book}` for opening moves, and the final comment is the reason. Lines
are wrapped at 79 characters; a game ends with a blank line.
"""

from __future__ import annotations

from mallard.engines import get_game
from mallard.tournaments.records import GameRecord

_RESULT_TOKENS = ("1-0", "0-1", "1/2-1/2", "*")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _wrap(tokens: list[str], width: int = 79) -> list[str]:
    lines, current = [], ""
    for token in tokens:
        if current and len(current) + 1 + len(token) > width:
            lines.append(current)
            current = token
        else:
            current = f"{current} {token}" if current else token
    if current:
        lines.append(current)
    return lines


def _default_start(record: GameRecord) -> str:
    job = record.job
    kwargs = {"width": job.board[0], "height": job.board[1]} if job.board else {}
    return get_game(job.variant, **kwargs).start_position().fen()


def game_pgn(record: GameRecord, event: str = "?", site: str = "?") -> str:
    job = record.job
    date = record.started_at[:10].replace("-", ".") if record.started_at else "????.??.??"
    tags = [("Event", event), ("Site", site), ("Date", date), ("Round", str(job.round)),
            ("White", record.white_name), ("Black", record.black_name),
            ("Result", record.result)]
    tags.append(("Variant", job.variant))
    start_fen = record.start_fen or _default_start(record)
    if start_fen != _default_start(record):
        tags += [("FEN", start_fen), ("SetUp", "1")]
    tags.append(("PlyCount", str(len(record.moves))))
    white_tc, black_tc = job.white.tc.pgn_tag(), job.black.tc.pgn_tag()
    if white_tc == black_tc:
        tags.append(("TimeControl", white_tc))
    else:
        tags += [("WhiteTimeControl", white_tc), ("BlackTimeControl", black_tc)]
    tags.append(("Termination", record.termination))
    if record.started_at:
        tags.append(("GameStartTime", record.started_at))
    seconds = record.duration_ms // 1000
    tags.append(("GameDuration", f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"))
    head = "\n".join(f'[{name} "{_escape(value)}"]' for name, value in tags)

    first_ply = _first_ply(start_fen)
    tokens = []
    for offset, move in enumerate(record.moves):
        ply = first_ply + offset
        if ply % 2 == 0:
            tokens.append(f"{ply // 2 + 1}.")
        elif offset == 0:
            tokens.append(f"{ply // 2 + 1}...")
        tokens.append(move.san)
        comment = move.comment()
        if comment:
            tokens.append("{" + comment + "}")
    if record.reason:
        tokens.append("{" + record.reason.replace("}", ")") + "}")
    tokens.append(record.result if record.result in _RESULT_TOKENS else "*")
    return head + "\n\n" + "\n".join(_wrap(tokens)) + "\n\n"


def _first_ply(fen: str) -> int:
    """The ply number of the FEN's side to move (0 = White's first move), from its fields."""
    fields = fen.split()
    black = len(fields) > 1 and fields[1] == "b"
    try:
        fullmove = int(fields[5]) if len(fields) > 5 else 1
    except ValueError:
        fullmove = 1
    return 2 * (max(1, fullmove) - 1) + (1 if black else 0)
