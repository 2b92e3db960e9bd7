"""Duck Chess: the rules on a 0x88 board (`board`, `kernels`, `notation`, `rules`).

`DuckGame` / `DuckPosition` are the Python-level game; the numba kernels do move generation,
make/unmake and perft on a plain int64 state array.
"""
