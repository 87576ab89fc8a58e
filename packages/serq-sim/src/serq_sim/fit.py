"""``serq fit STEPS.jsonl``: a step-cost profile fitted to measured iterations.

A step trace is JSON Lines, one object per iteration of a step engine: its composition, the terms of a
step stage's cost (``decoders``, ``kv_decode``, ``prefilled``, ``attention``; a term left out is 0), and
``time``, the iteration's measured duration in seconds (positive). The fit is non-negative least squares
of ``time`` on the terms ``1, decoders, kv_decode, prefilled, attention``, giving the coefficients ``c, d,
e, a, b`` of

    c + d * decoders + e * kv_decode + a * prefilled + b * attention

the form of lib/step_costs.sq's profiles, each coefficient at least 0: a cost is not negative (a negative
``e`` made a long decode context cheaper than a short one, and a large enough batch take a negative time).
When the ordinary least-squares fit has every coefficient at least 0 it is the fit; else the fit is the
least-squares optimum over the coefficients at least 0 (non-negative least squares, :func:`nnls`), in
which the coefficients the constraint binds are 0, and the fit names those whose unconstrained value is
negative beyond the solve's round-off (``Fit.at_zero``, with the value the unconstrained fit gave each;
:data:`ROUNDOFF`). Its error is the mean absolute percentage error
``mean(|fit - time| / time)`` by batch kind: ``decode`` (decoders > 0, prefilled = 0), ``prefill``
(prefilled > 0, decoders = 0), ``mixed`` (both) and ``idle`` (neither).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import partial

from serq.errors import UserError, shown_path
from serq.jsonin import JSONDuplicateKey, JSONNumberError, loads, located, number_at, read_text, value_at

#: The composition terms, in the order of their coefficients after the fixed term ``c``.
TERMS = ("decoders", "kv_decode", "prefilled", "attention")
#: The coefficients' names: c for the fixed term, then one per term.
COEFFICIENTS = ("c", "d", "e", "a", "b")
KINDS = ("decode", "prefill", "mixed", "idle")
#: A coefficient the constraint holds at 0 is named (``Fit.at_zero``) only when its unconstrained value is
#: negative beyond this share of the times: its part in the fitted times, ``|value| * norm(term's values)``,
#: above ``ROUNDOFF * norm(times)``. Less is the round-off of the least-squares solve (a term the times do not
#: depend on comes out as about -1e-19, not 0).
ROUNDOFF = 1e-9


@dataclass
class Fit:
    coefficients: dict[str, float]
    steps: int
    counts: dict[str, int] = field(default_factory=dict)  # steps by batch kind
    mape: dict[str, float] = field(default_factory=dict)  # by batch kind (NaN for a kind with no step)
    #: the coefficients held at 0 by the constraint (each at least 0) whose unconstrained value, given, is
    #: negative beyond the round-off (:data:`ROUNDOFF`)
    at_zero: dict[str, float] = field(default_factory=dict)

    def definition(self, name: str) -> str:
        """The profile as an expression definition for lib/step_costs.sq or a program."""
        c = self.coefficients
        terms = " + ".join(f"{c[k]!r} * {t}" for k, t in zip(COEFFICIENTS[1:], TERMS))
        return f"def {name}() = {c['c']!r} + {terms};"


def kind(decoders: float, prefilled: float) -> str:
    if prefilled > 0:
        return "mixed" if decoders > 0 else "prefill"
    return "decode" if decoders > 0 else "idle"


_NONBLANK = re.compile(r"\S")


def _lines(text: str):
    """The lines of ``text`` (split at ``\\n``) that are not blank, with their numbers, one at a time: a
    list of every line held a string per line (a file of 256 MB of blank lines took 2 GB), and the blank
    ones are passed over at the regular expression's speed."""
    pos, n, line, counted = 0, len(text), 1, 0
    while True:
        m = _NONBLANK.search(text, pos)
        if m is None:
            return
        start = text.rfind("\n", 0, m.start()) + 1
        line += text.count("\n", counted, start)
        counted = start
        end = text.find("\n", m.start())
        end = n if end < 0 else end
        yield line, text[start:end]
        pos = end + 1


def _fault(path: str, no: int, raw: str, message: str, at: tuple = (), key: bool = False,
           pos: int | None = None) -> UserError:
    """The error of line ``no`` (``raw``) of a step trace at the column of the value (or with ``key`` the key) at
    ``at`` in it (:func:`serq.jsonin.value_at`), or at the character offset ``pos``: the line quoted, a caret
    under the column (a value's fault was told by the line's number alone)."""
    if pos is None:
        pos = value_at(raw, at, key=key)
    return UserError(located(raw, path, no, 1 if pos is None else pos + 1, message, first=no))


