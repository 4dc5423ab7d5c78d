"""Aton (2 players): the complete rules engine of ``shared/rules/aton.md`` (A1–A11).

Action ids (see :mod:`engine.aton.board` and ``docs/rules/aton.md``):
0 ``keep``, 1 ``exchange``, 2..257 ``arrange c1c2c3c4`` (id = 2 + 64(c1-1) + 16(c2-1) +
4(c3-1) + (c4-1)), 258..305 ``remove T<t>.<s>``, 306..353 ``place T<t>.<s>``,
354..401 ``reset T<t>.<s>`` (square = 12(t-1) + s).
"""

from engine.aton.game import AtonGame
from engine.aton.state import AtonState
from engine.aton.view import AtonView

GAME = AtonGame()

__all__ = ["GAME", "AtonGame", "AtonState", "AtonView"]
