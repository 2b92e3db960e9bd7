"""The command lines of the Python processes our code starts: engines, workers, compile helpers.

Invariant: a child imports our package from where this interpreter has it, never from its
working directory. `-m` and `-c` put the working directory first on `sys.path`, so a folder
named `mallard`, `engines` or `protocol` where the user stands would replace our code; `-P`
keeps it off (`PYTHONPATH` and the installed packages still apply).
"""

from __future__ import annotations

import sys

ENGINE_MODULE = "mallard.protocol.cli"  # what the `mallard` console script runs


def python_command(*arguments: str) -> list[str]:
    """This interpreter, with the working directory off `sys.path`, then `arguments`."""
    return [sys.executable, "-P", *arguments]


def mallard_command(*arguments: str) -> list[str]:
    """`mallard ARGUMENTS` as this interpreter runs it, installed or from an editable checkout."""
    return python_command("-m", ENGINE_MODULE, *arguments)
