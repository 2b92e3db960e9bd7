"""What one page and the whole board server may cost: the bounds `mallard board` keeps.

A page runs at most one engine, and the server at most `DEFAULT_MAX_ENGINES` (`--max-engines`)
for all pages together; a page's unsent messages are at most `MAX_QUEUED` (superseded ones
merged first); a page may send `RATE_PER_S` messages a second on average and `BURST` at once,
and the rest are dropped unread. A page that sends nothing for `IDLE_ENGINE_SECONDS` has its
engine ended (it starts again when the page next needs it).
"""

DEFAULT_MAX_ENGINES = 4
MAX_QUEUED = 64
RATE_PER_S = 50
BURST = 200
IDLE_ENGINE_SECONDS = 600
