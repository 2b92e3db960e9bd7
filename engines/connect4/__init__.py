"""Connect Four: bitboard rules (`rules`), the numba solver (`kernels`, `solver`) and opening books
(`book`, `book_kernels`)."""
