"""What a bot knows about a game, as one typed object passed to the search.

OpenSpiel's ``MCTSBot(game, uct_c, max_simulations, evaluator, ...)`` is given its evaluator;
heka's search (:class:`ai.mcts.Search`) and greedy baseline (:class:`ai.greedy.GreedyBot`)
are given a :class:`GameKnowledge`: the heuristic evaluator, the guided rollout policy, the
default cut-off, rollout, widening and prior, the root ordering and the baseline's rules of
thumb of one game. :class:`GameKnowledge` itself knows nothing of any game (scores only,
random rollouts to the end, no ordering), which is what a game without its own knowledge
gets; ``ai/aton/`` and ``ai/osirium/`` subclass it. :func:`ai.games.knowledge_for` names the
built-in ones.

The search evaluates a new leaf by a *rollout*: it plays the (determinised) state forward
with a rollout policy, either to the end of the game (the true returns) or for at most
``cutoff`` actions, after which :meth:`GameKnowledge.evaluate` estimates every seat's return
in [-1, 1]. Evaluators and rollout policies read the *determinised* state the search hands
them (a sampled world, never the real state), so they may read any of its public fields;
root orderings and the greedy baseline decide for the player to act from that player's
information only (``state.view(player)``).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Sequence
from typing import Final, Generic, TypeAlias, TypeVar

from engine._mypyc import mypyc_attr
from engine.core import State

S = TypeVar("S", bound=State)

#: ``cutoff`` value meaning "roll out to the end of the game".
FULL_ROLLOUT: Final = -1
#: Rollout policy names: uniformly random, or the game's guided policy.
ROLLOUTS: Final[tuple[str, ...]] = ("random", "guided")

#: A rollout policy: one of the state's legal actions, drawn with the rng. Policies read
#: the actions by index (``State.num_legal_actions``, ``State.legal_action_at``): a rollout
#: step then never builds the list of legal actions.
RolloutPolicy: TypeAlias = Callable[[S, random.Random], int]


def squash(x: float) -> float:
    """Map an unbounded advantage to (-1, 1) (``tanh``)."""
    return math.tanh(x)


def score_values(scores: Sequence[int], scale: float) -> tuple[float, ...]:
    """Each seat's value ``tanh((own score - best other score) / scale)``."""
    out = []
    for i, mine in enumerate(scores):
        best_other = max(v for j, v in enumerate(scores) if j != i)
        out.append(math.tanh((mine - best_other) / scale))
    return tuple(out)


def team_average(values: Sequence[float], teams: Sequence[int]) -> tuple[float, ...]:
    """Give both members of a team the mean of their values (O9.3: shared return)."""
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    for v, t in zip(values, teams, strict=True):
        sums[t] = sums.get(t, 0.0) + v
        counts[t] = counts.get(t, 0) + 1
    return tuple(sums[t] / counts[t] for t in teams)


#: Scores within EPS of the best count as equal (ties are broken by the rng).
EPS: Final = 1e-9


def best_action(actions: Sequence[int], score: Callable[[int], float], rng: random.Random) -> int:
    """The highest-scoring of ``actions``; ties (within :data:`EPS`) broken by ``rng``."""
    scored = [(score(a), a) for a in actions]
    top = max(s for s, _ in scored)
    return rng.choice([a for s, a in scored if s >= top - EPS])


@mypyc_attr(allow_interpreted_subclasses=True)  # games' knowledge may be plain Python
class WorldBelief(Generic[S]):
    """A model of what the other seats hold, given what they showed: it redraws the hidden
    parts it models in each world the search samples (``MctsParams.belief``). It is built
    from the searching seat's view only, so it cannot reveal what that seat does not see;
    ``fallbacks`` counts the worlds it left as sampled because its weights were unusable."""

    def __init__(self) -> None:
        self.fallbacks = 0
        #: Running sums of the weights of the outcomes a subclass lists.
        self.cumulative: list[float] = []

    def draw(self, rng: random.Random) -> int:
        """The index of an outcome drawn by its weight, or -1 when the weights are unusable
        (none, or not finite): counted in ``fallbacks``, the world keeps the engine's draw."""
        total = self.cumulative[-1] if self.cumulative else 0.0
        if not 0.0 < total < math.inf:
            self.fallbacks += 1
            return -1
        return weighted_index(self.cumulative, rng)

    def resample(self, world: S, rng: random.Random) -> None:
        """Redraw the modelled hidden parts of ``world`` (a world consistent with the view)."""
        raise NotImplementedError


def weighted_index(cumulative: list[float], rng: random.Random) -> int:
    """An index drawn with probability proportional to the weights whose running sums are
    ``cumulative`` (positive, finite; one ``rng.random()`` draw)."""
    i = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    return i if i < len(cumulative) else len(cumulative) - 1


@mypyc_attr(allow_interpreted_subclasses=True)  # games' knowledge may be plain Python
class GameKnowledge(Generic[S]):
    """The knowledge of a game the bots use; these defaults know nothing of any game.

    Subclasses override what they measured better (``docs/search.md``): the evaluator, a
    guided rollout policy, the defaults of :class:`ai.mcts_params.MctsParams` left to the game, a
    root ordering and the greedy baseline's choice.
    """

    #: The game this knowledge is for (``None``: any game).
    game: str | None = None
    #: Default rollout policy (:data:`ROLLOUTS`).
    default_rollout: str = "random"
    #: Default progressive-widening factor and root-prior weight (0: off).
    default_widen: float = 0.0
    default_prior: float = 0.0
    #: Scale of the score advantage mapped through tanh by the default evaluator.
    score_scale: float = 10.0

    def default_cutoff(self, players: int) -> int:
        """Rollout length before the evaluator takes over (:data:`FULL_ROLLOUT`: none)."""
        return FULL_ROLLOUT

    def evaluate(self, state: S) -> Sequence[float]:
        """Per-seat estimated returns in [-1, 1] of a non-terminal (sampled) state: by
        default the score difference, ``tanh(difference / score_scale)``."""
        return score_values(state.scores(), self.score_scale)

    def guided_policy(self) -> RolloutPolicy[S] | None:
        """The game's guided rollout policy (``rollout=guided``), ``None`` when it has none:
        the search then plays uniformly random rollouts (its inlined draw)."""
        return None

    def belief(self, state: S, player: int, strength: float) -> WorldBelief[S] | None:
        """The game's model of the other seats' hidden parts for ``player``'s search with
        ``MctsParams.belief = strength > 0``, built from ``player``'s view only; ``None``: the
        game has none (the worlds stay uniform)."""
        return None

    def root_order(self, state: S, legal: list[int]) -> list[int] | None:
        """``legal`` (the player to act's actions at the search's root) from the most to the
        least promising, from that player's view only; ``None``: the game has no ordering
        (no progressive widening, no prior)."""
        return None

    def greedy_action(self, state: S, rng: random.Random) -> int:
        """The greedy baseline's choice for the player to act, from that player's
        information only. By default: an action that wins at once in a world sampled
        consistently with the player's view, else a random one."""
        player = state.current_player()
        legal = state.legal_actions()
        world = state.sample_consistent_state(player, rng)
        for a in legal:
            child = world.child(a)
            if child.is_terminal() and child.returns()[player] > 0:
                return a
        return rng.choice(legal)
