"""Independent rule oracles shared by the tests: pyffish (Fairy-Stockfish's rules), with Connect
Four loaded as the `cfour` variant of Fairy-Stockfish's variants.ini (pyffish ships without it)."""

import pyffish

CFOUR_CONFIG = """[cfour]
maxRank = 6
maxFile = 7
immobile = p
startFen = 7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] w - - 0 1
pieceDrops = true
enclosingDrop = top
doubleStep = false
castling = false
stalemateValue = draw
immobilityIllegal = false
connectN = 4
nMoveRule = 0
"""

pyffish.load_variant_config(CFOUR_CONFIG)


def legal_moves(variant: str, fen: str, moves: list) -> list:
    return pyffish.legal_moves(variant, fen, list(moves))


def start_fen(variant: str) -> str:
    return pyffish.start_fen(variant)
