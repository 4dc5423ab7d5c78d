"""heka's rules engine: Aton and Osirium behind one game interface (stdlib only)."""

from engine import _build  # first: chooses the compiled or the pure-Python modules
from engine.core import (
    MAX_ACTION_TEXT,
    MAX_STATE_TEXT,
    SECRET_ACTION,
    TERMINAL,
    ActionInfo,
    ActionParseError,
    EngineError,
    Event,
    Game,
    GameDescriptor,
    GameOptionsError,
    GameOverError,
    IllegalActionError,
    OptionSpec,
    Outcome,
    State,
    StateFormatError,
    UnknownGameError,
    View,
)
from engine.registry import get_game, list_games, register_game


def build() -> str:
    """The build running in this process: ``"compiled"`` (mypyc) or ``"pure"`` (Python);
    ``HEKA_PURE_PYTHON=1`` forces ``"pure"`` (``engine/_build.py``)."""
    return _build.build()


__all__ = [
    "MAX_ACTION_TEXT",
    "MAX_STATE_TEXT",
    "SECRET_ACTION",
    "TERMINAL",
    "ActionInfo",
    "ActionParseError",
    "EngineError",
    "Event",
    "Game",
    "GameDescriptor",
    "GameOptionsError",
    "GameOverError",
    "IllegalActionError",
    "OptionSpec",
    "Outcome",
    "State",
    "StateFormatError",
    "UnknownGameError",
    "View",
    "build",
    "get_game",
    "list_games",
    "register_game",
]