def _not_json(fault, raw: str, e: json.JSONDecodeError) -> UserError:
    """The error of a line that is no JSON: in the file's words where it is a line end or a byte-order mark
    (json says "Extra data" of steps split by a carriage return alone, and "decode using utf-8-sig" of a
    byte-order mark where only the file's first character may be one), else json's."""
    body = raw.rstrip("\r")  # (a line of \r\n ends: json reads the \r as space)
    cr = body.find("\r")
    if cr >= 0 and cr <= e.pos:
        return fault("a carriage return alone ends a line here: a step trace is JSON Lines, one step a line, "
                     "each ended by \\n (or \\r\\n)", pos=cr)
    bom = raw.find("\ufeff")
    if bom >= 0 and bom <= e.pos:
        return fault("a byte-order mark (U+FEFF) here: only the file's first character may be one", pos=bom)
    from serq.files import text_utf16_note

    note = text_utf16_note(raw)  # (the first line of a file of UTF-16, said as such)
    return fault(f"not a JSON object: {e.msg}{note}", pos=e.colno - 1)


def read_steps(path: str) -> list[tuple[float, float, float, float, float]]:
    """The steps of a JSON Lines file: ``(decoders, kv_decode, prefilled, attention, time)`` each; a
    mistake is one error at its line."""
    text = read_text(path, "a step trace", file_first=True)  # (every message of serq fit names the file first)
    steps = []
    for no, raw in _lines(text):
        fault = partial(_fault, path, no, raw)
        try:
            obj = loads(raw)
        except JSONNumberError as e:
            raise fault(str(e), pos=number_at(raw)) from None
        except JSONDuplicateKey as e:  # json kept the last: which the writer meant is anybody's guess
            raise fault(f"{e} (first at column {e.first + 1})", pos=e.pos) from None
        except json.JSONDecodeError as e:  # a step is one line: e.colno is the column in it
            raise _not_json(fault, raw, e) from None
        except RecursionError:  # json.loads recurses a frame per level of [ or {: at the value's start
            raise fault("not a step: JSON nested too deeply", pos=len(raw) - len(raw.lstrip())) from None
        if not isinstance(obj, dict):
            raise fault(f"a step is a JSON object with {', '.join(TERMS)} and time")
        unknown = [k for k in obj if k not in TERMS and k != "time"]
        if unknown:
            first = min(unknown)  # (the first in sorted order, as it was)
            raise fault(f"unknown key {first!r} (a step has {', '.join(TERMS)} and time)", (first,), key=True)
        row = []
        for key in (*TERMS, "time"):
            v = obj.get(key, 0 if key != "time" else None)
            if v is None:
                raise fault("the step has no time (its duration in seconds)")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                shown = json.dumps(v)  # (a string or an array of megabytes: the caret shows where it is)
                shown = shown if len(shown) <= 60 else f"{shown[:40]}...{shown[-10:]} ({len(shown)} characters)"
                raise fault(f"{key} is {shown}: a finite number, not negative", (key,))
            row.append(float(v))
        if not row[-1] > 0:
            raise fault("time is 0: an iteration takes a positive time", ("time",))
        steps.append(tuple(row))
    if not steps:
        raise UserError(f"{shown_path(path)}: error: no steps")
    return steps


def nnls(a, b, *, max_rounds: int = 100):
    """The ``x >= 0`` that minimises ``|a @ x - b|`` (Lawson and Hanson's active-set method), for the few
    columns of a fit, each of full rank together: the coefficients start at 0 (all held), the one whose
    freeing lowers the residual most is freed, the freed ones are solved by least squares, and a step
    that would take one below 0 stops where the first reaches 0, which is held again."""
    import numpy as np

    m, n = a.shape
    x = np.zeros(n)
    free = np.zeros(n, dtype=bool)
    w = a.T @ b
    tol = 10 * max(m, n) * np.finfo(float).eps * max(float(np.abs(w).max()), np.finfo(float).tiny)
    for _ in range(max_rounds):
        held = ~free
        if not held.any() or not (w[held] > tol).any():
            break
        free[np.flatnonzero(held)[np.argmax(w[held])]] = True
        while True:
            z = np.zeros(n)
            z[free] = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
            if (z[free] > 0).all():
                break
            down = np.flatnonzero(free & (z <= 0))
            ratios = x[down] / (x[down] - z[down])
            x = x + ratios.min() * (z - x)
            free[down[np.argmin(ratios)]] = False  # the first to reach 0 is held again, and any other there
            free &= x > 0
            x[~free] = 0.0
        x = z
        w = a.T @ (b - a @ x)
    return x


