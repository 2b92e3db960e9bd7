"""Duck Chess (arrives with its own issue)."""
