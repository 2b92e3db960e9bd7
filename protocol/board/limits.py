"""What one page and the whole board server may cost: the bounds `mallard board` keeps.

A page runs at most one engine, and the server at most `DEFAULT_MAX_ENGINES` (`--max-engines`)
for all pages together; a page's unsent messages are at most `MAX_QUEUED` (superseded ones
merged first); a page may send `RATE_PER_S` messages a second on average and `BURST` at once,
and the rest are dropped unread. A page that sends nothing for `IDLE_ENGINE_SECONDS` has its
engine ended (it starts again when the page next needs it). At most `MAX_PAGES` pages are
open at once; a message is at most `MAX_MESSAGE` characters, and `MAX_MESSAGE_BYTES` on the
wire, uncompressed (a longer one closes the WebSocket).
"""

DEFAULT_MAX_ENGINES = 4
MAX_PAGES = 32
MAX_MESSAGE = 256 * 1024  # characters; a PGN of a long game is far smaller
MAX_MESSAGE_BYTES = 4 * MAX_MESSAGE  # UTF-8 takes at most 4 bytes a character
MAX_QUEUED = 64
RATE_PER_S = 50
BURST = 200
IDLE_ENGINE_SECONDS = 600
