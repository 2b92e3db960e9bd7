"""Engine-vs-engine matches (referee, clocks, statistics, storage); arrives with its own issue."""
