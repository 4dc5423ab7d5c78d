"""Making bots from spec strings: ``random``, ``greedy``, ``mcts``, ``mcts:hard,workers=2``...

The contract itself (:class:`~ai.bot.Bot`, :class:`~ai.bot.Decision`, :class:`~ai.bot.Budget`...)
is :mod:`ai.bot`; it is re-exported here, so that callers import everything from one place.
"""

from __future__ import annotations

from collections.abc import Callable

from ai.bot import (
    ActionStat,
    Bot,
    BotSpecError,
    Budget,
    Decision,
    Diagnostics,
    RandomBot,
)
from ai.greedy import make_greedy
from ai.mcts import make_mcts
from ai.purebuild import checkout_bot, pure_bot

__all__ = [
    "ActionStat",
    "Bot",
    "BotSpecError",
    "Budget",
    "Decision",
    "Diagnostics",
    "RandomBot",
    "bot_kinds",
    "make_bot",
    "split_bot_specs",
]

#: Bot kinds besides ``random``: kind -> factory(params), where params is what follows
#: ``kind:`` in the spec (``""`` if none).
_FACTORIES: dict[str, Callable[[str], Bot]] = {
    "greedy": make_greedy,
    "mcts": make_mcts,
}


def bot_kinds() -> list[str]:
    return ["random", *sorted(_FACTORIES), "pure", "checkout"]


def split_bot_specs(text: str) -> list[str]:
    """Split a comma-separated list of bot specs where a spec's own parameters also use
    commas: ``"mcts:medium,ms=none,greedy,random"`` -> ``["mcts:medium,ms=none", "greedy",
    "random"]``. A ``key=value`` item (no ``:`` before its ``=``) continues the previous
    spec; any other item starts a new one. ``;`` always separates specs. An empty item (two
    separators in a row, one at an end) or a kind with nothing after its ``:`` is a
    :class:`BotSpecError`: a list that lost a spec is not played as a shorter one."""
    out: list[str] = []
    for group in text.split(";"):
        current: list[str] = []
        for item in (t.strip() for t in group.split(",")):
            if not item:
                raise BotSpecError(
                    f"an empty bot spec in {text!r} (two separators in a row, or one at an end)"
                )
            if item.endswith(":"):
                raise BotSpecError(f"bot spec {item!r} has nothing after its ':' (write {item[:-1]!r})")
            if not current or "=" not in item or ":" in item.partition("=")[0]:
                if current:
                    out.append(",".join(current))
                current = [item]
            else:
                current.append(item)
        if current:
            out.append(",".join(current))
    return [_lower_kind(spec) for spec in out]


def _lower_kind(spec: str) -> str:
    """A spec with its kind in lower case, as :func:`make_bot` reads it (``Random`` is
    ``random``: one bot, one name in an arena's table)."""
    kind, sep, rest = spec.partition(":")
    return kind.lower() + sep + rest


def same_bot(spec: str) -> tuple[str, ...]:
    """What makes a spec's bot: two specs with the same key play the same way
    (``random`` and ``random:``; ``mcts:iterations=5,ms=none`` and ``mcts:ms=none,it=5``)."""
    from ai.mcts_params import parse_params

    kind, _, params = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind in ("random", "greedy") and not params.strip():
        return (kind,)
    if kind == "mcts":
        try:
            return (kind, repr(parse_params(params)[1]))
        except ValueError:  # BotSpecError: make_bot says it
            pass
    return (spec.strip(),)


def make_bot(spec: str) -> Bot:
    """Build a bot from its spec: ``kind`` or ``kind:params``."""
    kind, _, params = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind == "random":
        if params:
            raise BotSpecError("the random bot takes no parameters")
        return RandomBot()
    if kind == "pure":  # pure:<spec>: <spec> decided by the pure-Python build (ai/purebuild.py)
        return pure_bot(params.strip(), make_bot)
    if kind == "checkout":  # checkout:<path>:<spec>: decided by another checkout (ai/purebuild.py)
        return checkout_bot(params, make_bot)
    factory = _FACTORIES.get(kind)
    if factory is None and not params and kind.partition(",")[0] in bot_kinds():
        raise BotSpecError(
            f"{spec.strip()!r}: parameters follow the kind after ':' (the {kind.partition(',')[0]} bot)"
        )
    if factory is None:
        raise BotSpecError(f"unknown bot kind {kind!r} (known: {', '.join(bot_kinds())})")
    return factory(params)
