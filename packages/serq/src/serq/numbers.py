"""serQ's number syntax for text a user gives outside a program: command-line values (number options,
``--set``, a sweep's lists and ranges, ``--seeds``, ``--slo``, ``--find``) and the cells of a trace.

A number is written as the language writes a numeric literal (kernel.lark's ``NUMBER``): ASCII digits
0-9 with an optional decimal point and exponent (``8010``, ``0.5``, ``.5``, ``3.``, ``2e-5``, ``1e9``), or
``inf``, after an optional ``-``; nothing else, and nothing around it. Python's ``float()`` and ``int()``,
which read these values before, take more: ``1_000`` (1000), other scripts' digits (``١٢`` and ``１２``
are 12), a leading ``+``, ``Infinity`` and surrounding whitespace; each was silently a number a user
had not written. NaN (``nan`` in any case, as ``float()`` spells it) is read only where a caller asks
for it (``nan=True``), to refuse it with its own message; no value a user gives may be NaN.
"""

from __future__ import annotations

import functools
import math
import re

__all__ = ["NAN_PATTERN", "NUMBER_HINT", "PATTERN", "WHOLE_HINT", "NotANumber", "OutOfRange", "below_doubles",
           "beyond_doubles", "digits_reason", "exact", "is_number", "is_real", "rule_hint", "underflows", "whole_value",
           "not_a_number", "not_whole", "number", "quoted", "real", "shown", "too_many_digits", "whole"]

#: the language's numeric literal, or inf, after an optional minus (``[0-9]``, not ``\d``: ``\d`` matches
#: every script's digits), as a pattern a reader may build on
PATTERN = r"-?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf)"
#: NaN as ``float()`` spells it (any case), read only to be refused in a caller's words
NAN_PATTERN = r"-?[nN][aA][nN]"


# The patterns are compiled when first used: most commands that import this module read no number's text.
@functools.cache
def _number() -> re.Pattern[str]:
    return re.compile(PATTERN)


@functools.cache
def _whole() -> re.Pattern[str]:
    return re.compile(r"-?[0-9]+")


@functools.cache
def _nan() -> re.Pattern[str]:
    return re.compile(NAN_PATTERN)


#: what a refusal adds when Python would have read the text as a number
NUMBER_HINT = ("a number is written as in the language: digits 0-9 with an optional decimal point and exponent, "
               "or inf, after an optional -: 1000, 0.5, 1e9, -3, inf")
WHOLE_HINT = "a whole number is digits 0-9 after an optional -: 1000, -3"
#: what a number with blanks around it (``--slo 'ttft=1 '``, ``--seed ' 3'``) is told, with the number without
#: them: every flag reads a number without blanks, as the language writes one (docs/language.md)
BLANKS_HINT = "a number has no blanks around it"


class NotANumber(ValueError):
    """Text that is not a number in serQ's syntax; its message says so, quoting the text (with a hint at the
    rule when Python would have read it as one)."""


class OutOfRange(NotANumber):
    """A number in serQ's syntax whose value the doubles do not hold: beyond them (:func:`beyond_doubles`) or,
    not 0 as written, below the smallest of them (:func:`below_doubles`); its message is said as it is."""


def _python_reads(text: str, kind: type) -> bool:
    try:
        kind(text)
    except (ValueError, OverflowError):
        return False
    return True


def quoted(text: str, width: int = 60) -> str:
    """``text`` as a message quotes it: ``repr``, cut to about ``width`` characters around an ellipsis, with its
    length, when longer (a trace's cell of 100 000 characters, or a flag's value, was quoted whole)."""
    shown = repr(text)
    return shown if len(shown) <= width else f"{shown[:width - 20]}...{shown[-10:]} ({len(text)} characters)"


