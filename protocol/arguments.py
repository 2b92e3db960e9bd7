"""The value parsers of the `mallard` command line's arguments: each refuses a bad value with a
message argparse prints (`argparse.ArgumentTypeError`), so that a bad argument is found while
parsing, before anything runs, and is reported with its subcommand's usage.

They check with the games' code only; the checks that need the match runner's (a cluster's
address, a time control, a weight group of the tuner) are the command line's own
(`mallard.protocol.cli`), the one module of `protocol` that imports `tournaments`.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import shutil
from typing import Callable

from mallard.engines import game_names
from mallard.engines.duck.terms import parse_terms

MAX_INTEGER = 2**63 - 1  # what numpy, numba and C take; a count or a limit past it is a typo


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is below {minimum}")
    if value > MAX_INTEGER:
        raise argparse.ArgumentTypeError(f"{text} is above {MAX_INTEGER}")
    return value


def positive_int(text: str) -> int:
    return _integer(text, 1)


def non_negative_int(text: str) -> int:
    return _integer(text, 0)


def up_to(maximum: int):
    def check(text: str) -> int:
        return _at_most(positive_int(text), maximum)
    return check


def positive_seconds(text: str) -> float:
    value = _number(text, "number of seconds", "positive")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
    return value


def _number(text: str, what: str = "number", kind: str = "finite") -> float:
    """A finite number; argparse's error names `text` as not a (`kind`) `what`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a {what}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a {kind} {what}")
    return value


def non_negative_number(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is below 0")
    return value




def _at_most(value, maximum, below: bool = False):
    """`value` when it is at most (or, with `below`, under) `maximum`; argparse's error else."""
    if value > maximum or (below and value == maximum):
        raise argparse.ArgumentTypeError(f"{value} is {'not below' if below else 'above'} "
                                         f"{maximum}")
    return value


def refused_as_argument(check: Callable[[str], object], text: str) -> str:
    """`text` once `check(text)` accepts it; its ValueError as the message argparse prints."""
    try:
        check(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def fraction(text: str) -> float:
    """A number from 0, below 1."""
    return _at_most(non_negative_number(text), 1, below=True)


def share(text: str) -> float:
    """A number from 0 to 1."""
    return _at_most(non_negative_number(text), 1)


def list_of(item: Callable[[str], object], empty: str = "no value given"):
    """Comma-separated values each read by `item`, at least one (else `empty` is the error)."""
    def check(text: str) -> list:
        values = [item(part.strip()) for part in text.split(",") if part.strip()]
        if not values:
            raise argparse.ArgumentTypeError(empty)
        return values
    return check


number_list = list_of(non_negative_number, "no number given")  # numbers, none negative


def depth_list(text: str) -> list[int]:
    """Comma-separated positive depths ('' for none)."""
    return [positive_int(part.strip()) for part in text.split(",") if part.strip()]


def executable(text: str) -> str:
    found = shutil.which(text)
    if found is None:
        raise argparse.ArgumentTypeError(f"no executable program '{text}'")
    return found


def installed(module: str, extra: str):
    def check(text: str) -> str:
        if importlib.util.find_spec(module) is None:
            raise argparse.ArgumentTypeError(
                f"'{text}' needs the {module} package: pip install 'mallard[{extra}]'")
        return text
    return check


def evaluation_terms(text: str) -> str:
    return refused_as_argument(parse_terms, text)


def variant_list(text: str) -> list[str]:
    known = game_names()
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected variants among {', '.join(known)}, "
                                         f"not '{text}'")
    return names


def port_number(text: str) -> int:
    return _at_most(non_negative_int(text), 65535)
