"""stdin/stdout front-ends over one shared session, and the `mallard` command line.

The engine's name and version live here, the version read from the installed package's metadata
(pyproject.toml is its one source), so that `id name`, GTP `version` and `mallard --version`
agree. `print_notice` is how every command shows the engines' notices (a cache healed, a first
compile): one stderr line, never on stdout, which GUIs read.
"""

import sys
from importlib import metadata

ENGINE_NAME = "Mallard"
ENGINE_AUTHOR = "the Mallard developers"
try:
    VERSION = metadata.version("mallard")
except metadata.PackageNotFoundError:  # run from a source tree that was never installed
    VERSION = "0+unknown"


def print_notice(text: str) -> None:
    """An engines notice as one `mallard: ...` line on stderr."""
    print(f"mallard: {text}", file=sys.stderr, flush=True)