def shown(v: object) -> str:
    """A value the Python API was given, as a message quotes it: its ``repr``, but an integer of more than
    64 bits as ``an integer of N bits``. Python converts an int of more than 4300 digits to text not at all
    (``ValueError: Exceeds the limit (4300 digits) for integer string conversion``), so a message that quoted
    one (``seeds=[10**5000]``, ``workers=10**5000``, ``report.stage("s", 10**5000)``) raised that instead of
    itself; one of a few hundred digits was quoted whole. The rule of every such message (serq_sim.run's
    arguments, a seed, a sweep's)."""
    import numbers

    if isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v).bit_length() > 64:
        return f"an integer of {int(v).bit_length()} bits"
    return repr(v)


def too_many_digits(v: int) -> str | None:
    """Why the whole number ``v`` is no count a command takes, when it has more digits than Python reads or
    writes a whole number with (``sys.get_int_max_str_digits()``, 4300 by default; 0: no limit): the command
    line cannot give it (``int()`` reads no longer text), and a sweep, which writes the bounds of its runs
    into their keys as text, could not write it (``serq_sweep.sweep(max_events=10**5000)`` failed inside the
    key's JSON with Python's ``ValueError``); None for a shorter one. The reason :class:`serq.options.Integer`
    gives, for the command line's text and the Python API's ints alike."""
    import sys

    limit = sys.get_int_max_str_digits()
    return digits_reason() if limit and abs(v) >= 10**limit else None


def digits_reason() -> str:
    """What :func:`too_many_digits` says of a whole number too long to read or write."""
    import sys

    return f"more than {sys.get_int_max_str_digits()} digits, the most a whole number is read or written with"


def truth_hint(word: object) -> str:
    """`` (serQ has no `true` or `false`: …)`` for a word that is ``true`` or ``false`` in any case (a program's
    ``let caching = true;``, ``branch (true)``, ``--set caching=true``), nothing for any other: a truth value
    is a number, and a user of a language with booleans was told only that the word is no constant, no name
    or no number."""
    if isinstance(word, str) and word.strip(" \t\n\r\f\v").lower() in ("true", "false"):
        return " (serQ has no `true` or `false`: a truth value is a number, 1 for true and 0 for false)"
    return ""


def not_a_number(text: str) -> str:
    """``'1_000' is not a number (…)``: the hint only for text ``float()`` takes (``'x' is not a number``
    says all there is to say), and :func:`truth_hint`'s for ``true`` and ``false``."""
    said = f"{quoted(text)} is not a number"
    if truth_hint(text):
        return said + truth_hint(text)
    blanks = _blanks_around(text, is_number)
    if blanks is not None:
        return f"{said} ({BLANKS_HINT}: {blanks})"
    return f"{said} ({NUMBER_HINT})" if _python_reads(text, float) else said


def _blanks_around(text: str, fits) -> str | None:
    """``text`` without the blanks around it (spaces, tabs, line ends: what a shell's quotes keep) when it
    has some and is, without them, what ``fits`` takes (``'1 '``: ``1``); None otherwise (a no-break space is
    no blank here: the number rule's hint says what such text is not)."""
    bare = text.strip(" \t\n\r\f\v")
    return bare if bare and bare != text and fits(bare) else None


def beyond_doubles(text: str, shown: str | None = None) -> str:
    """``'1e309' is beyond the range of a double (…)``: a literal whose value overflows the doubles, as the IR's
    numbers say it (serq_ir.codec). ``shown`` the text as the message quotes it where not :func:`quoted`'s (a
    program's literal between backquotes, as every message of the frontend quotes source text)."""
    inf = "inf or -inf" if shown is None else "`inf` or `-inf`"
    return (f"{quoted(text) if shown is None else shown} is beyond the range of a double (at most about 1.8e308 in "
            f"size); an infinite value is written {inf}")


