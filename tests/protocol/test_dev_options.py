"""Developer options: switches for experiments (an SPRT of one piece of the duck search) that a
normal handshake never lists. They exist only when the engine's environment has
MALLARD_DEV_OPTIONS=1; `mallard match` starts its engines with its own environment, so they
declare what it sets."""

import io
import os

import pytest

from mallard.engines import find_game
from mallard.engines.base import DEV_OPTIONS_VARIABLE
from mallard.engines.duck.searcher import DEFAULT_SELECTIVITY, SELECTIVITY_BITS
from mallard.engines.processes import mallard_command
from mallard.protocol.io import Output
from mallard.protocol.uci import UciFrontEnd
from mallard.tournaments.match import _developer_option_hint
from mallard.tournaments.players import EngineConfig, undeclared_options
from tests.protocol.harness import Process

# what a GUI's user sets, and all a normal handshake lists (OwnBook: Connect Four's)
GUI_OPTIONS = {"UCI_Variant", "Hash", "Threads", "MultiPV", "Ponder", "Move Overhead",
               "Clear Hash", "UCI_ShowWDL", "UCI_AnalyseMode", "OwnBook", "Skill Level"}
DUCK_SWITCHES = [option.name for option in find_game("duck").dev_options]


def _handshakes(dev: bool) -> tuple[dict[str, list[str]], list[str]]:
    """The option names `mallard uci` lists for each game, and what it answers a duck
    `setoption` of a developer option, with or without the variable in its environment."""
    env = {k: v for k, v in os.environ.items() if k != DEV_OPTIONS_VARIABLE}
    if dev:
        env[DEV_OPTIONS_VARIABLE] = "1"
    engine = Process("uci", env=env)
    listed = {}
    for variant in ("cfour", "uttt", "duck"):
        engine.send(f"setoption name UCI_Variant value {variant}", "uci")
        lines = engine.until("uciok")
        listed[variant] = [line[len("option name "):].split(" type ")[0] for line in lines
                           if line.startswith("option name ")]
    engine.send("setoption name Null Move Pruning value false", "isready")
    answer = engine.until("readyok", 120)[:-1]
    engine.send("quit")
    assert engine.wait()[0] == 0
    return listed, answer


@pytest.mark.parametrize("dev", [False, True])
def test_the_developer_options_are_listed_only_with_the_variable(dev):
    listed, answer = _handshakes(dev)
    for variant, names in listed.items():
        gui = [name for name in names if name in GUI_OPTIONS]
        assert len(gui) <= 12, (variant, names)
        assert names == gui + (DUCK_SWITCHES if dev and variant == "duck" else []), variant
    assert DUCK_SWITCHES and not set(DUCK_SWITCHES) & GUI_OPTIONS
    assert answer == ([] if dev else ["info string error: no such option 'Null Move Pruning'"])


def test_a_developer_option_switches_its_piece_of_the_search(monkeypatch):
    monkeypatch.setenv(DEV_OPTIONS_VARIABLE, "1")
    stream = io.StringIO()
    front = UciFrontEnd(Output(stream), None)
    try:
        for line in ("setoption name UCI_Variant value duck",
                     "setoption name Null Move Pruning value false",
                     "setoption name razoring value false"):
            assert front.handle(line)
        off = SELECTIVITY_BITS["null"] | SELECTIVITY_BITS["razor"]
        assert front.session.searcher().selectivity == DEFAULT_SELECTIVITY & ~off
        assert front.handle("setoption name Razoring value true")
        assert front.session.searcher().selectivity == DEFAULT_SELECTIVITY & ~off | \
            SELECTIVITY_BITS["razor"]
        assert front.handle("setoption name UCI_Variant value uttt")
        assert front.handle("setoption name Null Move Pruning value false")  # not uttt's
        assert stream.getvalue().splitlines() == \
            ["info string error: no such option 'Null Move Pruning'"]
    finally:
        front.close()


@pytest.mark.parametrize("dev", [False, True])
def test_a_match_finds_the_developer_options_its_engines_declare(monkeypatch, dev):
    """`mallard match` checks the `option.NAME`s of each engine against its handshake, and
    says how to list a developer option that its environment hides."""
    if dev:
        monkeypatch.setenv(DEV_OPTIONS_VARIABLE, "1")
    else:
        monkeypatch.delenv(DEV_OPTIONS_VARIABLE, raising=False)
    config = EngineConfig(name="mallard", command=mallard_command("uci"),
                          options={"Null Move Pruning": "false", "Hash": "16"})
    assert undeclared_options(config, "duck", 120_000) == ([] if dev else ["Null Move Pruning"])
    hint = _developer_option_hint("duck", "null move pruning")
    assert hint == ("" if dev else
                    f" (a mallard developer option: run the match with {DEV_OPTIONS_VARIABLE}=1)")
    assert _developer_option_hint("duck", "Hsah") == _developer_option_hint("nim", "x") == ""
