"""MkDocs hooks (mkdocs.yml `hooks:`): the reference tables that come from the code, made anew at
every build so that they cannot go stale.

- `cli.md`, the command-line reference, is generated from `mallard.protocol.cli.build_parser()`
  (every subcommand, nested ones included, with each argument, its default and its help) and
  from `mallard match`'s own help text (`mallard.tournaments.cli.HELP`).
- In a page, the line `<!-- generated: uci-options -->` becomes the table of the engine options
  every variant lists (the protocol's, then each game's), `<!-- generated: dev-options -->` the
  table of the developer options. An option's meaning is written here, in `MEANINGS`: an option
  that has none fails the build, so a new option cannot reach a release undocumented.
- The board page's screenshots are taken from where the package keeps them.
- The API reference (mkdocstrings) reads the sources of the checkout being built: a folder with
  a `mallard` package whose sub-packages link to the checkout's folders, as `setup.py` installs
  them, is put first on mkdocstrings' search path (and on `sys.path`, for the imports here).

Machine-dependent figures (the number of cores, which bounds `Threads` and `--threads`) are
written as the words they stand for, not as this machine's number.
"""

from __future__ import annotations

import argparse
import atexit
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("engines", "protocol", "tournaments")
CLI_PAGE = "cli.md"
SCREENSHOTS = Path("protocol/board/static/screenshots")
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)

# What each engine option does, by name: the generated tables' last column.
MEANINGS = {
    "UCI_Variant": "the game: `duck` (Duck Chess), `cfour` (Connect Four) or "
                   "`uttt` (Ultimate Tic-Tac-Toe, our extension of the dialect)",
    "MultiPV": "lines reported; Connect Four gives each column's exact score",
    "Ponder": "the GUI may send `go ponder`",
    "Move Overhead": "milliseconds taken off every clock and move time for the GUI's lag",
    "UCI_ShowWDL": "`wdl W D L` (per mille) in `info` lines; exact for a solved Connect Four "
                   "position",
    "UCI_AnalyseMode": "accepted; the search is the same",
    "Skill Level": "0 (weakest) to 20 (the engine itself): a smaller search and a looser "
                   "choice among its best moves, never a win it sees given away; the ladder is "
                   "in the benchmarks",
    "Clear Hash": "forget the transposition table",
    "Hash": "transposition table size in MB (the largest power of two of bytes within it; "
            "UTTT adds a quarter for its prover); allocated and touched when set, and refused "
            "with one error line when the machine cannot hold it",
    "OwnBook": "probe the opening book (the shipped book and BitBully's 12-ply database on "
               "7x6, a book of `mallard book build` on other sizes)",
    "Threads": "search threads sharing the table; `go nodes` searches on one",
    "Late Move Reductions": "late quiet moves searched shallower first, again at full depth "
                            "when they fail high",
    "Null Move Pruning": "a node cuts when even passing (a reduced search) holds beta",
    "Delta Pruning": "quiescence skips captures that cannot lift the score to alpha",
    "Losing Capture Pruning": "quiescence skips captures an enemy pawn or knight takes back at "
                              "a loss",
    "Quiescence Recaptures": "from the third ply of quiescence on, only captures on the last "
                             "move's square (and of a king)",
    "Razoring": "at depth 1 and 2 in null windows, a node 300 centipawns a ply below alpha is "
                "searched by its captures alone",
}
THREADS_WORDS = "1 to the number of cores"

_view: Path | None = None


def _importable_view() -> Path:
    """A folder whose `mallard/` links to this checkout's folders (made once per build)."""
    global _view
    if _view is None:
        _view = Path(tempfile.mkdtemp(prefix="mallard-docs-"))
        atexit.register(shutil.rmtree, _view, True)
        package = _view / "mallard"
        package.mkdir()
        for folder in FOLDERS:
            (package / folder).symlink_to(ROOT / folder, target_is_directory=True)
        sys.path.insert(0, str(_view))
    return _view


@event_priority(100)  # before mkdocstrings reads its handler's paths
def on_config(config):
    view = str(_importable_view())
    plugin = config.plugins.get("mkdocstrings")
    if plugin is not None:
        python = plugin.config.handlers.setdefault("python", {})
        python["paths"] = [view] + [p for p in python.get("paths", []) if p != view]
    return config


def on_files(files, config):
    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    # the board page's screenshots, where the package keeps them (docs/ holds no copy)
    for picture in sorted((ROOT / SCREENSHOTS).glob("*.png")):
        files.append(File(f"screenshots/{picture.name}", src_dir=str(picture.parent.parent),
                          dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls))
    return files


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda found: _generated(found.group(1), page.file.src_uri), markdown)


def _generated(kind: str, where: str) -> str:
    if kind == "uci-options":
        return options_table(developer=False)
    if kind == "dev-options":
        return options_table(developer=True)
    raise PluginError(f"{where}: no generated table is called '{kind}'")


# --- the engine options -------------------------------------------------------------------------

