"""Match statistics for engine-vs-engine matches: Elo, error margins, LOS, normalized Elo, and the
sequential probability ratio test (SPRT) over trinomial (per game) and pentanomial (per game
pair) results.

Conventions:
- Every count is from the first engine's point of view: wins W, losses L, draws D.
- A score is a fraction of the available points: 1 win, 1/2 draw, 0 loss; a game pair scores the
  mean of its two games, so pair scores are 0, 1/4, 1/2, 3/4 and 1.
- Pentanomial counts are listed as [LL, LD, WL+DD, WD, WW], from the worst pair to the best.
- Error margins are two-sided 95% intervals (z = 1.959963985; the cutechess Elo line uses
  cutechess's own approximation of it, CUTECHESS_Z_95).
- Undefined statistics are math.nan, unbounded ones +/-math.inf; nothing here raises on
  degenerate counts, only on invalid arguments (negative counts, bad SPRT settings, or
  hypotheses too extreme for the maximum-likelihood fits, e.g. hundreds of normalized Elo).
- SPRT models: "bayesian" is cutechess-cli 1.x's BayesElo test (trinomial only); "logistic" and
  "normalized" are the generalised SPRT of fishtest and fastchess. With no games at all every
  model returns an LLR of 0.0 (there is no evidence either way).
- The `cutechess_*` and `fastchess_*` methods reproduce those tools' output lines character for
  character, so logs can be compared with, and parsed by, tools written for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

Z_95 = 1.959963985
# Converts a normalized score difference (in standard deviations) to normalized Elo.
NELO_SCALE = 800.0 / math.log(10.0)

TRINOMIAL_SCORES = (0.0, 0.5, 1.0)
PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)

SPRT_MODELS = ("bayesian", "logistic", "normalized")

# Empty categories would pin an MLE probability to zero and make the LLR degenerate; fastchess
# replaces them with this pseudo-count, and matching it keeps our LLRs equal to fastchess's.
EMPTY_CATEGORY_PSEUDO_COUNT = 1e-3
# cutechess's Bayesian model starts from Jeffreys' prior: half a game in each outcome.
JEFFREYS_PSEUDO_COUNT = 0.5


def _winitzki_erfinv(x: float) -> float:
    """Winitzki's closed-form approximation of the inverse error function, with
    a = 8(pi - 3) / (3 pi (4 - pi))."""
    a = 8.0 * (math.pi - 3.0) / (3.0 * math.pi * (4.0 - math.pi))
    log_term = math.log(1.0 - x * x)
    middle = 2.0 / (math.pi * a) + log_term / 2.0
    return math.copysign(math.sqrt(math.sqrt(middle * middle - log_term / a) - middle), x)


# cutechess-cli takes its 95% quantile from Winitzki's approximation (1.95716, not 1.95996). The
# Elo line uses it so that it is identical to cutechess's: published cutechess logs print
# `+/- 31.0`, `+/- 45.1` and `+/- 125.4` for 93-93-114, 87-87-26 and 1-1-6, where the exact
# quantile gives 31.0, 45.2 and 125.6.
CUTECHESS_Z_95 = math.sqrt(2.0) * _winitzki_erfinv(0.95)


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for an expected score; +/-inf at 1 and 0, nan outside [0, 1]."""
    if math.isnan(score) or score < 0.0 or score > 1.0:
        return math.nan
    if score == 1.0:
        return math.inf
    if score == 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score of a player `elo` logistic Elo points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def _qt_fixed(value: float, decimals: int) -> str:
    # cutechess (through Qt) prints the Elo of an even score, -0.0 here, as 0.0.
    if value == 0.0:
        value = 0.0
    return f"{value:.{decimals}f}"


def _qt_significant(value: float, digits: int) -> str:
    if value == 0.0:
        value = 0.0
    return f"{value:.{digits}g}"


def _log_add_exp(a: float, b: float) -> float:
    """log(e^a + e^b) without overflow."""
    larger, smaller = max(a, b), min(a, b)
    return larger + math.log1p(math.exp(smaller - larger))


def _check_counts(counts: Iterable[float]) -> list[float]:
    checked = [float(count) for count in counts]
    if any(math.isnan(count) or count < 0 for count in checked):
        raise ValueError(f"counts must be non-negative numbers, got {checked}")
    return checked


