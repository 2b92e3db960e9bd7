"""Engine-vs-engine matches: engines run as subprocesses over UCI, UGI or GTP; the referee is
the `engines` rules. `Match` is the entry point for scripts (and `mallard match` for shells)."""

from tournaments.match import Match, Reporter
from tournaments.players import EngineConfig
from tournaments.records import Adjudication, GameRecord, Opening
from tournaments.stats import PentaStats, Sprt, WdlStats
from tournaments.timecontrol import TimeControl

__all__ = ["Adjudication", "EngineConfig", "GameRecord", "Match", "Opening", "PentaStats",
           "Reporter", "Sprt", "TimeControl", "WdlStats"]
