"""The registry of games by name."""

from __future__ import annotations

import importlib

from engine.core import Game, UnknownGameError

# name -> module defining a module-level ``GAME`` instance. Imported on first use.
_BUILTIN: dict[str, str] = {
    "aton": "engine.aton",
    "osirium": "engine.osirium",
}

_GAMES: dict[str, Game] = {}


def register_game(game: Game) -> None:
    """Register a game instance under its descriptor's name (replaces any previous)."""
    _GAMES[game.descriptor.name] = game


def _load_builtins() -> None:
    for name, module in _BUILTIN.items():
        if name not in _GAMES:
            game = importlib.import_module(module).GAME
            register_game(game)


def list_games() -> list[Game]:
    """Every registered game, by name."""
    _load_builtins()
    return [_GAMES[n] for n in sorted(_GAMES)]


def get_game(name: str) -> Game:
    """The game registered under ``name`` (case-insensitive); :class:`UnknownGameError`
    names the known games otherwise."""
    game = _GAMES.get(name) if isinstance(name, str) else None
    if game is not None:  # an exact name (the service asks on every call that opens a token)
        return game
    _load_builtins()
    key = name.strip().lower() if isinstance(name, str) else name
    try:
        return _GAMES[key]
    except (KeyError, TypeError):
        known = ", ".join(sorted(_GAMES))
        raise UnknownGameError(f"unknown game {name!r} (known: {known})") from None
