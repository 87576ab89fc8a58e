"""serq fit's coefficients are costs, each at least 0: where ordinary least squares gives one below 0, the
fit is the least-squares optimum over coefficients at least 0, and it names the coefficients held at 0."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from serq_sim.fit import fit_steps, nnls, render, to_json

# (decoders, kv_decode, prefilled, attention, time). c appears alone in the idle step, so c = 1; a and b
# are free in the two prefill steps, which they fit exactly (c + a = 3, c + a + b = 5); the three decode
# steps fit c + d + e * kv_decode to the times 5, 4.5, 4.4 at kv_decode 1, 2, 3.
STEPS = [(0, 0, 0, 0, 1.0), (1, 1, 0, 0, 5.0), (1, 2, 0, 0, 4.5), (1, 3, 0, 0, 4.4), (0, 0, 1, 0, 3.0),
         (0, 0, 1, 1, 5.0)]
# Unconstrained: e is the slope of (5, 4.5, 4.4) on (1, 2, 3): ((-1)(5 - 13.9/3) + (1)(4.4 - 13.9/3)) / 2
# = -0.3, and c + d the intercept 13.9/3 + 0.6. With e >= 0: e = 0 (the gradient of the squared error in e
# at e = 0 is -2 * sum(kv * residual) = -2 * (1 * 0.3667 - 2 * 0.1333 - 3 * 0.2333) = 1.2 > 0, so the
# optimum stays there), c + d the mean time 13.9/3, so d = 10.9/3; c, a, b as before.
CONSTRAINED = {"c": 1.0, "d": 10.9 / 3, "e": 0.0, "a": 2.0, "b": 2.0}


@pytest.mark.timeout(60)
def test_a_negative_least_squares_coefficient_gives_the_constrained_optimum():
    fit = fit_steps(STEPS)
    for k, v in CONSTRAINED.items():
        assert fit.coefficients[k] == pytest.approx(v, abs=1e-12), k
    assert fit.coefficients["e"] == 0.0
    assert list(fit.at_zero) == ["e"] and fit.at_zero["e"] == pytest.approx(-0.3, abs=1e-12)
    # the decode steps' errors are those of the mean 13.9/3 against 5, 4.5, 4.4
    mean = 13.9 / 3
    want = (abs(mean - 5) / 5 + abs(mean - 4.5) / 4.5 + abs(mean - 4.4) / 4.4) / 3
    assert fit.mape["decode"] == pytest.approx(want, rel=1e-9)
    text = render(fit, "p")
    # (the unconstrained value as the fit printed it: its last digits are the BLAS's rounding)
    m = re.search(r"held at 0: e \(unconstrained: (-?[0-9.e+-]+)\)", text)
    assert m and float(m.group(1)) == pytest.approx(-0.3, abs=1e-12), text
    assert json.loads(to_json(fit))["at_zero"]["e"] == pytest.approx(-0.3, abs=1e-12)


@pytest.mark.timeout(60)
def test_steps_timed_by_nonnegative_coefficients_recover_them():
    # a zero coefficient among them, e = 0: recovered as 0 (or as less than 1e-15 s a token), never below
    known = {"c": 0.01, "d": 2e-4, "e": 0.0, "a": 5e-5, "b": 3e-9}
    rng = np.random.default_rng(4)
    steps = []
    for i in range(60):
        dec = int(rng.integers(0, 64)) if i % 3 else 0
        kv = dec * int(rng.integers(10, 500))
        pre = int(rng.integers(0, 512)) if i % 3 != 1 else 0
        att = pre * (int(rng.integers(0, 2000)) + pre / 2)
        t = known["c"] + known["d"] * dec + known["e"] * kv + known["a"] * pre + known["b"] * att
        steps.append((dec, kv, pre, att, t))
    fit = fit_steps(steps)
    for k, v in known.items():
        assert fit.coefficients[k] >= 0
        assert fit.coefficients[k] == pytest.approx(v, rel=1e-6, abs=1e-15), k


@pytest.mark.timeout(60)
def test_nnls_is_the_best_of_every_feasible_subset():
    # the constrained optimum is the least-squares fit on some set of columns, the others 0: the best such
    # fit with every coefficient at least 0, found by trying all 2**5 sets
    rng = np.random.default_rng(11)
    for _ in range(40):
        a, b = rng.standard_normal((9, 5)), rng.standard_normal(9)
        x = nnls(a, b)
        assert (x >= 0).all()
        best = np.inf
        for k in range(6):
            for cols in itertools.combinations(range(5), k):
                z = np.zeros(5)
                if cols:
                    z[list(cols)] = np.linalg.lstsq(a[:, list(cols)], b, rcond=None)[0]
                if (z >= 0).all():
                    best = min(best, float(np.linalg.norm(a @ z - b)))
        assert float(np.linalg.norm(a @ x - b)) == pytest.approx(best, rel=1e-9, abs=1e-12)
