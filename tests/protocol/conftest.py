"""Fixtures of the protocol tests: `client`, a board server (`mallard board`'s app) under
Starlette's TestClient, whose engines run this checkout."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = [sys.executable, "-m", "mallard.protocol.cli", "uci"]


@pytest.fixture
def client(monkeypatch):
    pytest.importorskip("starlette", reason="mallard board needs mallard[board]")
    pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
    with warnings.catch_warnings():  # newer Starlette would rather have httpx2: both work
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from mallard.protocol.board.app import create_app
    from mallard.protocol.board.guard import Guard

    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the engine subprocess runs this checkout
    app = create_app(ENGINE, Guard("testserver"))  # the name TestClient's requests give
    with TestClient(app) as test_client:
        test_client.app_sessions = app.state.sessions
        yield test_client