def below_doubles(text: str, shown: str | None = None) -> str:
    """``'0.8e-400' is too close to 0 for a double (…)``: a literal of a nonzero value below the smallest double, which
    ``float()`` makes 0 (:func:`underflows`), refused as one beyond them is (:func:`beyond_doubles`, ``shown`` as
    there)."""
    zero = "0" if shown is None else "`0`"
    return (f"{quoted(text) if shown is None else shown} is too close to 0 for a double (the nearest to 0 is about "
            f"4.9e-324 in size) and would be read as 0; zero is written {zero}")


def underflows(text: str, value: float) -> bool:
    """Whether the literal ``text`` (the language's NUMBER, or :data:`PATTERN`'s) that ``float()`` read as ``value``
    is nonzero as written but 0 as read: ``0.8e-400``, ``1e-324`` (``0e-400``, ``0.000`` and a subnormal
    such as ``5e-324`` are not)."""
    if value != 0.0:
        return False
    digits = text.split("e", 1)[0].split("E", 1)[0]
    return any(c in "123456789" for c in digits)


def rule_hint(value: str, kind: type) -> str:
    """The hint at the rule, `` (…)`` (:data:`NUMBER_HINT` for ``kind`` float, :data:`WHOLE_HINT` for int), of
    text ``value`` that Python's ``kind`` reads though the rule does not (``٣``, ``٠.٥``, ``1_0``, ``+1``);
    empty otherwise. What the environment's numbers are refused with (serq_sim.memguard's, a sweep's
    ``SERQ_SWEEP_STOP_AFTER``), in the words every number a user gives is (:func:`not_a_number`)."""
    fits = is_number(value) if kind is float else value.isascii() and value.lstrip("-").isdigit()
    if fits or not _python_reads(value, kind):
        return ""
    return f" ({NUMBER_HINT if kind is float else WHOLE_HINT})"


def not_whole(text: str) -> str:
    """``'1_000' is not a whole number (…)``, as :func:`not_a_number` (``'1e400' is not a whole number``)."""
    said = f"{quoted(text)} is not a whole number"
    blanks = _blanks_around(text, lambda t: _whole().fullmatch(t) is not None)
    if blanks is not None:
        return f"{said} ({BLANKS_HINT}: {blanks})"
    if _python_reads(text, int):
        return f"{said} ({WHOLE_HINT})"
    if is_number(text):  # `1e3`, `1.0`: a whole value in another notation, which the language reads
        v = math.inf if text.lstrip("-") == "inf" else float(text)  # (not number(): `1e400` is no whole number)
        if math.isfinite(v) and v == math.floor(v) and abs(v) < 1e15:
            return f"{said} in digits (write {int(v)})"
    return said


def is_number(text: str, *, nan: bool = False) -> bool:
    """Whether ``text`` is a number in serQ's syntax (or, with ``nan``, a NaN as ``float()`` spells it)."""
    return _number().fullmatch(text) is not None or (nan and _nan().fullmatch(text) is not None)


def number(text: str, *, nan: bool = False) -> float:
    """``text`` as a float, or :class:`NotANumber`. ``nan``: ``nan`` (any case, optional ``-``) is NaN,
    for a caller that refuses it in its own words; otherwise it is not a number. A literal beyond the
    doubles (``1e309``, ``-1e999``) is :class:`NotANumber` too (:func:`beyond_doubles`): ``float()`` makes it
    inf, which a flag then took without a word ("horizon inf"); infinity is written ``inf``. So is one of a
    nonzero value below the smallest double (``0.8e-400``, :func:`below_doubles`), which ``float()`` makes 0;
    both are :class:`OutOfRange`."""
    if _number().fullmatch(text):
        if text == "inf":
            return math.inf
        if text == "-inf":
            return -math.inf
        v = float(text)
        if v in (math.inf, -math.inf):
            raise OutOfRange(beyond_doubles(text))
        if v == 0.0 and underflows(text, v):
            raise OutOfRange(below_doubles(text))
        return v
    if nan and _nan().fullmatch(text):
        return math.nan
    raise NotANumber(not_a_number(text))


