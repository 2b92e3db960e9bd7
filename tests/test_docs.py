"""The documentation is checked like code: the site builds with `mkdocs build --strict` (a broken
link or anchor between pages is an error), the README's relative links and anchors resolve,
every subcommand, flag, engine option and protocol command the code has is named in the built
site, the Python API's public names exist and are in its reference, and the examples run.

Examples are the fenced blocks of README.md and docs/*.md: ```sh blocks run in bash, ```python
blocks in this interpreter, ```console blocks run each `$ ` line and compare what it prints with
the lines below it. Each runs in an empty folder of its own. A block that needs what a test run
cannot have (a GUI, a network, a cluster, Fairy-Stockfish, hours) follows a line
`<!-- not run: <reason> -->` and is skipped with that reason.
"""

from __future__ import annotations

import argparse
import html
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
RUN_LANGUAGES = ("sh", "python", "console")
NOT_RUN = re.compile(r"^<!-- not run: (.+) -->$")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
EXAMPLE_TIMEOUT = 300  # seconds; each example takes a few


def _docs_tools() -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config), "--site-dir", str(site)], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=600)


def _text(page: Path) -> str:
    """A built page's words: the HTML's text, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text()))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> dict[str, str]:
    """The site built into a temporary folder: page name -> its text."""
    _docs_tools()
    folder = tmp_path_factory.mktemp("site")
    done = _mkdocs_build(ROOT / "mkdocs.yml", folder)
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {page.parent.relative_to(folder).as_posix(): _text(page)
             for page in folder.rglob("index.html")}
    pages["index"] = pages.pop(".")
    return pages


def test_the_site_builds_strictly(site):
    for page in ("cli", "protocol", "api-reference", "benchmarks", "design", "experiments"):
        assert page in site, sorted(site)
    reference = site["api-reference"]  # mkdocstrings rendered the docstrings
    assert "mallard.engines.base" in reference and "new_stop_flag" in reference
    assert "A game's search engine" in reference


def test_a_broken_anchor_fails_the_build(tmp_path):
    """The control: the same configuration refuses a page linking to an anchor that is not."""
    _docs_tools()
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("hooks"))
    (docs / "index.md").write_text("# Home\n\n[no such part](benchmarks.md#no-such-part)\n")
    config = (ROOT / "mkdocs.yml").read_text().replace(
        "docs_dir: docs", f"docs_dir: {docs}").replace(
        "- docs/hooks/reference.py", f"- {DOCS / 'hooks' / 'reference.py'}")
    (tmp_path / "mkdocs.yml").write_text(config)
    done = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-part" in done.stdout + done.stderr


# --- links --------------------------------------------------------------------------------------

def slug(title: str) -> str:
    """A heading's anchor as MkDocs (Python-Markdown's toc) and GitHub make it."""
    from markdown.extensions.toc import slugify

    return slugify(re.sub(r"[`*]", "", title), "-")


def anchors(markdown: str) -> set[str]:
    return {slug(title) for title in HEADING.findall(_outside_code(markdown))}


def _outside_code(markdown: str) -> str:
    return FENCE.sub("", markdown)


def broken_links(path: Path) -> list[str]:
    """The relative links of a Markdown file whose file or heading does not exist."""
    text = path.read_text()
    broken = []
    for target in LINK.findall(_outside_code(text)):
        if re.match(r"[a-z]+:", target):
            continue  # another site's
        name, _, anchor = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {linked.name}")
    return broken


def test_the_readme_links_resolve():
    assert broken_links(README) == []


def test_a_broken_readme_link_is_found(tmp_path):
    page = tmp_path / "README.md"
    page.write_text("# Top\n\n[ok](#top) [gone](missing.md) [no anchor](README.md#nowhere)\n")
    assert len(broken_links(page)) == 2


# --- everything the code has is named ---------------------------------------------------------

def undocumented(names, text: str) -> list[str]:
    return sorted(name for name in set(names) if name not in text)


def test_a_name_missing_from_the_docs_is_found():
    assert undocumented(["--hash", "--no-such-flag"], "`--hash MB` the table") == \
        ["--no-such-flag"]


def command_names(parser: argparse.ArgumentParser, words=("mallard",)):
    """Every subcommand (as `mallard bench connect4`) and every option string, walking the
    subparsers of `mallard.protocol.cli.build_parser()`."""
    yield " ".join(words)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from command_names(child, (*words, name))
        else:
            yield from action.option_strings


def test_every_subcommand_and_flag_is_in_the_command_line_page(site):
    from mallard.protocol.cli import build_parser

    names = list(command_names(build_parser()))
    assert "mallard bench connect4" in names and "--threads" in names
    assert undocumented(names, site["cli"]) == []


def test_every_match_option_is_in_the_command_line_page(site):
    from mallard.tournaments import cli

    options = list(cli._OPTION_READERS) + [f"{key}=" for key in cli.ENGINE_KEYS]
    assert "-sprt" in options and "cmd=" in options
    assert undocumented(options, site["cli"]) == []


def _listed_options(variant: str, developer: bool) -> list[str]:
    """The option names a real `mallard uci` lists for a variant."""
    from mallard.engines.processes import mallard_command

    env = dict(os.environ)
    env.pop("MALLARD_DEV_OPTIONS", None)
    if developer:
        env["MALLARD_DEV_OPTIONS"] = "1"
    done = subprocess.run(mallard_command("uci", "--variant", variant), input="uci\nquit\n",
                          env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [re.match(r"option name (.+?) type ", line).group(1)
            for line in done.stdout.splitlines() if line.startswith("option name ")]


@pytest.mark.parametrize("developer", [False, True], ids=["gui", "developer"])
def test_every_engine_option_of_every_variant_is_documented(site, developer):
    from mallard.engines import game_names

    listed = {name for variant in game_names() for name in _listed_options(variant, developer)}
    assert {"Hash", "Threads", "UCI_Variant"} <= listed
    assert ("Razoring" in listed) == developer
    assert undocumented(listed, site["protocol"] + site["experiments"]) == []


def test_every_protocol_command_is_in_the_protocol_page(site):
    from mallard.protocol.frontend import HANDLER_PREFIX
    from mallard.protocol.gtp import GtpFrontEnd
    from mallard.protocol.uci import UciFrontEnd

    commands = [name[len(HANDLER_PREFIX):].replace("_mallard_", "mallard-")
                for front_end in (UciFrontEnd, GtpFrontEnd) for name in dir(front_end)
                if name.startswith(HANDLER_PREFIX)]
    assert "ponderhit" in commands and "mallard-solve" in commands
    assert undocumented(commands, site["protocol"]) == []


def public_names(markdown: str) -> set[str]:
    """`module.name` of each name in the public-names table of docs/api.md: a row names a module,
    then its names, each in backticks (`main(argv)` is `main`; words around a name leave it out,
    but for "the errors")."""
    names = set()
    for module, cell in re.findall(r"^\| `(mallard[\w.]*)` \| (.+) \|$", markdown, re.MULTILINE):
        for part in re.split(r"[,;]", cell):
            found = re.fullmatch(r"(?:the errors )?`(\w+)(?:\(\w*\))?`", part.strip())
            if found:
                names.add(f"{module}.{found.group(1)}")
    return names


def referenced_names(markdown: str) -> set[str]:
    """`module.name` of each name the API reference renders: `::: module.name`, or
    `::: module` with its `members: [...]`."""
    names = set()
    for path, members in re.findall(r"^::: ([\w.]+)\n(?:(?:    .*\n)*? +members: "
                                    r"\[([^\]]*)\])?", markdown, re.MULTILINE):
        names |= {f"{path}.{member.strip()}" for member in members.split(",")} if members \
            else {path}
    return names


def test_the_public_names_exist_and_are_in_the_api_reference():
    """docs/api.md's table of public names and the pages that render them agree, and each
    name is there to import."""
    listed = public_names((DOCS / "api.md").read_text())
    assert "mallard.engines.uttt.prover.analyse_game" in listed
    assert "mallard.protocol.cli.main" in listed
    missing = []
    for name in sorted(listed):
        module, _, attribute = name.rpartition(".")
        if not hasattr(importlib.import_module(module), attribute):
            missing.append(name)
    assert missing == []
    assert listed == referenced_names((DOCS / "api-reference.md").read_text())


def _hook():
    spec = importlib.util.spec_from_file_location("docs_reference_hook",
                                                  DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_option_without_a_meaning_fails_the_build(monkeypatch):
    """A game's new option reaches the option tables only with its meaning written."""
    _docs_tools()
    from mkdocs.exceptions import PluginError

    import mallard.engines
    from mallard.engines.base import GameEntry, Option

    hook = _hook()
    assert "Razoring" in hook.options_table(developer=True)
    extra = GameEntry("extra", object, object, options=(Option("Mystery", "check", False),))
    monkeypatch.setattr(mallard.engines, "GAMES", mallard.engines.GAMES + (extra,))
    with pytest.raises(PluginError, match="Mystery"):
        hook.options_table(developer=False)