def _cell(text: str) -> str:
    """Text for a Markdown table cell."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def options_table(developer: bool) -> str:
    """The options every variant lists, one row per declaration (an option declared alike by
    several games is one row naming them; the declarations of one name are kept together)."""
    from mallard.engines import GAMES, game_names
    from mallard.engines.base import MAX_THREADS
    from mallard.protocol.session import PROTOCOL_OPTIONS

    declared: list[tuple[object, str]] = []
    if not developer:
        declared += [(option, "every variant") for option in PROTOCOL_OPTIONS]
    for game in GAMES:
        declared += [(option, f"`{game.name}`")
                     for option in (game.dev_options if developer else game.options)]
    rows: dict[str, dict[tuple, list[str]]] = {}
    for option, variant in declared:
        row = _declaration(option, MAX_THREADS, game_names())
        rows.setdefault(option.name, {}).setdefault(row, []).append(variant)
    lines = ["| option | type | default | range | variants | meaning |",
             "|---|---|---|---|---|---|"]
    for name, declarations in rows.items():
        if name not in MEANINGS:
            raise PluginError(f"the engine option '{name}' has no meaning in docs/hooks/"
                              "reference.py (MEANINGS): say what it does")
        for (kind, default, span), variants in declarations.items():
            lines.append(f"| `{name}` | {kind} | {default} | {span} | {', '.join(variants)} | "
                         f"{_cell(MEANINGS[name])} |")
    return "\n".join(lines)


def _declaration(option, max_threads: int, variants: list[str]) -> tuple:
    """(type, default, range) of an option as its table row shows them."""
    default = "" if option.type == "button" else str(option.default).lower() \
        if option.type == "check" else str(option.default)
    if option.type == "spin":
        top = "the number of cores" if option.max == max_threads and option.name == "Threads" \
            else str(option.max)
        span = f"{option.min} to {top}"
    elif option.type == "combo":  # UCI_Variant's choices are the registry's games
        span = ", ".join(f"`{choice}`" for choice in option.choices or variants)
    else:
        span = ""
    return option.type, f"`{default}`" if default else "", span


# --- the command line ---------------------------------------------------------------------------

def cli_reference() -> str:
    """The Markdown of the command-line reference page."""
    os.environ["COLUMNS"] = "100"  # argparse wraps usage lines to the terminal's width
    from mallard.protocol.cli import build_parser
    from mallard.tournaments.cli import HELP

    parser = build_parser()
    parts = [
        "# Command line",
        "",
        "Generated from the command's own parsers when this site was built: every subcommand "
        "and every argument, with its default. `mallard COMMAND --help` prints the same "
        "(`mallard match -help` for the match runner). Ranges that depend on the machine are "
        f"given as what they stand for: `--threads` takes {THREADS_WORDS}.",
        "",
        "A bad argument prints the subcommand's usage and one error line on stderr, exit status "
        "2; a problem found later (a bad FEN, a board size) is one `mallard: ...` line, exit "
        "status 2. When the reader of stdout goes away (`mallard solve < positions.txt | head "
        "-3`) the command ends quietly with status 141, as a C tool killed by SIGPIPE does; "
        "Ctrl-C ends it with status 130. No traceback reaches the terminal.",
        "",
    ]
    parts += _command_section(parser, ["mallard"], level=2)
    parts += ["## mallard match", "",
              "The match runner has cutechess-cli's single-dash grammar, so its options are its "
              "own help text, `mallard match -help`:", "", "```text", HELP.rstrip(), "```", ""]
    return "\n".join(parts) + "\n"


def _command_section(parser: argparse.ArgumentParser, words: list[str], level: int) -> list[str]:
    title = " ".join(words)
    lines = [f"{'#' * min(level, 4)} {title}", ""]
    if parser.description:
        lines += [_escape_prose(parser.description), ""]
    usage = parser.format_usage().strip()
    lines += ["```text", _machine_words(usage), "```", ""]
    rows = []
    children: list[tuple[str, argparse.ArgumentParser]] = []
    formatter = parser._get_formatter()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, child in action.choices.items():
                if name == "match":
                    continue  # its own grammar: the page's last section
                children.append((name, child))
                rows.append((f"`{name}`", "subcommand", helps.get(name) or ""))
            continue
        if action.help == argparse.SUPPRESS:
            continue
        name = ", ".join(f"`{flag}`" for flag in action.option_strings) or f"`{_metavar(action)}`"
        argument = "" if action.nargs == 0 else _metavar(action)
        if action.option_strings and action.nargs != 0:
            name = ", ".join(f"`{flag} {argument}`" for flag in action.option_strings)
        kind = "flag" if action.option_strings else "argument"
        rows.append((name, kind, _machine_words(formatter._expand_help(action))))
    if rows:
        lines += ["| argument | kind | meaning |", "|---|---|---|"]
        lines += [f"| {name} | {kind} | {_cell(text)} |" for name, kind, text in rows]
        lines.append("")
    for name, child in children:
        lines += _command_section(child, words + [name], level + 1)
    return lines


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(choice) for choice in action.choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _escape_prose(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _machine_words(text: str) -> str:
    """Help text with this machine's core count written as words."""
    from mallard.engines.base import MAX_THREADS

    text = text.replace(f"(1 to {MAX_THREADS}, the cores)", f"({THREADS_WORDS})")
    return text.replace(f"(default: {MAX_THREADS})", "(default: the number of cores)") \
        if "the most threads" in text else text
