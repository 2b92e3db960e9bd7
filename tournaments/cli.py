"""`mallard match`: cutechess-cli's command line over `mallard.tournaments.Match`, and its output
(`mallard.protocol.cli` hands every argument after `match` to `main` here).

Arguments follow cutechess-cli (`-engine cmd=... name=... proto=uci tc=40/60+0.6 option.Hash=64`,
`-each`, `-games`, `-rounds`, `-repeat`, `-openings`, `-draw`, `-resign`, `-sprt`, ...) with our
additions: `-db`, `-adjudicate solved`, `-report penta=true`, `-json`, `-tournament gauntlet`,
`-cluster` (the games on a Dask cluster; the database, PGN and output stay here).
Output is cutechess's lines (`Started game`, `Finished game`, `Score of`, `Elo difference`,
`SPRT: llr`) and fastchess's pentanomial lines (`Ptnml(0-2)` and `nElo` whenever game pairs were
played, `LLR:` with `-report penta=true`); on a terminal a live progress bar (rich) sits
under them. This module only parses and prints; the match itself is `mallard.tournaments.match`.

Invariants: a bad argument or openings file (`UsageError`, `OpeningError`) is found before any
engine starts and is one `mallard match: ...` line on stderr, exit status 2; `-h`/`-help`/`--help`
anywhere prints HELP to stdout with status 0; the status is 1 when the match stopped on a failure
(not an SPRT decision) or the cluster went away (one `mallard match: the cluster at ...` line).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import shlex
import signal
import sys
import threading
from typing import Callable, Optional, TextIO

from mallard.engines import DEFAULT_GAMES, GAMES, find_game, get_game
from mallard.engines.base import MESSAGE_LIMIT, GameError, clip
from mallard.engines.processes import EXIT_INTERRUPTED, EXIT_TERMINATED
from mallard.tournaments.cluster import (
    ClusterError,
    ClusterUnreachable,
    distributed_module,
    parse_address,
)
from mallard.tournaments.match import Match
from mallard.tournaments.openings import OpeningError, read_openings
from mallard.tournaments.players import EngineConfig
from mallard.tournaments.records import Adjudication
from mallard.tournaments.stats import Sprt
from mallard.tournaments.storage import StorageError
from mallard.tournaments.timecontrol import MAX_TIME_MS, TimeControl

_DEFAULT_VARIANT = DEFAULT_GAMES["uci"]
_VARIANTS = [game.name for game in GAMES]  # the registry's order

USAGE = f"""usage: mallard match -variant {'|'.join(_VARIANTS)}
    -engine cmd=PATH [arg=X ...] [name=N] [proto=uci|ugi|gtp] [tc=40/60+0.6 | st=1 | depth=N |
            nodes=N] [timemargin=MS] [option.NAME=VALUE ...] [restart=on|off] [dir=D] ...
    -engine ... [-engine ...] [-each KEY=VALUE ...] [-tournament round-robin|gauntlet]
    [-games N] [-rounds N] [-repeat] [-concurrency N] [-srand N]
    [-openings file=F [format=epd|fen|moves|pgn] [order=sequential|random] [plies=N]
               [start=N] [policy=default]]
    [-draw movenumber=N movecount=N score=CP] [-resign movecount=N score=CP [twosided=true]]
    [-maxmoves N] [-adjudicate solved [nodes=N]]
    [-sprt elo0=E0 elo1=E1 [alpha=A] [beta=B] [model=bayesian|logistic|normalized]]
    [-report penta=true] [-pgnout FILE] [-db FILE.sqlite] [-recover] [-ratinginterval N]
    [-event NAME] [-site NAME] [-json FILE|-] [-startuptimeout SECONDS] [-stalltimeout SECONDS]
    [-progress on|off] [-cluster tcp://HOST:PORT|local[:N]]
"""

HELP = USAGE + f"""
Plays games between engine processes and prints cutechess-cli's lines.

engine settings (after -engine, or for every engine after -each):
  cmd=PATH           the engine's command (split like a shell; required)
  arg=X              one more argument for the command (repeatable)
  name=N             its name in the output (default: the command's file name)
  proto=P            uci (default), ugi or gtp
  tc=T               time control: moves/seconds+increment (40/60+0.6), seconds+increment (10+0.1),
                     or inf
  st=S               a fixed time per move, in seconds
  depth=N, nodes=N   a search limit instead of (or besides) a clock
  timemargin=MS      how far a clock may be overrun before the game is lost (default 0)
  option.NAME=VALUE  an engine option (setoption / GTP has none); mallard's developer options
                     (the duck search's switches) need MALLARD_DEV_OPTIONS=1 in the environment
  restart=on|off     start a new process for every game (default off)
  dir=D              the engine's working directory

match options:
  -variant V         {', '.join(name + (' (default)' if name == _DEFAULT_VARIANT else '')
                                   for name in _VARIANTS)}
  -tournament T      round-robin (default) or gauntlet (the first engine against each other)
  -games N           games per pairing and round (default 1); -rounds N repeats the schedule
  -repeat            play each opening twice, colours swapped
  -concurrency N     games played at once (default 1; on a cluster: its worker threads)
  -srand N           seed of the random opening order
  -openings ...      file=F, format=epd|fen|moves|pgn (default epd), order=sequential|random,
                     plies=N (cut each opening), start=N (begin with the N-th opening; default
                     1), policy=default (cutechess's encounter and round are not supported)
  -draw ...          adjudicate a draw after movenumber=N when movecount=N moves in a row are
                     scored within score=CP by both engines
  -resign ...        adjudicate a loss after movecount=N moves at or below -score=CP
                     (twosided=true: both engines must agree)
  -maxmoves N        a draw after N moves
  -adjudicate solved [nodes=N]  end a game the solver proves (default 2,000,000 nodes)
  -sprt ...          elo0=E0 elo1=E1 alpha=A beta=B (0.05 each) model=bayesian (default;
                     normalized with -report penta=true), logistic or normalized: stop when
                     the test decides
  -report penta=true the SPRT counts game pairs (pentanomial) and adds fastchess's LLR line;
                     needs pairs (-repeat, two engines, two games or more)
  -pgnout FILE       append the games as PGN
  -db FILE           keep every finished game in SQLite; the same command again resumes
                     (with a larger -games, it lengthens the match)
  -recover           after a crash or failed start, restart the engine and go on
  -ratinginterval N  the Elo line (and Ptnml, nElo and SPRT lines) every N games (default 10;
                     0: only at the end); the Score line follows every game
  -event, -site      PGN tags
  -json FILE|-       a JSON summary at the end
  -startuptimeout S  seconds to wait for uciok/ugiok/GTP (default 20)
  -stalltimeout S    seconds a reply may take when no clock limits it (default 600)
  -progress on|off   the live progress bar (default: on when stdout is a terminal)
  -cluster ADDRESS   play the games on a Dask cluster: tcp://HOST:PORT (a running scheduler)
                     or local[:N] (N worker processes on this machine); needs
                     pip install 'mallard[cluster]'
  -h, -help, --help  this help
"""

ENGINE_KEYS = ("cmd", "arg", "name", "proto", "tc", "st", "depth", "nodes", "timemargin",
               "restart", "dir")
# the KEY=VALUE settings of each option that takes them (-engine's are ENGINE_KEYS)
SETTING_KEYS = {
    "-openings": ("file=", "format=", "order=", "plies=", "start=", "policy="),
    "-draw": ("movenumber=", "movecount=", "score="),
    "-resign": ("movecount=", "score=", "twosided="),
    "-sprt": ("elo0=", "elo1=", "alpha=", "beta=", "model="),
    "-report": ("penta=",),
    "-adjudicate": ("solved", "nodes="),
}


class UsageError(ValueError):
    """A bad argument: one line on stderr. `grammar` marks a command line that is not a match
    command at all (an unknown option, too few engines): as argparse does for the other
    subcommands, the usage comes first and the line says `error:`."""

    def __init__(self, message: str, grammar: bool = False):
        super().__init__(message)
        self.grammar = grammar


def _pairs(tokens: list[str], option: str) -> list[tuple[str, str]]:
    pairs = []
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            if option == "-adjudicate":
                pairs.append((token, ""))
                continue
            raise UsageError(f"{option}: expected KEY=VALUE, got '{token}'")
        pairs.append((key, value))
    return pairs


def _settings(option: str, tokens: list[str]) -> dict[str, str]:
    """The KEY=VALUE settings of `option`, each key one it takes (SETTING_KEYS)."""
    pairs = _pairs(tokens, option)
    known = SETTING_KEYS[option]
    for key, value in pairs:
        if key in known and value:
            raise UsageError(f"{option}: {key} takes no value")
        if key + "=" not in known and key not in known:
            raise UsageError(f"{option}: unknown setting '{key}' (it takes {', '.join(known)})")
    return dict(pairs)


def _choice(what: str, text: str, choices: tuple[str, ...]) -> str:
    if text not in choices:
        raise UsageError(f"{what} takes {' or '.join(choices)}, not '{text}'")
    return text


def _boolean(what: str, text: str) -> bool:
    """cutechess's true/false (or -progress's on/off is read with _choice)."""
    return _choice(what, text, ("true", "false")) == "true"


def split_options(argv: list[str]) -> list[tuple[str, list[str]]]:
    """[(option, its arguments)] — cutechess's grammar: an option starts with '-'."""
    groups: list[tuple[str, list[str]]] = []
    for token in argv:
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            groups.append((token, []))
        elif not groups:
            raise UsageError(f"unexpected '{token}' before any option")
        else:
            groups[-1][1].append(token)
    return groups


def _is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _int(option: str, text: str, minimum: int = 0, maximum: Optional[int] = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{option}: '{text}' is not a whole number") from None
    if value < minimum:
        raise UsageError(f"{option}: {value} is below {minimum}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{option}: {value} is above {maximum}")
    return value


def _require(option: str, given: dict, keys: tuple[str, ...]) -> None:
    missing = [key for key in keys if key not in given]
    if missing:
        raise UsageError(f"{option} needs {', '.join(key + '=' for key in missing)}")


def _seconds(option: str, text: str) -> int:
    """A number of seconds as milliseconds: from 1 ms to a year (MAX_TIME_MS)."""
    try:
        milliseconds = round(float(text) * 1000)
    except (ValueError, OverflowError):  # text, nan; inf
        milliseconds = -1
    if not 1 <= milliseconds <= MAX_TIME_MS:
        raise UsageError(f"{option} takes a positive number of seconds, from 0.001 to "
                         f"{MAX_TIME_MS // 1000} (a year), not '{text}'")
    return milliseconds


def _writable(option: str, path: str) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK) or os.path.isdir(path):
        raise UsageError(f"{option}: cannot write '{path}'")
    return path


def _one(option: str, values: list[str]) -> str:
    if len(values) != 1:
        raise UsageError(f"{option} takes one value")
    return values[0]


def _engine_config(settings: list[tuple[str, str]], index: int):
    fields: dict[str, str] = {}
    arguments: list[str] = []
    options: dict[str, str] = {}
    for key, value in settings:
        if key.startswith("option."):
            options[key[len("option."):]] = value
        elif key == "arg":
            arguments.append(value)
        elif key in ENGINE_KEYS:
            fields[key] = value
        else:
            raise UsageError(f"-engine: unknown setting '{key}' "
                             f"(known: {', '.join(ENGINE_KEYS)}, option.NAME)")
    if not fields.get("cmd", "").strip():
        raise UsageError(f"engine {index + 1} has no cmd=")
    try:
        command = shlex.split(fields["cmd"]) + arguments
    except ValueError as error:
        raise UsageError(f"engine {index + 1}: cmd={fields['cmd']}: {error}") from None
    name = fields.get("name") or os.path.basename(command[0])
    if "tc" in fields and "st" in fields:
        raise UsageError(f"engine '{name}': give tc= or st=, not both")
    try:
        tc = TimeControl.from_settings(tc=fields.get("tc"), st=fields.get("st"),
                                       depth=fields.get("depth"), nodes=fields.get("nodes"))
    except ValueError as error:
        raise UsageError(f"engine '{name}': {error}") from None
    restart = fields.get("restart", "off")
    if restart not in ("on", "off"):
        raise UsageError(f"engine '{name}': restart= takes on or off")
    try:
        return EngineConfig(name=name, command=command, protocol=fields.get("proto", "uci"),
                            options=options, tc=tc,
                            timemargin_ms=_int("timemargin", fields.get("timemargin", "0"),
                                               maximum=MAX_TIME_MS),
                            restart=restart == "on", workdir=fields.get("dir"))
    except ValueError as error:
        raise UsageError(str(error)) from None


@dataclasses.dataclass
class _Arguments:
    """What the command line said, option by option, before the match is assembled."""

    variant: str = _DEFAULT_VARIANT
    engines: list = dataclasses.field(default_factory=list)  # each -engine's (key, value) pairs
    each: list = dataclasses.field(default_factory=list)
    match: dict = dataclasses.field(default_factory=dict)  # Match keyword arguments
    extras: dict = dataclasses.field(default_factory=lambda: {
        "json": None, "ratinginterval": 10, "progress": None})
    openings: Optional[dict] = None
    draw: dict = dataclasses.field(default_factory=dict)
    resign: dict = dataclasses.field(default_factory=dict)
    adjudication: dict = dataclasses.field(default_factory=dict)
    sprt: Optional[dict] = None
    penta: bool = False


def _repeat(args: _Arguments, option: str, values: list[str]) -> None:
    if values and values != ["2"]:
        raise UsageError("-repeat: only pairs (2) are supported")
    args.match["repeat"] = True


def _recover(args: _Arguments, option: str, values: list[str]) -> None:
    if values:
        raise UsageError(f"{option} takes no value")
    args.match["recover"] = True


def _variant(args: _Arguments, option: str, values: list[str]) -> None:
    try:
        args.variant = find_game(_one(option, values)).name
    except GameError as error:
        raise UsageError(f"-variant: {error}") from None


def _adjudicate(args: _Arguments, option: str, values: list[str]) -> None:
    spec = _settings(option, values)
    if "solved" not in spec or spec["solved"]:
        raise UsageError("-adjudicate takes solved [nodes=N]")
    args.adjudication["solved"] = True
    if "nodes" in spec:
        args.adjudication["solve_nodes"] = _int("-adjudicate nodes", spec["nodes"], 1)


def _pgn_out(args: _Arguments, option: str, values: list[str]) -> None:
    if not values:
        raise UsageError("-pgnout needs a file")
    args.match["pgn_out"] = _writable(option, values[0])


def _json(args: _Arguments, option: str, values: list[str]) -> None:
    args.extras["json"] = _one(option, values)
    if args.extras["json"] != "-":
        _writable(option, args.extras["json"])


def _match_setting(key: str, read: Callable[[str, list[str]], object]):
    """A reader that stores read(option, values) as the Match keyword argument `key`."""
    return lambda args, option, values: args.match.__setitem__(key, read(option, values))


def _counted(minimum: int = 0):
    return lambda option, values: _int(option, _one(option, values), minimum)


def _timeout(option: str, values: list[str]) -> int:
    return _seconds(option, _one(option, values))


def _cluster(option: str, values: list[str]) -> str:
    address = _one(option, values)
    try:
        parse_address(address)
        distributed_module()
    except (ValueError, ClusterError) as error:
        raise UsageError(f"{option}: {error}") from None
    return address


def _pairs_of(field: str):
    return lambda args, option, values: setattr(args, field, _settings(option, values))


def _report(args: _Arguments, option: str, values: list[str]) -> None:
    args.penta = _boolean("-report penta=", _settings(option, values).get("penta", "false"))


# option -> reader(arguments, option, its values): the grammar of `mallard match`
_OPTION_READERS: dict[str, Callable[[_Arguments, str, list[str]], None]] = {
    "-repeat": _repeat,
    "-recover": _recover,
    "-engine": lambda args, option, values: args.engines.append(_pairs(values, option)),
    "-each": lambda args, option, values: args.each.extend(_pairs(values, option)),
    "-variant": _variant,
    "-games": _match_setting("games", _counted(1)),
    "-rounds": _match_setting("rounds", _counted(1)),
    "-concurrency": _match_setting("concurrency", _counted(1)),
    "-tournament": _match_setting("tournament", _one),
    "-srand": _match_setting("seed", _counted()),
    "-openings": _pairs_of("openings"),
    "-draw": _pairs_of("draw"),
    "-resign": _pairs_of("resign"),
    "-sprt": _pairs_of("sprt"),
    "-maxmoves": lambda args, option, values: args.adjudication.__setitem__(
        "maxmoves", _int(option, _one(option, values), 1)),
    "-adjudicate": _adjudicate,
    "-report": _report,
    "-pgnout": _pgn_out,
    "-db": _match_setting("db", lambda option, values: _writable(option, _one(option, values))),
    "-event": _match_setting("event", lambda option, values: " ".join(values)),
    "-site": _match_setting("site", lambda option, values: " ".join(values)),
    "-json": _json,
    "-ratinginterval": lambda args, option, values: args.extras.__setitem__(
        "ratinginterval", _int(option, _one(option, values))),
    "-progress": lambda args, option, values: args.extras.__setitem__(
        "progress", _choice(option, _one(option, values), ("on", "off")) == "on"),
    "-startuptimeout": _match_setting("startup_timeout_ms", _timeout),
    "-stalltimeout": _match_setting("stall_timeout_ms", _timeout),
    "-cluster": _match_setting("cluster", _cluster),
}


def build_match(argv: list[str], reporter=None):
    """A configured `Match` from cutechess-style arguments, and the CLI-only settings."""
    args = _Arguments()
    for option, values in split_options(argv):
        reader = _OPTION_READERS.get(option)
        if reader is None:
            raise UsageError(f"unknown option '{option}'", grammar=True)
        reader(args, option, values)
    if len(args.engines) < 2:
        raise UsageError("a match needs at least two -engine options", grammar=True)
    engines = [_engine_config(args.each + settings, index)
               for index, settings in enumerate(args.engines)]
    openings = _openings(args, get_game(args.variant))
    _adjudication_limits(args)
    sprt = _sprt(args, len(engines))
    try:
        match = Match(variant=args.variant, engines=engines, openings=openings,
                      adjudication=Adjudication(**args.adjudication), sprt=sprt,
                      sprt_pentanomial=args.penta, **args.match)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if reporter is not None:
        match.reporter = reporter
    return match, args.extras


def _openings(args: _Arguments, game) -> list:
    spec = args.openings
    if spec is None:
        return []
    if "file" not in spec:
        raise UsageError("-openings needs file=")
    plies = _int("-openings plies", spec["plies"]) if "plies" in spec else None
    args.match["opening_order"] = _choice("-openings order=", spec.get("order", "sequential"),
                                          ("sequential", "random"))
    # cutechess's start=N: the first opening played is the N-th (of the shuffled order when
    # random), counting on from there and wrapping
    args.match["opening_start"] = _int("-openings start", spec.get("start", "1"), 1) - 1
    if spec.get("policy", "default") != "default":
        raise UsageError(f"-openings policy={spec['policy']} is not supported: only "
                         "policy=default (a new opening after -repeat's two games, and for each "
                         "new encounter)")
    return read_openings(spec["file"], game, spec.get("format", "epd"), plies)


def _adjudication_limits(args: _Arguments) -> None:
    """-draw and -resign into the adjudication settings."""
    draw, resign = args.draw, args.resign
    if draw:
        _require("-draw", draw, ("movenumber", "movecount", "score"))
        args.adjudication.update(
            draw_movenumber=_int("-draw movenumber", draw["movenumber"], 1),
            draw_movecount=_int("-draw movecount", draw["movecount"], 1),
            draw_score=_int("-draw score", draw["score"]))
    if resign:
        _require("-resign", resign, ("movecount", "score"))
        args.adjudication.update(
            resign_movecount=_int("-resign movecount", resign["movecount"], 1),
            resign_score=_int("-resign score", resign["score"]),
            resign_twosided=_boolean("-resign twosided=", resign.get("twosided", "false")))


def _sprt(args: _Arguments, engine_count: int) -> Optional[Sprt]:
    spec = args.sprt
    if spec is None:
        return None
    try:
        sprt = Sprt(float(spec["elo0"]), float(spec["elo1"]),
                    float(spec.get("alpha", 0.05)), float(spec.get("beta", 0.05)),
                    spec.get("model", "normalized" if args.penta else "bayesian"))
    except KeyError as missing:
        raise UsageError(f"-sprt needs {missing.args[0]}=") from None
    except ValueError as error:
        raise UsageError(f"-sprt: {error}") from None
    if args.penta and sprt.model == "bayesian":
        raise UsageError("-sprt model=bayesian has no pentanomial form; "
                         "use model=logistic or model=normalized with -report penta=true")
    if engine_count != 2:
        raise UsageError("-sprt needs exactly two engines")
    return sprt


class CutechessReporter:
    """cutechess-cli's lines; fastchess's pentanomial lines when game pairs are played."""

    def __init__(self, out: TextIO, rating_interval: int = 10, progress=None):
        self.out = out
        self.rating_interval = rating_interval
        self.progress = progress
        self._said: set[str] = set()  # messages printed, so the stop reason is not said twice
        self._scored = False  # a game's score line has been printed

    def _print(self, text: str) -> None:
        if self.progress is not None:
            self.progress.print(text)
        else:
            self.out.write(text + "\n")
            self.out.flush()

    def game_started(self, job, total: int) -> None:
        self._print(f"Started game {job.index} of {total} ({job.white.name} vs {job.black.name})")

    def game_finished(self, record, match) -> None:
        self._print(f"Finished game {record.index} ({record.job.white.name} vs "
                    f"{record.job.black.name}): {record.result} {{{record.reason}}}")
        if len(match.engines) == 2:
            first, second = match.engines[0].name, match.engines[1].name
            self._print(match.wdl.cutechess_lines(first, second)[0])
            self._scored = True
        if self.progress is not None:
            self.progress.advance(match)
        if self.rating_interval and len(match.records) % self.rating_interval == 0:
            self.print_ranking(match)

    def message(self, text: str) -> None:
        self._said.add(text)
        self._print(text)

    def match_finished(self, match) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None
        if not self.rating_interval or len(match.records) % self.rating_interval:
            self.print_ranking(match)
        if match.cluster_status is not None:
            self._print(cluster_line(match))
        reason = match.stop_reason
        if reason and not reason.startswith("SPRT") and \
                not any(reason in text for text in self._said):
            self._print(f"Match stopped: {reason}")
        self._print("Finished match")

    def print_ranking(self, match) -> None:
        # with two engines the score line has just been printed by game_finished
        for line in ranking_lines(match, score_line=not self._scored):
            self._print(line)


def cluster_line(match) -> str:
    """`Cluster tcp://...: 2 workers, 2 threads, 41.3 games/min, 1 retry (game 5)`."""
    status = match.cluster_status
    rate = match.games_per_minute()
    retried = sorted(match.retries)
    retries = sum(match.retries.values())
    text = (f"Cluster {status['address']}: {status['workers']} workers, {status['threads']} "
            f"threads, {f'{rate:.1f}' if rate else '-'} games/min, {retries} "
            f"{'retry' if retries == 1 else 'retries'}")
    if retried:
        games = ", ".join(str(index) for index in retried)
        text += (f" (game{'s' if len(retried) > 1 else ''} {games} played again from the start "
                 "after a worker was lost)")
    return text


def _cluster_field(match) -> str:
    status = match.cluster_status
    if status is None:
        return ""
    rate = match.games_per_minute()
    return f"{status['workers']} workers  {f'{rate:.1f}' if rate else '-'} games/min"


def ranking_lines(match, score_line: bool = True) -> list[str]:
    lines = []
    if len(match.engines) == 2:
        first, second = match.engines[0].name, match.engines[1].name
        score, elo_line = match.wdl.cutechess_lines(first, second)
        lines += [score, elo_line] if score_line else [elo_line]
        if match.penta.pairs:
            penta = match.penta
            lines.append(penta.fastchess_line())
            lines.append(f"nElo: {_figure(penta.nelo(), 2)} +/- "
                         f"{_figure(penta.nelo_error_margin(), 2)} ({penta.pairs} pairs)")
        llr = match.sprt_llr()
        if llr is not None:
            lines.append(match.sprt.cutechess_line(llr))
            if match.sprt_pentanomial:
                lines.append(match.sprt.fastchess_line(llr))
        return lines
    lines.append(f"{'Rank':>4} {'Name':<24} {'Elo':>7} {'+/-':>7} {'Games':>7} {'Score':>7} "
                 f"{'Draw':>7}")
    ranked = sorted(match.standings, key=lambda s: -(s.wdl.score if s.wdl.games else 0))
    for rank, standing in enumerate(ranked, start=1):
        wdl = standing.wdl
        if not wdl.games:
            lines.append(f"{rank:>4} {standing.name:<24} {'-':>7} {'-':>7} {0:>7}")
            continue
        lines.append(f"{rank:>4} {standing.name:<24} {_figure(wdl.elo()):>7} "
                     f"{_figure(wdl.elo_error_margin()):>7} {wdl.games:>7} "
                     f"{wdl.score * 100:>6.1f}% {wdl.draw_ratio * 100:>6.1f}%")
    return lines


def _figure(value: float, digits: int = 0) -> str:
    """A statistic as our own lines print it: `n/a` where it has no value (no games, every
    pair drawn 1-1), `inf`/`-inf` where it is unbounded. (The cutechess-style Elo line keeps
    cutechess's own `nan`, which the tools that read it expect.)"""
    if math.isnan(value):
        return "n/a"
    if not math.isfinite(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # never "-0"


class RichProgress:
    """A live bar under the printed lines (only on a terminal); on a cluster also the workers
    connected and the games per minute."""

    def __init__(self, total: int, done: int):
        # rich is loaded only when a bar is drawn; without it main prints the lines alone
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=False)
        self.bar = Progress(TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[score]}"), TimeElapsedColumn(),
                            TextColumn("{task.fields[cluster]}"),
                            console=self.console, transient=True)
        self.task = self.bar.add_task("games", total=total, completed=done, score="",
                                      cluster="")
        self.bar.start()

    def print(self, text: str) -> None:
        self.bar.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def advance(self, match) -> None:
        score = ""
        if len(match.engines) == 2 and match.wdl.games:
            score = f"{match.wdl.wins}-{match.wdl.losses}-{match.wdl.draws}"
        self.bar.update(self.task, completed=len(match.records), score=score,
                        cluster=_cluster_field(match))

    def close(self) -> None:
        self.bar.stop()


def main(argv: list[str], out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout  # looked up now: callers may have redirected it
    if any(token in ("-h", "-help", "--help") for token in argv):
        out.write(HELP)
        return 0
    try:
        match, extras = build_match(argv)
    except (UsageError, OpeningError) as error:
        if getattr(error, "grammar", False):
            print(USAGE + f"mallard match: error: {clip(error, MESSAGE_LIMIT)}", end="\n",
                  file=sys.stderr)
        else:
            print(f"mallard match: {clip(error, MESSAGE_LIMIT)}", file=sys.stderr)
        return 2
    if match.cluster is not None:
        _quiet_dask()
    use_progress = extras["progress"] if extras["progress"] is not None else out.isatty()
    progress = None
    reporter = CutechessReporter(out, extras["ratinginterval"])
    match.reporter = reporter
    if use_progress:
        try:
            progress = RichProgress(match.total_games, 0)
            reporter.progress = progress
        except ImportError:
            progress = None
    try:
        with _sigterm_as_interrupt():
            match.run()
    except ClusterUnreachable as error:  # nothing ran: no game to keep
        if progress is not None:
            progress.close()
        print(f"mallard match: {clip(error, MESSAGE_LIMIT)}", file=sys.stderr)
        return 2
    except ClusterError as error:  # before OSError, which it is: the match ran and stopped
        if progress is not None:
            progress.close()
        print(f"mallard match: {error}"
              + (f"; finished games are kept in '{match.db}'" if match.db else ""),
              file=sys.stderr)
        return 1
    except (StorageError, OSError) as error:
        if progress is not None:
            progress.close()
        print(f"mallard match: {clip(error, MESSAGE_LIMIT)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:
        if progress is not None:
            progress.close()
        print("mallard match: " + ("terminated" if isinstance(interrupt, Terminated)
                                   else "interrupted") + "; finished games are kept"
              + (f" in '{match.db}' (run the same command to resume)" if match.db else ""),
              file=sys.stderr)
        return EXIT_TERMINATED if isinstance(interrupt, Terminated) else EXIT_INTERRUPTED
    if extras["json"]:
        text = match.summary_json()
        if extras["json"] == "-":
            out.write(text + "\n")
        else:
            with open(extras["json"], "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
    failed = match.stop_reason is not None and not match.stop_reason.startswith("SPRT")
    return 1 if failed else 0


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: the match ends as at Ctrl-C (its engines killed, its games kept)."""


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """While the match runs, SIGTERM (a service manager, `kill`, a cluster's job) raises
    `Terminated` in the main thread, so the running games' engines are killed and the
    finished games kept, as at Ctrl-C, instead of the process ending where it stands. Once
    either has come, SIGTERM is ignored, so that the cleanup runs whole."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second must not cut the cleanup
        raise Terminated()

    def interrupt(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # nor may a SIGTERM cut Ctrl-C's cleanup
        raise KeyboardInterrupt()

    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:  # whoever started us chose to ignore it
        yield
        return
    previous_interrupt = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGTERM, terminate)
    if previous_interrupt is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:  # SIGINT's first: its handler, while still ours, would set SIGTERM again
        if previous_interrupt is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_interrupt)
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _quiet_dask() -> None:
    """Dask's own log lines (reconnect attempts, tracebacks of a lost scheduler) would bury the
    one line the match says about its cluster."""
    for name in ["distributed", "tornado", *logging.root.manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
