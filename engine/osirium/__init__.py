"""Osirium (2–4 players, teams with 4): rules O1–O10 of ``shared/rules/osirium.md``."""

from __future__ import annotations

from engine.osirium.game import OsiriumGame
from engine.osirium.state import OsiriumState
from engine.osirium.view import OsiriumView

GAME = OsiriumGame()

__all__ = ["GAME", "OsiriumGame", "OsiriumState", "OsiriumView"]
