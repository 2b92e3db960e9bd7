"""PGN: the export of finished games, in the form cutechess writes and pyffish replays, and the
one reader of PGN games (the match runner's `-openings format=pgn`, the board's PGN import).

Export. Tags: the seven-tag roster, then `Variant` (`duck`, `cfour`), `FEN`/`SetUp` when the
game did not start from the variant's start position, `PlyCount`, `TimeControl` (per side when
the two differ), `Termination`, and cutechess's `GameDuration`/`GameStartTime`; in a value `\\`
and `"` are escaped and a control character (a newline in `-event`) is a space. Movetext is the
variant's PGN notation (duck SAN `e4,d5`, Connect Four drops `P@d1`), each move followed by
`{score/depth time}` or `{book}` for opening moves, and the final comment is the reason. Lines
are wrapped at 79 characters; a game ends with a blank line.

Import (`read_games`), as the PGN standard's import format reads: tag pairs `[Name "value"]`
(`\\` and `\"` escaped in the value), then movetext, where comments (`{...}` up to the first
`}`, `;` to the end of the line), variations `( ... )` (nested, skipped with everything in
them), NAGs `$n`, move numbers (`12.`, `12...`, also glued to the move: `12.e4`), the move
suffixes `!` and `?`, and a line starting with `%` (an escape) are left out. A game ends at its
result (`1-0`, `0-1`, `1/2-1/2`, `*`), at the next game's tags, or with the text. The reader is
one pass over a tokenizing regular expression and a depth counter: its time is linear in the
text, however deep the variations nest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from mallard.engines import get_game
from mallard.tournaments.records import GameRecord

_RESULT_TOKENS = ("1-0", "0-1", "1/2-1/2", "*")


# The PGN standard allows no control characters in a tag value (a newline would end the tag)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _escape(value: str) -> str:
    """A tag value as the PGN standard writes it: `\\` and `\"` escaped, each control character
    (a newline, a tab) a space."""
    return _CONTROL.sub(" ", value).replace("\\", "\\\\").replace('"', '\\"')


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
    tags.append(("GameDuration",
                 f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"))
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
    reason = str(record.reason)
    if reason:
        tokens.append("{" + reason.replace("}", ")") + "}")
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


# One token of PGN text; the first alternative that matches at a place wins, which is the
# standard's reading: a `{` inside a `;` comment or a `;` inside braces is comment text.
_TOKEN = re.compile(r"""
      (?P<escape>^%[^\n]*)              # an escape line: `%` in its first column
    | (?P<comment>\{[^}]*\}?|;[^\n]*)   # an unclosed brace comment runs to the end
    | (?P<string>"(?P<text>(?:[^"\\]|\\.)*)"?)
    | (?P<nag>\$\d*)
    | (?P<open>\()
    | (?P<close>\))
    | (?P<tag_open>\[)
    | (?P<tag_close>\])
    | (?P<symbol>[^\s{}();\[\]"$]+)
""", re.MULTILINE | re.VERBOSE)
_MOVE = re.compile(r"(?:\d+\.+)?(.*?)[!?]*")  # the move of a symbol: no number, no suffix
_ESCAPED = re.compile(r"\\(.)")


@dataclass
class PgnGame:
    """A game read from PGN: its tags, its main line's move texts and the line it starts on."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[str] = field(default_factory=list)
    line: int = 1  # 1-based


def read_games(text: str) -> list[PgnGame]:
    """The games of a PGN text, in order (see the module docstring); a game has tags or moves."""
    games: list[PgnGame] = []
    game = PgnGame()
    depth = 0  # how many variations the reader is in
    tag: Optional[list[str]] = None  # the tag pair being read (its name and value), if any
    line, line_offset = 1, 0  # the line number at offset `line_offset` of the text

    def start_here(offset: int) -> None:
        nonlocal line, line_offset
        line += text.count("\n", line_offset, offset)
        line_offset = offset
        game.line = line

    def finish() -> None:
        nonlocal game
        if game.tags or game.moves:
            games.append(game)
        game = PgnGame()

    for token in _TOKEN.finditer(text):
        kind = token.lastgroup
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
        elif depth or kind in ("escape", "comment", "nag"):
            continue
        elif kind == "tag_open":
            if game.moves:
                finish()
            if not game.tags:
                start_here(token.start())
            tag = []
        elif kind == "tag_close":
            if tag is not None and len(tag) == 2:
                game.tags[tag[0]] = tag[1]
            tag = None
        elif tag is not None:
            tag.append(_ESCAPED.sub(r"\1", token.group("text")) if kind == "string"
                       else token.group())
        elif kind == "symbol":
            symbol = token.group()
            if symbol in _RESULT_TOKENS:
                finish()
                continue
            move = _MOVE.fullmatch(symbol).group(1)
            if move:
                if not game.tags and not game.moves:
                    start_here(token.start())
                game.moves.append(move)
    finish()
    return games
