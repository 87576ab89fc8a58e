"""Closed forms of classical queueing theory, used by the statistical tests beside this file.

Every function returns a mean in the time unit of its arguments. Each derivation is given in a line or
two; the references are the textbook ones (Kleinrock vol. 1, Harchol-Balter, Lazowska et al.).
"""

from __future__ import annotations

import math

# --- service laws: the first two moments of the laws serQ draws -----------------------------------


def moments(law: str, mean: float, *, k: int = 4, cv2: float = 4.0) -> tuple[float, float]:
    """(E[S], E[S^2]) of a service law of the given mean.

    E[S^2] = Var[S] + E[S]^2 = (1 + cv2) E[S]^2, with cv2 the law's squared coefficient of variation:
    exp 1, det 0, Erlang-k 1/k, balanced H2 its parameter cv2.
    """
    cv = {"exp": 1.0, "det": 0.0, "erlang": 1.0 / k, "h2": cv2}[law]
    return mean, (1.0 + cv) * mean * mean


def law_expr(law: str, mean: float, *, k: int = 4, cv2: float = 4.0) -> str:
    """The serQ draw of that law."""
    return {
        "exp": f"~exp({mean})",
        "det": f"~det({mean})",
        "erlang": f"~erlang({k}, {mean})",
        "h2": f"~h2({mean}, {cv2})",
    }[law]


# --- M/G/1 FIFO ----------------------------------------------------------------------------------


def pk_response(lam: float, m1: float, m2: float) -> float:
    """Pollaczek–Khinchine mean response of M/G/1 FIFO.

    The mean residual work an arrival finds in service is lam E[S^2] / 2 (PASTA and renewal-reward), and
    it waits for that plus the work of the L_q customers queued ahead: W = lam E[S^2]/2 + rho W, with
    L_q = lam W by Little, so W = lam E[S^2] / (2 (1 - rho)); the response adds its own service.
    """
    rho = lam * m1
    assert rho < 1
    return lam * m2 / (2.0 * (1.0 - rho)) + m1


# --- M/M/c ---------------------------------------------------------------------------------------


def erlang_c(c: int, a: float) -> float:
    """Erlang C: the probability that an arrival waits in M/M/c with offered load a = lam / mu < c.

    From the birth–death chain, pi_n ∝ a^n / n! for n < c and a^c/c! (a/c)^(n-c) beyond; summing the
    geometric tail gives P(wait) = [a^c / (c! (1 - a/c))] / [sum_{n<c} a^n/n! + a^c / (c! (1 - a/c))].
    """
    rho = a / c
    assert rho < 1
    tail = a**c / (math.factorial(c) * (1.0 - rho))
    return tail / (sum(a**n / math.factorial(n) for n in range(c)) + tail)


def mmc_response(lam: float, mu: float, c: int) -> float:
    """Mean response of M/M/c FIFO: a waiting arrival waits Exp(c mu - lam) (the queue drains at c mu
    while lam arrives), so W = C(c, a) / (c mu - lam); plus its own service 1 / mu."""
    return erlang_c(c, lam / mu) / (c * mu - lam) + 1.0 / mu


# --- M/G/1-PS ------------------------------------------------------------------------------------


def ps_response(lam: float, m1: float) -> float:
    """Mean response of M/G/1 processor sharing: E[T | S = x] = x / (1 - rho) for every service law
    (insensitivity; Kleinrock 1967), so E[T] = E[S] / (1 - rho)."""
    rho = lam * m1
    assert rho < 1
    return m1 / (1.0 - rho)


# --- closed M/M/1//N -----------------------------------------------------------------------------


def mva(n_users: int, s: float, z: float) -> tuple[float, float]:
    """Exact mean value analysis of one exponential FIFO station of mean service s and a delay (think)
    station of mean z with n_users circulating: (mean response at the station, throughput).

    Arrival theorem: a customer arriving at the station sees the time-average queue of the network with
    one customer fewer, so R(n) = s (1 + Q(n-1)); Little on the cycle, X(n) = n / (z + R(n)); Little on
    the station, Q(n) = X(n) R(n); starting from Q(0) = 0.
    """
    q = 0.0
    r = x = 0.0
    for n in range(1, n_users + 1):
        r = s * (1.0 + q)
        x = n / (z + r)
        q = x * r
    return r, x


# --- Jackson tandem ------------------------------------------------------------------------------


def tandem_response(lam: float, mus: list[float]) -> float:
    """Mean response through exponential FIFO stations in series fed by Poisson(lam): by Burke's
    theorem each station's departures are Poisson(lam) and the stations are independent M/M/1
    queues in steady state (Jackson's product form), each of mean response 1 / (mu_i - lam)."""
    assert all(lam < mu for mu in mus)
    return sum(1.0 / (mu - lam) for mu in mus)


# --- non-preemptive priority (Cobham) ------------------------------------------------------------


def cobham_responses(lams: list[float], m1s: list[float], m2s: list[float]) -> list[float]:
    """Mean response per class of a non-preemptive priority M/G/1 (class 0 highest; FIFO within a class).

    W0 = sum_i lam_i E[S_i^2] / 2 is the mean residual work of the customer in service (PASTA). A class-k
    arrival waits W0, the work of the classes <= k already queued, and the work of the classes < k that
    arrive while it waits: W_k = W0 / ((1 - sigma_{k-1}) (1 - sigma_k)), sigma_k = sum_{i<=k} rho_i
    (Cobham 1954). The response adds the class's own mean service.
    """
    w0 = sum(lam * m2 for lam, m2 in zip(lams, m2s)) / 2.0
    out = []
    sigma_prev = 0.0
    for lam, m1 in zip(lams, m1s):
        sigma = sigma_prev + lam * m1
        assert sigma < 1
        out.append(w0 / ((1.0 - sigma_prev) * (1.0 - sigma)) + m1)
        sigma_prev = sigma
    return out


# --- GI/M/1 --------------------------------------------------------------------------------------


def h2_laplace(mean: float, cv2: float, s: float) -> float:
    """E[e^{-sA}] of the balanced-means hyperexponential of the given mean and cv2 (serQ's ~h2): with
    probability p an Exp of rate 2p/mean, else an Exp of rate 2(1-p)/mean,
    p = (1 + sqrt((cv2 - 1) / (cv2 + 1))) / 2."""
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    r1, r2 = 2.0 * p / mean, 2.0 * (1.0 - p) / mean
    return p * r1 / (r1 + s) + (1.0 - p) * r2 / (r2 + s)


def gim1_response(laplace, mu: float) -> float:
    """Mean response of GI/M/1 FIFO with exponential service of rate mu, given the interarrival law's
    Laplace transform. An arrival finds n customers with probability (1 - s) s^n, s the root in (0, 1) of
    s = A*(mu (1 - s)) (the embedded chain at arrivals), so its response, n + 1 exponential services, has
    mean 1 / (mu (1 - s)). The root is the limit of the iteration from 0, which increases monotonically."""
    s = 0.0
    for _ in range(100_000):
        nxt = laplace(mu * (1.0 - s))
        if abs(nxt - s) < 1e-15:
            break
        s = nxt
    assert 0.0 < s < 1.0
    return 1.0 / (mu * (1.0 - s))