def whole(text: str) -> int:
    """``text`` as an int (digits 0-9 after an optional ``-``), or :class:`NotANumber`; a ValueError of
    ``int()`` (more digits than it reads) is the caller's to word."""
    if _whole().fullmatch(text):
        return int(text)
    raise NotANumber(not_whole(text))


def is_real(v: object) -> bool:
    """Whether ``v`` is a number the Python API takes: a ``numbers.Real`` (an int, a float, a Fraction, numpy's
    scalars) that is no bool, or a ``decimal.Decimal``, which Python does not register as a Real. A sweep's
    ``sets={"x": [Decimal("1")]}`` took a Decimal while ``horizon=Decimal("10")`` refused it; each is now the
    double nearest to it (:func:`real`), as the same number's text is read (docs/sweep.md)."""
    import decimal
    import numbers

    return (isinstance(v, numbers.Real) and not isinstance(v, bool)) or isinstance(v, decimal.Decimal)


def exact(v: object) -> bool:
    """Whether ``v`` is of a type the Python API takes a whole number as (``seed=``, ``arrivals=``,
    ``max_events=``, ``workers=``, ``seeds=``): an exact number, a ``numbers.Rational`` that is no bool (an
    int, numpy's integers, a ``Fraction``) or a ``decimal.Decimal``. A float is not, though its value be whole
    (``arrivals=1000.0`` is refused as a float count); a non-whole exact number is of the type, with a value
    that is refused (:func:`whole_value`)."""
    import decimal
    import numbers

    return (isinstance(v, numbers.Rational) and not isinstance(v, bool)) or isinstance(v, decimal.Decimal)


def whole_value(v: object) -> int | None:
    """``v`` as an ``int`` where the Python API wants a whole number: an exact number (:func:`exact`) whose value
    is whole (``7``, ``numpy.int64(7)``, ``Fraction(14, 2)``, ``Decimal("7")``, ``Decimal("7.0")``,
    ``Decimal("1E+3")``); ``None`` for anything else (``Decimal("7.5")``, ``Fraction(3, 2)``, a Decimal NaN or
    infinity, a float, a bool, a str). ``Decimal("1000")`` was refused where ``is_real`` took it as a real."""
    import decimal
    import numbers

    if not exact(v):
        return None
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, decimal.Decimal):
        # (one of more than 4300 digits is no count any argument takes: its int() of a huge exponent,
        # Decimal("1E+999999999"), would take the memory of its digits)
        if not v.is_finite() or v.adjusted() >= 4300 or v != v.to_integral_value():
            return None
        return int(v)
    if isinstance(v, numbers.Rational):
        return int(v.numerator) if v.denominator == 1 else None
    return None


def real(v: object) -> float | None:
    """``v``, a value the Python API was given as a number (``sets={"B": 512}``, ``horizon=``), as a float:
    a real number (:func:`is_real`: a bool is not one, a Decimal is) within the doubles, NaN included (each
    caller refuses it in its own words); ``None`` for anything else (a str, None, an int or Decimal beyond the
    doubles, whose ``float()`` overflows or is infinite). The rule of serq.loading's run settings,
    ``serq_sim.run``'s, a compile's ``sets`` and a sweep's."""
    import decimal

    if not is_real(v):
        return None
    try:
        x = float(v)  # type: ignore[arg-type]
    except OverflowError:
        return None
    if isinstance(v, decimal.Decimal) and v.is_finite() and math.isinf(x):  # Decimal('1e400'): inf, no overflow
        return None
    return x


def switch(v: object) -> bool:
    """Whether ``v`` is the value of a switch of the Python API (``progress=``, ``check_invariants=``,
    ``fresh=``, ``check=``, ``spans=``, ``desugar=``): a bool, numpy's too. The one rule of the library
    calls' switches: anything else is a TypeError naming it, where it was taken by its truth (``"no"``
    and ``"false"`` on, ``0`` and ``None`` off)."""
    return isinstance(v, bool) or (type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_"))
