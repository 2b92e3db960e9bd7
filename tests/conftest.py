"""Test-wide settings: a private cache directory for converted books, so tests never touch ~."""

import os
import tempfile

os.environ.setdefault("MALLARD_CACHE", os.path.join(tempfile.gettempdir(), "mallard-test-cache"))
