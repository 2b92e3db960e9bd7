"""Engine-vs-engine matches: engines run as subprocesses over UCI, UGI or GTP; the referee is
the `engines` rules. `Match` is the entry point for scripts (and `mallard match` for shells)."""

from mallard.tournaments.match import Match, Reporter
from mallard.tournaments.players import EngineConfig
from mallard.tournaments.records import Adjudication, GameRecord, Opening
from mallard.tournaments.stats import PentaStats, Sprt, WdlStats
from mallard.tournaments.timecontrol import TimeControl

__all__ = ["Adjudication", "EngineConfig", "GameRecord", "Match", "Opening", "PentaStats",
           "Reporter", "Sprt", "TimeControl", "WdlStats"]
