"""The Duck Chess evaluation's switchable terms and weight groups, by name.

No numba here: the command line names them in its help and checks its arguments without loading
the compiler. A term is a bit of the mask `evaluation.evaluate` takes (the search's
ctx[C_EVAL_TERMS]), and its name is also the name of the weight group it multiplies. The weight
groups are what the tuner fits or leaves alone (`mallard tune duck --fixed`): material and
placement, which every evaluation counts, then one group per term, in the order of the
evaluation's features.
"""

TERM_MOBILITY, TERM_KING_EXPOSURE, TERM_PAWNS, TERM_ENDGAME_KING, TERM_LONE_KING = 1, 2, 4, 8, 16
TERM_NAMES = {"mobility": TERM_MOBILITY, "king": TERM_KING_EXPOSURE, "pawns": TERM_PAWNS,
              "endgame": TERM_ENDGAME_KING, "lone": TERM_LONE_KING}
ALL_TERMS = sum(TERM_NAMES.values())
WEIGHT_GROUP_NAMES = ("material", "placement", *TERM_NAMES)


def parse_terms(text: str) -> int:
    """A term mask from names such as "mobility,king" ("none" or "" for none, "all" for all)."""
    mask = 0
    for name in filter(None, (part.strip() for part in text.lower().split(","))):
        if name == "none":
            continue
        if name == "all":
            mask |= ALL_TERMS
            continue
        if name not in TERM_NAMES:
            raise ValueError(f"unknown evaluation term '{name}' (known: "
                             f"{', '.join(TERM_NAMES)}, all, none)")
        mask |= TERM_NAMES[name]
    return mask