def _mean_and_variance(frequencies: Sequence[float],
                       scores: Sequence[float]) -> tuple[float, float]:
    mean = sum(f * a for f, a in zip(frequencies, scores))
    variance = sum(f * (a - mean) ** 2 for f, a in zip(frequencies, scores))
    return mean, variance


@dataclass
class WdlStats:
    """Wins, losses and draws of the first engine."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    def __post_init__(self) -> None:
        _check_counts((self.wins, self.losses, self.draws))

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> float:
        if self.games == 0:
            return math.nan
        return (self.wins + 0.5 * self.draws) / self.games

    @property
    def draw_ratio(self) -> float:
        if self.games == 0:
            return math.nan
        return self.draws / self.games

    def _per_game_variance(self) -> float:
        return _mean_and_variance(
            [self.losses / self.games, self.draws / self.games, self.wins / self.games],
            TRINOMIAL_SCORES,
        )[1]

    def elo(self) -> float:
        return elo_from_score(self.score)

    def elo_error_margin(self, z: float = Z_95) -> float:
        """Half the width, in Elo, of the interval score +/- z standard errors (95% by default)
        mapped through elo_from_score. nan when there are no games, when the score is 0 or 1
        (the interval is [inf, inf]), and when the score interval leaves [0, 1] - as cutechess
        prints it (`inf +/- nan`, `0.0 +/- nan`), since no Elo corresponds to such a score."""
        if self.games == 0:
            return math.nan
        score_deviation = z * math.sqrt(self._per_game_variance() / self.games)
        upper = elo_from_score(self.score + score_deviation)
        lower = elo_from_score(self.score - score_deviation)
        return (upper - lower) / 2.0

    def los(self) -> float:
        """Likelihood of superiority in percent; draws carry no information about it."""
        decisive = self.wins + self.losses
        if decisive == 0:
            return 50.0
        return 100.0 * (0.5 + 0.5 * math.erf((self.wins - self.losses) / math.sqrt(2.0 * decisive)))

    def nelo(self) -> float:
        """Normalized Elo: the score excess over 1/2 in per-game standard deviations, scaled so
        that it matches logistic Elo for small differences without draws."""
        if self.games == 0:
            return math.nan
        variance = self._per_game_variance()
        if variance == 0.0:
            return math.nan
        return (self.score - 0.5) / math.sqrt(variance) * NELO_SCALE

    def nelo_error_margin(self) -> float:
        if self.games == 0:
            return math.nan
        variance = self._per_game_variance()
        if variance == 0.0:
            return math.nan
        return Z_95 * math.sqrt(variance / self.games) / math.sqrt(variance) * NELO_SCALE

    def cutechess_lines(self, name_a: str, name_b: str) -> tuple[str, str]:
        """The `Score of ...` and `Elo difference: ...` lines as cutechess-cli prints them,
        including its approximate 95% quantile (CUTECHESS_Z_95) in the margin."""
        score_line = (
            f"Score of {name_a} vs {name_b}: {self.wins} - {self.losses} - {self.draws}"
            f"  [{_qt_fixed(self.score, 3)}] {self.games}"
        )
        margin = self.elo_error_margin(CUTECHESS_Z_95)
        elo_line = (
            f"Elo difference: {_qt_fixed(self.elo(), 1)} +/- {_qt_fixed(margin, 1)}"
            f", LOS: {_qt_fixed(self.los(), 1)} %"
            f", DrawRatio: {_qt_fixed(100.0 * self.draw_ratio, 1)} %"
        )
        return score_line, elo_line


@dataclass
class PentaStats:
    """Results of colour-swapped game pairs, from the first engine's view. WL (one win, one
    loss) and DD (two draws) are kept apart although both score 1/2, because they say different
    things about the opening."""

    ll: int = 0
    ld: int = 0
    wl: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    def __post_init__(self) -> None:
        _check_counts((self.ll, self.ld, self.wl, self.dd, self.wd, self.ww))

    @classmethod
    def from_pair_results(cls, pairs: Iterable[tuple[float, float]]) -> PentaStats:
        stats = cls()
        for first_game, second_game in pairs:
            stats.add(first_game, second_game)
        return stats

    def add(self, first_game: float, second_game: float) -> None:
        """Count one pair; each score is 1, 0.5 or 0 for the first engine."""
        for game_score in (first_game, second_game):
            if game_score not in (0, 0.5, 1):
                raise ValueError(f"a game score must be 0, 0.5 or 1, got {game_score!r}")
        wins = (first_game == 1) + (second_game == 1)
        losses = (first_game == 0) + (second_game == 0)
        if losses == 2:
            self.ll += 1
        elif wins == 2:
            self.ww += 1
        elif wins == 1 and losses == 1:
            self.wl += 1
        elif losses == 1:
            self.ld += 1
        elif wins == 1:
            self.wd += 1
        else:
            self.dd += 1

    def counts(self) -> list[int]:
        return [self.ll, self.ld, self.wl + self.dd, self.wd, self.ww]

    @property
    def pairs(self) -> int:
        return sum(self.counts())

    def to_wdl(self) -> WdlStats:
        return WdlStats(
            wins=2 * self.ww + self.wd + self.wl,
            losses=2 * self.ll + self.ld + self.wl,
            draws=self.ld + 2 * self.dd + self.wd,
        )

    def _pair_mean_and_variance(self) -> tuple[float, float]:
        frequencies = [count / self.pairs for count in self.counts()]
        return _mean_and_variance(frequencies, PENTANOMIAL_SCORES)

    def nelo(self) -> float:
        """Normalized Elo from pair scores; the factor 2 converts the pair variance back to a
        per-game variance, so the value is comparable with WdlStats.nelo()."""
        if self.pairs == 0:
            return math.nan
        mean, variance = self._pair_mean_and_variance()
        if variance == 0.0:
            return math.nan
        return (mean - 0.5) / math.sqrt(2.0 * variance) * NELO_SCALE

    def nelo_error_margin(self) -> float:
        if self.pairs == 0:
            return math.nan
        _, variance = self._pair_mean_and_variance()
        if variance == 0.0:
            return math.nan
        return Z_95 * math.sqrt(variance / self.pairs) / math.sqrt(2.0 * variance) * NELO_SCALE

    def fastchess_line(self) -> str:
        return f"Ptnml(0-2): [{', '.join(str(count) for count in self.counts())}]"


def _solve_tilt(weights: Sequence[float], offsets: Sequence[float]) -> float:
    """The root theta of sum_i w_i x_i / (1 + theta x_i) on the interval where every
    1 + theta x_i > 0. The function falls strictly from +inf to -inf there, so the root is unique;
    Newton steps are kept inside a shrinking bracket and replaced by bisection when they would
    leave it, because the poles at both ends make plain Newton unsafe."""
    active = [(w, x) for w, x in zip(weights, offsets) if w > 0.0]
    largest = max(x for _, x in active)
    smallest = min(x for _, x in active)
    if not (largest > 0.0 > smallest):
        raise ValueError("the target lies outside the range of the observed scores")
    lower, upper = -1.0 / largest, -1.0 / smallest
    theta = 0.0
    for _ in range(300):
        value = 0.0
        slope = 0.0
        for w, x in active:
            denominator = 1.0 + theta * x
            value += w * x / denominator
            slope -= w * x * x / (denominator * denominator)
        if value == 0.0:
            return theta
        if value > 0.0:
            lower = theta
        else:
            upper = theta
        candidate = theta - value / slope
        if not lower < candidate < upper:
            candidate = 0.5 * (lower + upper)
            if not lower < candidate < upper:
                return theta  # the bracket is down to adjacent floats
        if abs(candidate - theta) <= 1e-14 * max(1.0, abs(theta)):
            return candidate
        theta = candidate
    return theta


def logistic_mle(probabilities: Sequence[float], scores: Sequence[float],
                 mean_score: float) -> list[float]:
    """The distribution on `scores` with mean `mean_score` that maximises the likelihood of the
    observed `probabilities` (all positive): p_i = phat_i / (1 + theta (a_i - s))."""
    offsets = [a - mean_score for a in scores]
    theta = _solve_tilt(probabilities, offsets)
    return [p / (1.0 + theta * x) for p, x in zip(probabilities, offsets)]


def normalized_mle(
    probabilities: Sequence[float],
    scores: Sequence[float],
    normalized_score: float,
    reference: float = 0.5,
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
) -> list[float]:
    """The maximum-likelihood distribution on `scores` whose (mean - reference) / sd equals
    `normalized_score`. That constraint is not linear in p, so it is linearised around the
    current estimate and re-solved until the estimate stops moving."""
    estimate = [1.0 / len(scores)] * len(scores)
    for _ in range(max_iterations):
        mean, variance = _mean_and_variance(estimate, scores)
        sd = math.sqrt(variance)
        constraint = [
            a - reference - 0.5 * normalized_score * sd * (1.0 + ((a - mean) / sd) ** 2)
            for a in scores
        ]
        try:
            theta = _solve_tilt(probabilities, constraint)
        except ValueError:
            raise ValueError(
                f"the normalized-Elo fit cannot reach normalized score {normalized_score} from"
                " these observations; the hypothesis is too extreme"
            ) from None
        updated = [p / (1.0 + theta * phi) for p, phi in zip(probabilities, constraint)]
        change = max(abs(new - old) for new, old in zip(updated, estimate))
        estimate = updated
        if change < tolerance:
            break
    return estimate


class Sprt:
    """Sequential probability ratio test of H0: elo = elo0 against H1: elo = elo1.

    alpha is the false-positive rate (accepting H1 when H0 holds), beta the false-negative rate.
    For "normalized" the hypotheses are in normalized Elo, otherwise in logistic Elo."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 model: str = "logistic") -> None:
        if model not in SPRT_MODELS:
            raise ValueError(
                f"unknown SPRT model {model!r}; expected one of {', '.join(SPRT_MODELS)}")
        if not (math.isfinite(elo0) and math.isfinite(elo1)):
            raise ValueError(f"elo0 and elo1 must be finite, got {elo0} and {elo1}")
        if not elo0 < elo1:
            raise ValueError(f"elo0 must be smaller than elo1, got elo0={elo0}, elo1={elo1}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
        if not 0.0 < beta < 1.0:
            raise ValueError(f"beta must lie strictly between 0 and 1, got {beta}")
        if not alpha + beta < 1.0:
            raise ValueError(f"alpha + beta must be smaller than 1, got {alpha} + {beta}")
        self.elo0 = elo0
        self.elo1 = elo1
        self.alpha = alpha
        self.beta = beta
        self.model = model
        self.lower_bound = math.log(beta / (1.0 - alpha))
        self.upper_bound = math.log((1.0 - beta) / alpha)

    def __repr__(self) -> str:
        return (f"Sprt(elo0={self.elo0}, elo1={self.elo1}, alpha={self.alpha}, beta={self.beta}, "
                f"model={self.model!r})")

    def status(self, llr: float) -> str:
        """The accepted hypothesis, "H1" or "H0", once the LLR reaches a bound; else
        "continue"."""
        if llr >= self.upper_bound:
            return "H1"
        if llr <= self.lower_bound:
            return "H0"
        return "continue"

    def llr(self, wdl: WdlStats, penta: PentaStats | None = None, use_penta: bool = False) -> float:
        if use_penta:
            if penta is None:
                raise ValueError("use_penta needs pentanomial statistics")
            return self.llr_pentanomial(penta.counts())
        return self.llr_trinomial(wdl.wins, wdl.losses, wdl.draws)

    def llr_trinomial(self, wins: float, losses: float, draws: float) -> float:
        losses_draws_wins = _check_counts((losses, draws, wins))
        if sum(losses_draws_wins) == 0:
            return 0.0
        if self.model == "bayesian":
            return self._bayesian_llr(wins, losses, draws)
        return self._generalised_llr(losses_draws_wins, TRINOMIAL_SCORES, pentanomial=False)

    def llr_pentanomial(self, penta_counts: Sequence[float] | PentaStats) -> float:
        """LLR from pentanomial counts [LL, LD, WL+DD, WD, WW] (or a PentaStats)."""
        if self.model == "bayesian":
            raise ValueError(
                "the bayesian SPRT model has no pentanomial form; use logistic or normalized")
        if isinstance(penta_counts, PentaStats):
            penta_counts = penta_counts.counts()
        counts = _check_counts(penta_counts)
        if len(counts) != 5:
            raise ValueError(
                f"pentanomial counts need 5 entries [LL, LD, WL+DD, WD, WW], got {len(counts)}")
        if sum(counts) == 0:
            return 0.0
        return self._generalised_llr(counts, PENTANOMIAL_SCORES, pentanomial=True)

    def _generalised_llr(self, counts: Sequence[float], scores: Sequence[float],
                         pentanomial: bool) -> float:
        regularised = [count if count > 0 else EMPTY_CATEGORY_PSEUDO_COUNT for count in counts]
        total = sum(regularised)
        observed = [count / total for count in regularised]
        if self.model == "logistic":
            h0 = logistic_mle(observed, scores, score_from_elo(self.elo0))
            h1 = logistic_mle(observed, scores, score_from_elo(self.elo1))
        else:
            # A pair's score has half a game's variance when the games are independent, so the
            # same normalized Elo is sqrt(2) times further away in pair standard deviations.
            per_unit = math.sqrt(2.0) if pentanomial else 1.0
            h0 = normalized_mle(observed, scores, per_unit * self.elo0 / NELO_SCALE)
            h1 = normalized_mle(observed, scores, per_unit * self.elo1 / NELO_SCALE)
        return total * sum(p * math.log(q1 / q0) for p, q0, q1 in zip(observed, h0, h1))

    def _bayesian_llr(self, wins: float, losses: float, draws: float) -> float:
        wins += JEFFREYS_PSEUDO_COUNT
        losses += JEFFREYS_PSEUDO_COUNT
        draws += JEFFREYS_PSEUDO_COUNT
        games = wins + losses + draws
        win_rate, loss_rate = wins / games, losses / games
        draw_elo = 200.0 * math.log10((1.0 - loss_rate) / loss_rate * (1.0 - win_rate) / win_rate)
        # Draws compress the Elo scale: the BayesElo difference that gives a logistic Elo
        # difference e is e / scale.
        x = 10.0 ** (-draw_elo / 400.0)
        scale = 4.0 * x / (1.0 + x) ** 2
        # With many draws the hypotheses' BayesElo is large and 1 - pWin - pLoss cancels to 0,
        # so the outcome probabilities are taken in log space, in closed form:
        # pWin = y/(x+y), pLoss = 1/(1+xy), pDraw = y(x^2-1)/((x+y)(1+xy)) with
        # x = 10^(drawElo/400), y = 10^(bayesElo/400); x > 1 because the prior leaves every
        # outcome a positive rate.
        log_x = draw_elo * math.log(10.0) / 400.0
        log_x_squared_minus_one = 2.0 * log_x + math.log(-math.expm1(-2.0 * log_x))

        def log_outcome_probabilities(elo: float) -> tuple[float, float, float]:
            log_y = elo / scale * math.log(10.0) / 400.0
            log_x_plus_y = _log_add_exp(log_x, log_y)
            log_one_plus_xy = _log_add_exp(0.0, log_x + log_y)
            return (log_y - log_x_plus_y, -log_one_plus_xy,
                    log_y + log_x_squared_minus_one - log_x_plus_y - log_one_plus_xy)

        h0 = log_outcome_probabilities(self.elo0)
        h1 = log_outcome_probabilities(self.elo1)
        return sum(count * (q1 - q0) for count, q0, q1 in zip((wins, losses, draws), h0, h1))

    def cutechess_line(self, llr: float) -> str:
        """cutechess-cli's `SPRT: llr ...` line, with the decision appended once there is one."""
        progress = _qt_fixed(llr / self.upper_bound * 100.0, 1)
        line = (
            f"SPRT: llr {_qt_significant(llr, 3)} ({progress}%),"
            f" lbound {_qt_significant(self.lower_bound, 3)},"
            f" ubound {_qt_significant(self.upper_bound, 3)}"
        )
        decision = self.status(llr)
        if decision != "continue":
            line += f" - {decision} was accepted"
        return line

    def fastchess_line(self, llr: float, with_percentage: bool = False) -> str:
        """fastchess's `LLR: ...` line; newer fastchess releases also print the LLR as a
        percentage of the upper bound, which `with_percentage` adds."""
        progress = f" ({llr / self.upper_bound * 100.0:.1f}%)" if with_percentage else ""
        return (f"LLR: {llr:.2f}{progress} ({self.lower_bound:.2f}, {self.upper_bound:.2f})"
                f" [{self.elo0:.2f}, {self.elo1:.2f}]")