# --- the examples run -------------------------------------------------------------------------

def code_blocks(path: Path):
    """(language, code, line, reason not to run or None) of each fenced block of a page."""
    text = path.read_text()
    for found in FENCE.finditer(text):
        before = text[:found.start()].rstrip("\n").splitlines()
        marked = NOT_RUN.match(before[-1]) if before else None
        yield (found.group(1), found.group(2), text.count("\n", 0, found.start()) + 1,
               marked.group(1) if marked else None)


def _examples():
    for path in [README, *PAGES]:
        for language, code, line, reason in code_blocks(path):
            if language in RUN_LANGUAGES:
                name = f"{path.relative_to(ROOT)}:{line}"
                yield pytest.param(language, code, reason, id=name)


def test_every_readme_block_is_an_example():
    """The README holds no block that is neither run nor marked with why it is not."""
    languages = [language for language, *_ in code_blocks(README)]
    assert languages and set(languages) <= set(RUN_LANGUAGES), languages


def console_steps(code: str) -> list[tuple[str, str]]:
    """(command, expected output) for each `$ ` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in code.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return [(command, "\n".join(output)) for command, output in steps]


def _run(command: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, input=stdin, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=EXAMPLE_TIMEOUT)


@pytest.mark.parametrize("language,code,reason", list(_examples()))
def test_the_example_runs(language, code, reason, tmp_path):
    if reason:
        pytest.skip(f"not run: {reason}")
    if language != "python" and shutil.which("mallard") is None:
        pytest.skip("the mallard command is not on the PATH (pip install -e .)")
    if language == "python":
        done = _run([sys.executable, "-P", "-"], tmp_path, code)
        assert done.returncode == 0, done.stdout
    elif language == "sh":
        done = _run(["bash", "-euo", "pipefail", "-c", code], tmp_path)
        assert done.returncode == 0, done.stdout
    else:
        steps = console_steps(code)
        assert steps, "a console block without a $ line"
        for command, expected in steps:
            done = _run(["bash", "-o", "pipefail", "-c", command], tmp_path)
            assert (done.returncode, done.stdout.rstrip("\n")) == (0, expected), command


def test_a_console_block_is_read_as_commands_and_output():
    assert console_steps("$ echo a\na\n$ true\n") == [("echo a", "a"), ("true", "")]
