"""Ultimate Tic-Tac-Toe (arrives with its own issue)."""