def fit_steps(steps, where: str = "") -> Fit:
    """Least squares of the steps' times on the terms, every coefficient at least 0 (see the module's
    docstring); ``where`` (the file's name) heads an error."""
    import numpy as np

    a = np.asarray(steps, dtype=np.float64)
    x = np.column_stack([np.ones(len(a)), a[:, :4]])
    t = a[:, 4]
    head = f"{shown_path(where)}: error:" if where else "error:"  # (a name as every message prints one)
    for j, term in enumerate(TERMS, 1):
        if not np.any(x[:, j]):
            raise UserError(f"{head} no step has {term} > 0: its coefficient {COEFFICIENTS[j]} cannot be fitted")
    # the columns scaled to unit norm, so that terms of very different sizes (attention ~1e9) condition well
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.linalg.norm(x, axis=0)
        big = [term for term, s in zip(("time", *TERMS), np.append(np.linalg.norm(t), scale[1:])) if not np.isfinite(s)]
    if big:  # every value is finite, but their squares summed are not: no fit in floating point
        raise UserError(f"{head} the values of {big[0]} are too large to fit (their squares overflow a float)")
    # a column of values below 1e-154 has squares that underflow: its norm was 0, the column divided by it
    # infinite, and lstsq printed LAPACK's complaint and raised LinAlgError; its norm taken in units of its
    # largest value instead
    peak = np.abs(x).max(axis=0)
    tiny = scale == 0
    if tiny.any():
        scale[tiny] = peak[tiny] * np.linalg.norm(x[:, tiny] / peak[tiny], axis=0)
    try:
        with np.errstate(all="ignore"):
            coef, _, rank, _ = np.linalg.lstsq(x / scale, t, rcond=None)
    except np.linalg.LinAlgError:  # pragma: no cover - every column and time finite and scaled: not seen
        raise UserError(f"{head} the least-squares fit does not converge over these {len(a)} steps") from None
    if len(a) < x.shape[1]:
        raise UserError(f"{head} {len(a)} step{'s' if len(a) > 1 else ''} cannot determine the {x.shape[1]} "
                        "coefficients c, d, e, a and b: a fit wants many steps of each kind, over the batch sizes "
                        "and contexts to simulate")
    if rank < x.shape[1]:
        raise UserError(f"{head} the terms are linearly dependent over these {len(a)} steps "
                        f"(in every step, {'; '.join(dependencies(x / scale, scale, rank))}): the fit is not "
                        "determined (give steps in which these terms vary apart)")
    at_zero: dict[str, float] = {}
    if (coef < 0).any():  # the unconstrained optimum is no cost: the optimum over coefficients at least 0
        # a coefficient the constraint holds is named when its unconstrained value is negative beyond the
        # round-off of the solve: its part in the fitted times (the scaled coefficient, its column of norm 1)
        # below -ROUNDOFF times the times' norm. A term the times do not depend on at all came out as
        # -1e-19 or so, and was named as held at 0 when nothing held it.
        bound = -ROUNDOFF * float(np.linalg.norm(t))
        with np.errstate(all="ignore"):
            free = coef / scale
            binding = coef < bound
            coef = nnls(x / scale, t)
        at_zero = {n: float(v) for n, v, c, b in zip(COEFFICIENTS, free, coef, binding) if c == 0 and b}
    with np.errstate(all="ignore"):
        # + 0.0 makes a -0.0 (the solve's sign of a term the times do not depend on, exactly 0 where the
        # times are subnormal) 0.0: a cost is at least 0, and `-0.0 * prefilled` was printed in the profile
        coef = coef / scale + 0.0
        pred = x @ coef
        ape = np.abs(pred - t) / t
    for name, term, v in zip(COEFFICIENTS, ("c", *TERMS), coef):
        if not math.isfinite(v):  # a term far smaller than the times it explains (1e-320 against 1)
            raise UserError(f"{head} the coefficient {name} of {term} is beyond the range of a float: the values "
                            f"of {term} are too small beside the times to fit")
    if not np.isfinite(ape).all():
        i = int(np.flatnonzero(~np.isfinite(ape))[0])
        if math.isfinite(pred[i]):  # the fit is finite: a time too small for an error relative to it
            raise UserError(f"{head} the {_ordinal(i + 1)} step's time, {float(t[i])!r} s, is too short for an "
                            f"error relative to it (beside the fitted {float(pred[i]):.6g} s, beyond the range of "
                            "a float): a time is in seconds")
        raise UserError(f"{head} the fitted times are beyond the range of a float (values of too different "
                        "magnitudes to fit)")
    kinds = np.array([kind(d, p) for d, p in zip(a[:, 0], a[:, 2])])
    counts, mape = {}, {}
    for k in KINDS:
        sel = kinds == k
        counts[k] = int(sel.sum())
        mape[k] = float(ape[sel].mean()) if counts[k] else math.nan
    return Fit(coefficients={n: float(v) for n, v in zip(COEFFICIENTS, coef)}, steps=len(a), counts=counts,
               mape=mape, at_zero=at_zero)


