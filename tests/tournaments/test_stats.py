"""Match statistics: hand-computed values, lines copied from published cutechess-cli and fastchess
logs, and properties (MLE constraints, mirror symmetry, monotonicity, a brute-force MLE)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mallard.tournaments.stats import (
    CUTECHESS_Z_95,
    PENTANOMIAL_SCORES,
    TRINOMIAL_SCORES,
    PentaStats,
    Sprt,
    WdlStats,
    elo_from_score,
    logistic_mle,
    normalized_mle,
    score_from_elo,
)

Z = 1.959963985
NELO_SCALE = 800 / math.log(10)


def hand_elo(score):
    return -400 * math.log10(1 / score - 1)


def mean_and_sd(probabilities, scores):
    mean = sum(p * a for p, a in zip(probabilities, scores))
    return mean, math.sqrt(sum(p * (a - mean) ** 2 for p, a in zip(probabilities, scores)))


# --- reference values from cutechess-cli and fastchess -----------------------------------------


def test_bayesian_model_matches_cutechess_at_40_wins():
    sprt = Sprt(0, 10, model="bayesian")
    llr = sprt.llr_trinomial(40, 0, 0)
    assert llr == pytest.approx(1.3767, abs=1e-4)
    assert sprt.cutechess_line(llr) == "SPRT: llr 1.38 (46.8%), lbound -2.94, ubound 2.94"


def test_normalized_pentanomial_matches_fastchess():
    sprt = Sprt(0, 5, model="normalized")
    llr = sprt.llr_pentanomial([1, 2, 0, 0, 0])
    assert round(llr, 2) == -0.05
    assert llr == pytest.approx(-0.0504, abs=1e-4)
    assert sprt.fastchess_line(llr) == "LLR: -0.05 (-2.94, 2.94) [0.00, 5.00]"


# --- lines from published cutechess-cli logs (W, L, D and what cutechess printed) ---------------


@pytest.mark.parametrize("wins, losses, draws, printed", [
    (93, 93, 114, "Elo difference: 0.0 +/- 31.0, LOS: 50.0 %, DrawRatio: 38.0 %"),
    (87, 87, 26, "Elo difference: 0.0 +/- 45.1, LOS: 50.0 %, DrawRatio: 13.0 %"),
    (1, 1, 6, "Elo difference: 0.0 +/- 125.4, LOS: 50.0 %, DrawRatio: 75.0 %"),
    (1, 1, 0, "Elo difference: 0.0 +/- nan, LOS: 50.0 %, DrawRatio: 0.0 %"),
    (1, 0, 0, "Elo difference: inf +/- nan, LOS: 84.1 %, DrawRatio: 0.0 %"),
    (485, 492, 442, "Elo difference: -1.7 +/- 15.0, LOS: 41.1 %, DrawRatio: 31.1 %"),
    (334, 380, 458, "Elo difference: -13.6 +/- 15.5, LOS: 4.3 %, DrawRatio: 39.1 %"),
    (2637, 2644, 6515, "Elo difference: -0.2 +/- 4.2, LOS: 46.2 %, DrawRatio: 55.2 %"),
    (0, 80, 7, "Elo difference: -551.0 +/- 159.1, LOS: 0.0 %, DrawRatio: 8.0 %"),
])
def test_elo_line_matches_published_cutechess_output(wins, losses, draws, printed):
    assert WdlStats(wins, losses, draws).cutechess_lines("A", "B")[1] == printed


@pytest.mark.parametrize("wins, losses, draws, elo0, elo1, printed", [
    (334, 380, 458, 0, 10, "SPRT: llr -2.97 (-101.0%), lbound -2.94, ubound 2.94"),
    (2637, 2644, 6515, 0, 5, "SPRT: llr -2.95 (-100.3%), lbound -2.94, ubound 2.94"),
    (0, 80, 7, 0, 5, "SPRT: llr -3 (-101.9%), lbound -2.94, ubound 2.94"),
])
def test_sprt_line_matches_published_cutechess_output(wins, losses, draws, elo0, elo1, printed):
    sprt = Sprt(elo0, elo1, model="bayesian")
    line = sprt.cutechess_line(sprt.llr_trinomial(wins, losses, draws))
    assert line == printed + " - H0 was accepted"


# --- lines from published fastchess logs (default normalized model) ----------------------------


@pytest.mark.parametrize("counts, elo0, elo1, error_rate, printed", [
    ([790, 1759, 3256, 1780, 807], 0, 5, 0.05, "LLR: -0.71 (-24.1%) (-2.94, 2.94) [0.00, 5.00]"),
    ([352, 579, 1264, 743, 464], 9, 16, 0.01, "LLR: 4.60 (100.0%) (-4.60, 4.60) [9.00, 16.00]"),
])
def test_llr_line_matches_published_fastchess_output(counts, elo0, elo1, error_rate, printed):
    sprt = Sprt(elo0, elo1, error_rate, error_rate, model="normalized")
    assert sprt.fastchess_line(sprt.llr_pentanomial(counts), with_percentage=True) == printed


@pytest.mark.parametrize("counts, printed", [
    ([790, 1759, 3256, 1780, 807], "1.48 +/- 5.26"),
    ([55, 116, 214, 185, 112], "56.76 +/- 18.44"),
    ([352, 579, 1264, 743, 464], "24.25 +/- 8.26"),
    ([13, 34, 232, 71, 29], "53.96 +/- 24.73"),
])
def test_pentanomial_nelo_matches_published_fastchess_output(counts, printed):
    ll, ld, half, wd, ww = counts
    penta = PentaStats(ll=ll, ld=ld, wl=half, wd=wd, ww=ww)
    assert f"{penta.nelo():.2f} +/- {penta.nelo_error_margin():.2f}" == printed


# --- hand-computed Elo, margin, LOS ------------------------------------------------------------


def test_elo_margin_and_los_by_hand():
    stats = WdlStats(wins=45, losses=35, draws=20)
    assert stats.games == 100 and stats.score == 0.55 and stats.draw_ratio == 0.2
    assert stats.elo() == pytest.approx(hand_elo(0.55))
    assert stats.elo() == pytest.approx(34.86, abs=0.01)

    variance = (45 * 0.45 ** 2 + 20 * 0.05 ** 2 + 35 * 0.55 ** 2) / 100
    assert variance == pytest.approx(0.1975)
    deviation = Z * math.sqrt(variance / 100)
    margin = (hand_elo(0.55 + deviation) - hand_elo(0.55 - deviation)) / 2
    assert stats.elo_error_margin() == pytest.approx(margin)
    assert stats.elo_error_margin() == pytest.approx(61.8, abs=0.05)

    assert stats.los() == pytest.approx(100 * (0.5 + 0.5 * math.erf(10 / math.sqrt(160))))
    assert stats.los() == pytest.approx(86.82, abs=0.01)

    assert stats.nelo() == pytest.approx(0.05 / math.sqrt(variance) * NELO_SCALE)
    assert stats.nelo_error_margin() == pytest.approx(Z / 10 * NELO_SCALE)


def test_cutechess_lines_format():
    stats = WdlStats(wins=45, losses=35, draws=20)
    deviation = CUTECHESS_Z_95 * math.sqrt(0.1975 / 100)
    margin = (hand_elo(0.55 + deviation) - hand_elo(0.55 - deviation)) / 2
    assert stats.cutechess_lines("Mallard", "Base") == (
        "Score of Mallard vs Base: 45 - 35 - 20  [0.550] 100",
        f"Elo difference: 34.9 +/- {margin:.1f}, LOS: 86.8 %, DrawRatio: 20.0 %",
    )
    assert CUTECHESS_Z_95 == pytest.approx(1.9572, abs=1e-4)


def test_cutechess_lines_without_losses_or_wins():
    assert WdlStats(3, 0, 0).cutechess_lines("a", "b") == (
        "Score of a vs b: 3 - 0 - 0  [1.000] 3",
        "Elo difference: inf +/- nan, LOS: 95.8 %, DrawRatio: 0.0 %",
    )
    assert WdlStats(0, 3, 0).cutechess_lines("a", "b")[1] == (
        "Elo difference: -inf +/- nan, LOS: 4.2 %, DrawRatio: 0.0 %")


def test_los_is_symmetric_and_ignores_draws():
    assert WdlStats(30, 20, 7).los() + WdlStats(20, 30, 7).los() == pytest.approx(100.0)
    assert WdlStats(30, 20, 0).los() == WdlStats(30, 20, 500).los()
    assert WdlStats(0, 0, 9).los() == 50.0


def test_all_draws():
    stats = WdlStats(0, 0, 10)
    assert stats.elo() == 0.0 and stats.elo_error_margin() == 0.0
    assert math.isnan(stats.nelo()) and math.isnan(stats.nelo_error_margin())
    assert stats.cutechess_lines("a", "b")[1] == (
        "Elo difference: 0.0 +/- 0.0, LOS: 50.0 %, DrawRatio: 100.0 %")


def test_no_games_and_edge_scores():
    empty = WdlStats()
    assert math.isnan(empty.score) and math.isnan(empty.elo())
    assert math.isnan(empty.elo_error_margin())
    assert empty.los() == 50.0
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    assert math.isnan(elo_from_score(1.5)) and math.isnan(elo_from_score(-0.1))
    assert elo_from_score(score_from_elo(123.4)) == pytest.approx(123.4)
    with pytest.raises(ValueError):
        WdlStats(-1, 0, 0)


# --- pentanomial bookkeeping -------------------------------------------------------------------


def test_from_pair_results_counts_every_kind_of_pair():
    pairs = [(0, 0), (0, 0.5), (0.5, 0), (1, 0), (0, 1), (0.5, 0.5), (1, 0.5), (1, 1), (1, 1)]
    penta = PentaStats.from_pair_results(pairs)
    assert (penta.ll, penta.ld, penta.wl, penta.dd, penta.wd, penta.ww) == (1, 2, 2, 1, 1, 2)
    assert penta.counts() == [1, 2, 3, 1, 2] and penta.pairs == 9
    assert penta.fastchess_line() == "Ptnml(0-2): [1, 2, 3, 1, 2]"
    wdl = penta.to_wdl()
    assert (wdl.wins, wdl.losses, wdl.draws) == (7, 6, 5)
    losing_pairs = PentaStats.from_pair_results([(0, 0), (0, 0.5), (0.5, 0)])
    assert losing_pairs.fastchess_line() == "Ptnml(0-2): [1, 2, 0, 0, 0]"
    with pytest.raises(ValueError):
        penta.add(0.25, 1)


def test_pentanomial_nelo_by_hand():
    penta = PentaStats(ll=1, ld=2, wl=1, dd=1, wd=3, ww=2)  # [1, 2, 2, 3, 2], 10 pairs
    mean = (0 * 1 + 0.25 * 2 + 0.5 * 2 + 0.75 * 3 + 1 * 2) / 10
    variance = (1 * mean ** 2 + 2 * (0.25 - mean) ** 2 + 2 * (0.5 - mean) ** 2
                + 3 * (0.75 - mean) ** 2 + 2 * (1 - mean) ** 2) / 10
    assert penta.nelo() == pytest.approx((mean - 0.5) / math.sqrt(2 * variance) * NELO_SCALE)
    assert penta.nelo_error_margin() == pytest.approx(
        Z * math.sqrt(variance / 10) / math.sqrt(2 * variance) * NELO_SCALE)
    assert math.isnan(PentaStats(dd=4).nelo()) and math.isnan(PentaStats().nelo())


# --- SPRT set-up -------------------------------------------------------------------------------


def test_bounds_and_status():
    sprt = Sprt(0, 5)
    assert sprt.lower_bound == pytest.approx(-2.944, abs=1e-3)
    assert sprt.upper_bound == pytest.approx(2.944, abs=1e-3)
    assert sprt.status(3.0) == "H1" and sprt.status(-3.0) == "H0" and sprt.status(0.1) == "continue"
    assert sprt.status(sprt.upper_bound) == "H1" and sprt.status(sprt.lower_bound) == "H0"
    assert sprt.cutechess_line(3.1).endswith(" - H1 was accepted")
    assert sprt.cutechess_line(-3.1).endswith(" - H0 was accepted")
    assert sprt.cutechess_line(0.0) == "SPRT: llr 0 (0.0%), lbound -2.94, ubound 2.94"


@pytest.mark.parametrize("kwargs, message", [
    (dict(elo0=5, elo1=5), "smaller than elo1"),
    (dict(elo0=5, elo1=0), "smaller than elo1"),
    (dict(elo0=0, elo1=5, alpha=0), "alpha"),
    (dict(elo0=0, elo1=5, beta=1), "beta"),
    (dict(elo0=0, elo1=5, alpha=0.6, beta=0.5), "alpha \\+ beta"),
    (dict(elo0=0, elo1=5, model="trinomial"), "unknown SPRT model"),
    (dict(elo0=0, elo1=math.inf), "finite"),
])
def test_invalid_settings_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Sprt(**kwargs)


def test_bayesian_has_no_pentanomial_form():
    with pytest.raises(ValueError, match="pentanomial"):
        Sprt(0, 5, model="bayesian").llr_pentanomial([1, 2, 3, 4, 5])


def test_llr_convenience_dispatches():
    wdl, penta = WdlStats(20, 15, 30), PentaStats(ll=2, ld=5, wl=4, dd=9, wd=8, ww=3)
    sprt = Sprt(0, 5, model="logistic")
    assert sprt.llr(wdl, penta, use_penta=False) == sprt.llr_trinomial(20, 15, 30)
    assert sprt.llr(wdl, penta, use_penta=True) == sprt.llr_pentanomial([2, 5, 13, 8, 3])
    assert sprt.llr_pentanomial(penta) == sprt.llr_pentanomial([2, 5, 13, 8, 3])
    with pytest.raises(ValueError):
        sprt.llr(wdl, None, use_penta=True)
    assert sprt.llr_trinomial(0, 0, 0) == 0.0 and sprt.llr_pentanomial([0] * 5) == 0.0


# --- MLE properties ----------------------------------------------------------------------------


@pytest.mark.parametrize("observed, scores", [
    ([0.2, 0.5, 0.3], TRINOMIAL_SCORES),
    ([0.01, 0.09, 0.9], TRINOMIAL_SCORES),
    ([0.1, 0.2, 0.4, 0.2, 0.1], PENTANOMIAL_SCORES),
    ([1e-5, 0.3, 0.3, 0.2, 0.2 - 1e-5], PENTANOMIAL_SCORES),
])
@pytest.mark.parametrize("elo", [-300, -5, 0, 5, 40, 300])
def test_logistic_mle_has_the_hypothesis_mean(observed, scores, elo):
    target = score_from_elo(elo)
    fitted = logistic_mle(observed, scores, target)
    assert sum(fitted) == pytest.approx(1.0, abs=1e-12)
    assert mean_and_sd(fitted, scores)[0] == pytest.approx(target, abs=1e-12)
    assert all(p > 0 for p in fitted)


@pytest.mark.parametrize("observed, scores", [
    ([0.2, 0.5, 0.3], TRINOMIAL_SCORES),
    ([0.1, 0.2, 0.4, 0.2, 0.1], PENTANOMIAL_SCORES),
    ([0.05, 0.3, 0.3, 0.3, 0.05], PENTANOMIAL_SCORES),
])
@pytest.mark.parametrize("normalized_score", [-0.3, -0.02, 0.0, 0.02, 0.3])
def test_normalized_mle_has_the_hypothesis_normalized_score(observed, scores, normalized_score):
    fitted = normalized_mle(observed, scores, normalized_score)
    mean, sd = mean_and_sd(fitted, scores)
    assert sum(fitted) == pytest.approx(1.0, abs=1e-9)
    assert (mean - 0.5) / sd == pytest.approx(normalized_score, abs=1e-6)


def _grid_max_log_likelihood(observed, distributions):
    best = -math.inf
    for distribution in distributions:
        if min(distribution) > 0:
            best = max(best, sum(p * math.log(q) for p, q in zip(observed, distribution)))
    return best


def _trinomials_with_mean(mean, steps=20000):
    # p_draw is the one free parameter: p_win = mean - p_draw / 2, p_loss = 1 - mean - p_draw / 2.
    top = 2 * min(mean, 1 - mean)
    for k in range(1, steps):
        draw = top * k / steps
        yield 1 - mean - draw / 2, draw, mean - draw / 2


def _trinomials_with_normalized_score(t, steps=20000):
    # Mean and sd fix a three-point distribution; mean = 1/2 + t sd leaves the sd free.
    for k in range(1, steps):
        sd = 0.5 * k / steps
        mean = 0.5 + t * sd
        draw = 4 * (mean - mean * mean - sd * sd)
        yield 1 - mean - draw / 2, draw, mean - draw / 2


@pytest.mark.parametrize("wins, losses, draws", [(30, 20, 50), (12, 3, 5), (0, 7, 40)])
def test_logistic_trinomial_llr_matches_a_brute_force_maximum(wins, losses, draws):
    sprt = Sprt(-10, 15, model="logistic")
    regularised = [count or 1e-3 for count in (losses, draws, wins)]
    total = sum(regularised)
    observed = [count / total for count in regularised]
    best0 = _grid_max_log_likelihood(observed, _trinomials_with_mean(score_from_elo(-10)))
    best1 = _grid_max_log_likelihood(observed, _trinomials_with_mean(score_from_elo(15)))
    brute_force_llr = total * (best1 - best0)
    assert sprt.llr_trinomial(wins, losses, draws) == pytest.approx(brute_force_llr, abs=1e-4)


@pytest.mark.parametrize("wins, losses, draws", [(30, 20, 50), (12, 3, 5)])
def test_normalized_trinomial_llr_matches_a_brute_force_maximum(wins, losses, draws):
    sprt = Sprt(-10, 15, model="normalized")
    total = wins + losses + draws
    observed = [losses / total, draws / total, wins / total]
    best0 = _grid_max_log_likelihood(observed, _trinomials_with_normalized_score(-10 / NELO_SCALE))
    best1 = _grid_max_log_likelihood(observed, _trinomials_with_normalized_score(15 / NELO_SCALE))
    brute_force_llr = total * (best1 - best0)
    assert sprt.llr_trinomial(wins, losses, draws) == pytest.approx(brute_force_llr, abs=1e-4)


# --- SPRT properties ---------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=400)
models = st.sampled_from(["bayesian", "logistic", "normalized"])
hypotheses = st.tuples(st.floats(-20, 20), st.floats(0.5, 15)).map(
    lambda low_and_width: (low_and_width[0], low_and_width[0] + low_and_width[1]))


@settings(max_examples=60, deadline=None)
@given(wins=counts, losses=counts, draws=counts, model=models, bounds=hypotheses)
def test_trinomial_llr_is_finite_grows_with_wins_and_mirrors(wins, losses, draws, model, bounds):
    elo0, elo1 = bounds
    sprt = Sprt(elo0, elo1, model=model)
    llr = sprt.llr_trinomial(wins, losses, draws)
    assert math.isfinite(llr)
    # The bayesian model re-estimates the draw Elo, and with it the Elo scale, from the data, so
    # a first win among hundreds of draws can lower its LLR (0-0-612 at [-1, 0] does); the
    # generalised SPRT has no such coupling.
    if model != "bayesian":
        assert sprt.llr_trinomial(wins + 1, losses, draws) > llr - 1e-9
    mirrored = Sprt(-elo1, -elo0, model=model).llr_trinomial(losses, wins, draws)
    assert mirrored == pytest.approx(-llr, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(penta=st.lists(counts, min_size=5, max_size=5),
       model=st.sampled_from(["logistic", "normalized"]), bounds=hypotheses)
def test_pentanomial_llr_is_finite_grows_with_double_wins_and_mirrors(penta, model, bounds):
    elo0, elo1 = bounds
    sprt = Sprt(elo0, elo1, model=model)
    llr = sprt.llr_pentanomial(penta)
    assert math.isfinite(llr)
    assert sprt.llr_pentanomial(penta[:4] + [penta[4] + 1]) > llr - 1e-9
    mirrored = Sprt(-elo1, -elo0, model=model).llr_pentanomial(penta[::-1])
    assert mirrored == pytest.approx(-llr, abs=1e-6)


def test_more_wins_move_the_llr_towards_h1():
    for model in ("bayesian", "logistic", "normalized"):
        sprt = Sprt(0, 5, model=model)
        llrs = [sprt.llr_trinomial(wins, 100, 100) for wins in range(90, 131, 10)]
        assert llrs == sorted(llrs) and llrs[0] < 0 < llrs[-1]


def test_normalized_model_rejects_unreachable_hypotheses():
    # 1000 normalized Elo is 2.9 standard deviations; the linearised fit, started from the
    # uniform distribution, cannot get there and must say so rather than return a number.
    with pytest.raises(ValueError, match="too extreme"):
        Sprt(0, 1000, model="normalized").llr_trinomial(10, 10, 10)


def test_bayesian_llr_stays_finite_when_draws_dominate():
    # Here the hypotheses' BayesElo is so large that 1 - pWin - pLoss rounds to 0 in linear space.
    sprt = Sprt(60, 61, model="bayesian")
    llr = sprt.llr_trinomial(0, 0, 247)
    assert math.isfinite(llr) and llr < 0
    assert Sprt(-61, -60, model="bayesian").llr_trinomial(0, 0, 247) == pytest.approx(-llr)


def test_our_lines_print_n_a_where_a_figure_has_no_value():
    """`nElo: nan +/- nan` when every pair was 1-1: a figure without a value reads n/a."""
    from types import SimpleNamespace

    from mallard.tournaments.cli import ranking_lines

    def match(wdl, penta, names=("a", "b")):
        engines = [SimpleNamespace(name=name) for name in names]
        standings = [SimpleNamespace(name=name, wdl=wdl) for name in names]
        return SimpleNamespace(engines=engines, wdl=wdl, penta=penta, standings=standings,
                               sprt_llr=lambda: None)

    lines = ranking_lines(match(WdlStats(wins=2, losses=2), PentaStats(wl=2)))
    assert lines[-1] == "nElo: n/a +/- n/a (2 pairs)"
    table = ranking_lines(match(WdlStats(wins=1), PentaStats(), names=("a", "b", "c")))
    assert table[1].split()[2:4] == ["inf", "n/a"]  # unbounded, and no margin at all