def dependencies(scaled, scale, rank: int) -> list[str]:
    """The linear relations that hold among the columns of a fit of rank ``rank`` below its width, each an
    equation of one term (``kv_decode = 1000 * decoders``, ``prefilled = 512``): the null space of the
    scaled columns (the right singular vectors past the rank), brought to one equation a term by
    elimination from the last term back, so that each equation's subject is a term the others leave out,
    its coefficients in the terms' own units (a column's scale put back) and rounded to 6 digits; a term
    whose part in the relation (its coefficient times its column's norm) is below 1e-9 of the largest is
    the rounding of the decomposition, and is left out."""
    import numpy as np

    # the thin decomposition: the steps are at least the terms (fit_steps refuses fewer), so its right singular
    # vectors are all of them; the full one made the left ones too, a square of the steps (10^6 steps: 8 TB,
    # `error: out of memory` for a trace of constant terms)
    null = np.linalg.svd(scaled, full_matrices=False)[2][rank:] / scale  # each row w: sum_k w_k x_k = 0 in every step
    rows, subjects = list(null / np.abs(null).max(axis=1, keepdims=True)), []
    for col in range(null.shape[1] - 1, -1, -1):
        i = next((i for i, w in enumerate(rows) if i >= len(subjects)
                  and abs(w[col] * scale[col]) > 1e-9 * np.abs(w * scale).max()), None)
        if i is None:
            continue
        rows[len(subjects)], rows[i] = rows[i], rows[len(subjects)]
        w = rows[len(subjects)] = rows[len(subjects)] / -rows[len(subjects)][col]
        rows = [r if r is w else r + r[col] * w for r in rows]  # col leaves every other equation
        subjects.append(col)
    names, equations = ("1", *TERMS), []
    for col, w in zip(subjects, rows):
        size = np.abs(w * scale)  # a term's part in the relation, whatever its unit (attention ~1e9 a step)
        w[size < 1e-9 * size.max()] = 0.0
        rest = [f"{v:.6g}" if k == 0 else {"1": t, "-1": f"-{t}"}.get(f"{v:.6g}", f"{v:.6g} * {t}")
                for k, (t, v) in enumerate(zip(names, w)) if k != col and v != 0]
        equations.append(f"{names[col]} = {' + '.join(rest).replace('+ -', '- ') if rest else '0'}")
    return equations


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def render(fit: Fit, name: str) -> str:
    lines = [f"fit: {fit.steps} steps, non-negative least squares of time on "
             "c + d * decoders + e * kv_decode + a * prefilled + b * attention", ""]
    lines.append("coefficient  value")
    units = {"c": "s per iteration", "d": "s per decoding request", "e": "s per token of decode context",
             "a": "s per prefilled token", "b": "s per unit of prefill attention"}
    for k in COEFFICIENTS:
        lines.append(f"{k:<11}  {fit.coefficients[k]!r}  ({units[k]})")
    if fit.at_zero:
        held = ", ".join(f"{k} (unconstrained: {v!r})" for k, v in fit.at_zero.items())
        lines += ["", f"held at 0: {held}; a cost is not negative, and this is the least-squares fit with every "
                  "coefficient at least 0"]
    lines += ["", "kind     steps  mape"]
    for k in KINDS:
        if fit.counts[k]:
            lines.append(f"{k:<7}  {fit.counts[k]:>5}  {fit.mape[k] * 100:.2f} %")
    lines += ["", fit.definition(name)]
    return "\n".join(lines) + "\n"


def to_json(fit: Fit) -> str:
    mape = {k: (v if v == v else None) for k, v in fit.mape.items() if fit.counts[k]}
    doc = {"sum": fit.coefficients, "sum_mape": mape, "n": fit.steps,
           "counts": {k: v for k, v in fit.counts.items() if v}}
    if fit.at_zero:  # the coefficients the constraint holds at 0, with their unconstrained values
        doc["at_zero"] = fit.at_zero
    return json.dumps(doc, indent=1) + "\n"
