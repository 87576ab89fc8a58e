"""Sweep axes: ``--set NAME=VALUES`` and ``--def NAME=EXPR``, lists, ranges, grids and zipped groups, and
``--seeds``."""

from __future__ import annotations

import itertools
import math
import numbers
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from serq.errors import UsageError, clipped, knob_hint
from serq.numbers import BLANKS_HINT, WHOLE_HINT, NotANumber, number, real, shown, switch, whole, whole_value

#: at most this many points (compiled programs) in one sweep, this many values of one swept name (a range,
#: or every value a name given again adds), this many seeds and this many runs (points times seeds)
MAX_POINTS = 1_000_000


def _count(n: int) -> str:
    """``n`` as a message says a count refused for its size (``1.0e+300``, not 301 digits)."""
    return str(n) if n < 10**15 else f"about {float(n):.1e}"


@dataclass(frozen=True)
class Axis:
    """One swept name: ``kind`` ``"set"`` (a let constant, float values), ``"def"`` (a definition's body,
    str values), ``"program"`` (the file, str values) or ``"trace"`` (the trace file the runs replay,
    ``--trace``, str values)."""

    name: str
    kind: str
    values: tuple[Any, ...]


def _number(text: str, what: str) -> float:
    """``text`` in serQ's number syntax (serq.numbers: ``float()`` read ``1_000`` as 1000, ``١٢`` as 12 and
    took spaces around a value), not NaN."""
    try:
        v = number(text, nan=True)
    except NotANumber as e:
        raise UsageError(f"{what}: {e}") from None
    if math.isnan(v):
        raise UsageError(f"{what}: NaN is not a value to sweep")
    return v


def _scalar(v: Any) -> bool:
    """Whether ``v`` is one value, not a list of them: a number, or what is no list (None, True), a numpy
    array of no dimension (``np.array(0.5)``: iterating it was a TypeError from numpy) included."""
    return (isinstance(v, (int, float, bool)) or not isinstance(v, Iterable) or isinstance(v, (bytes, Mapping))
            or getattr(v, "ndim", None) == 0)


def _one(v: Any) -> Any:
    """``v``, or the number a numpy array of no dimension holds (``np.array(3)``)."""
    return v.item() if getattr(v, "ndim", None) == 0 and hasattr(v, "item") else v


def ordered(v: Any, what: str) -> Any:
    """``v``, refused (a TypeError naming ``what``) when it is a ``set`` or ``frozenset``: the values of an
    argument of the Python API come in the order given, which is the order of the table's rows (its points,
    its seeds), of a comparison's arms (which arm is ``A`` in ``B - A``) and of the columns and rows named;
    a set has none, and one of strs (``defs={"f": {"~exp(1)", "~det(1)"}}``) iterates in another order in
    every process (``PYTHONHASHSEED``), so the same call gave other tables."""
    if isinstance(v, (set, frozenset)):
        raise TypeError(f"{what}: a {type(v).__name__} has no order, and the order of the values given is the "
                        "order of the results: give a list (sorted() of the set makes one)")
    return v


def flag(value: Any, what: str, *, none: bool = False) -> Any:
    """A switch of the Python API (``fresh=``, ``progress=``): a bool (numpy's too), or None where ``none``
    (``progress=None``: the default); anything else is a TypeError naming ``what``. It was taken by its
    truth: ``fresh="no"`` ran every run again, ``progress="no"`` drew the bar."""
    if value is None and none:
        return None
    if switch(value):  # (serq.numbers.switch: a bool, numpy's too)
        return bool(value)
    raise TypeError(f"{what} must be True or False{' (or None)' if none else ''}, not {value!r:.60}")


def output_path(value: Any, what: str) -> Any:
    """An output path of the Python API (``out=``), None or a str or os.PathLike naming a str, else a
    TypeError naming ``what`` said before anything is compiled (``out=3`` was ``os.fspath``'s TypeError once
    every point was compiled)."""
    import os

    if value is None or isinstance(value, str) or isinstance(value, os.PathLike) and isinstance(
            os.fspath(value), str):
        return value
    raise TypeError(f"{what} must be a path (str or os.PathLike), not {type(value).__name__}")


def texts(value: Any, what: str, item: str = "name") -> list[str]:
    """An argument of the Python API that is a list of strs, or one str (``figures=``, ``conditions=``,
    ``by=``, ``cdf_of=``, ``gauge=``): one str is the list of it, as ``find``'s ``conditions`` always took
    it (it was iterated as its letters: ``figures="ttft.p99"`` asked for the figures ``t``, ``t``, ...);
    anything else that is no list of strs, or a set (:func:`ordered`), is a TypeError naming ``what``."""
    if isinstance(value, str):
        return [plain(value)]
    if isinstance(value, (bytes, bytearray, memoryview, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a {item} (a str) or a list of them, not {type(value).__name__}")
    out = list(itertools.islice(ordered(value, what), MAX_POINTS + 1))  # (itertools.count() was read for ever)
    if len(out) > MAX_POINTS:
        raise UsageError(f"{what}: more than {MAX_POINTS} {item}s")
    for x in out:
        if not isinstance(x, str):
            raise TypeError(f"{what}: each {item} is a str, not {type(x).__name__} ({shown(x):.60})")
    return [plain(x) for x in out]


def _real(v: Any, what: str) -> float:
    """A value the Python API gives as a number (``sets={"B": 512}``), not NaN: a bool, None or anything
    else that is not a real number, and an int beyond the doubles, are refused naming ``what`` (they were a
    TypeError or an OverflowError of float() from inside the sweep)."""
    if isinstance(v, bool) or v is None:
        raise UsageError(f"{what}: {v!r} is not a number")
    if not isinstance(v, numbers.Real):  # a Decimal, say: read as its text is
        try:
            text = str(v)
        except ValueError:  # (a list holding an int of 4301 digits: Python's own ValueError, no message of ours)
            raise UsageError(f"{what}: a {type(v).__name__} is not a number") from None
        return _number(text, what)
    x = real(v)  # (a real number: None only for an int beyond the doubles)
    if x is None:
        raise UsageError(f"{what}: an integer of {int(v).bit_length()} bits is beyond the doubles (at most about "
                        "1.8e308)")
    if math.isnan(x):
        raise UsageError(f"{what}: NaN is not a value to sweep")
    return x


def _unmasked(v: Any, what: str, index: int | None = None) -> None:
    """Refuse a masked entry of a numpy masked array (``np.ma.masked``, what iterating one gives of an entry its
    mask hides), naming ``what`` and the entry's ``index``: it has no value, and ``.item()`` of it is 0, so
    ``sets={"x": np.ma.masked_array([1, 2], mask=[0, 1])}`` swept x=1 and x=0."""
    if type(v).__name__ != "MaskedConstant" or type(v).__module__.split(".")[0] != "numpy":
        return
    at = "" if index is None else f" at index {index}"
    raise UsageError(f"{what}: the value{at} is masked, which is no number to sweep (give the values left "
                     "unmasked: .compressed() of the array)")


def split_list(text: str) -> list[str]:
    """The items of the comma list ``text`` (``--set``'s values, ``--seeds``, ``--zip``'s names), each without the blanks around it: ``1, 2`` is ``1,2`` (a list quoted for the shell is written
    so), ``a , b`` is ``a,b``; an item of blanks alone is empty. The one splitter of every list of the
    command line (``--zip`` took blanks after its commas and ``--set`` refused `` 2`` as no number)."""
    return [part.strip() for part in text.split(",")]


def _items(text: str, what: str) -> list[str]:
    """The items of the comma list ``text`` (:func:`split_list`), none of them empty (``1,,2``, ``,1`` and
    ``1,`` dropped the empty item silently: a value the user meant to give, or a typo, was not swept)."""
    parts = split_list(text)
    for k, part in enumerate(parts, 1):
        if part == "":
            raise UsageError(f"{what}: {clipped(text)!r}: item {k} of {len(parts)} is empty (a list is 1,2,4: no empty "
                            "item before, between or after its commas)")
    return parts


def _short(x: float, step: float) -> float:
    """A range's value ``x`` as a short decimal: rounded to 12 significant digits (``0.1 + 2 * 0.1`` is 0.3,
    not 0.30000000000000004) where that moves it by less than a millionth of the range's ``step``, else as
    computed. Rounding every value to 12 digits made a range whose step is fine beside its values
    (``1e12:1000000000020:3``, ``1:1.0000000001:1.5e-11``) another grid than the one asked for: values
    rounded together (refused as a point given twice, which the user had not given) or unevenly spaced
    (1, 1.00000000002, 1.00000000003, 1.00000000005, …), silently."""
    rounded = float(f"{x:.12g}")
    return rounded if abs(rounded - x) < step * 1e-6 else x


def parse_range(text: str, what: str) -> list[float]:
    """``START:STOP:STEP`` (STOP included when a step lands on it, to 1e-9 of a step), ``START:STOP`` (step
    1), a comma list ``1,2,4``, or one number."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise UsageError(f"{what}: {clipped(text)!r}: a range is START:STOP or START:STOP:STEP")
        start, stop = _number(parts[0], what), _number(parts[1], what)
        step = _number(parts[2], what) if len(parts) == 3 else 1.0
        if not (math.isfinite(start) and math.isfinite(stop) and math.isfinite(step)):
            raise UsageError(f"{what}: {clipped(text)!r}: a range's bounds and step are finite")
        if step <= 0:
            raise UsageError(f"{what}: {clipped(text)!r}: the step must be positive")
        if stop < start:
            raise UsageError(f"{what}: {clipped(text)!r}: the range ends before it starts")
        # a width beyond the doubles (-1e308:1e308) is counted in halves, exactly: it was taken for a count
        # beyond them, so -1e308:1e308:1.7e308, two values, was "more values than a double counts"
        wide = math.isinf(stop - start)
        steps = ((stop / 2 - start / 2) / step) * 2 if wide else (stop - start) / step
        if math.isinf(steps):  # (0:1e308:1e-308)
            raise UsageError(f"{what}: {clipped(text)!r}: more values than a double counts, more than {MAX_POINTS}")
        count = math.floor(steps + 1e-9) + 1
        if count > MAX_POINTS:
            raise UsageError(f"{what}: {clipped(text)!r}: {_count(count)} values, more than {MAX_POINTS}")
        # each value from its index (no accumulated rounding): start + i * step, shown as a short decimal (in
        # halves where i * step leaves the doubles though the value does not)
        return [_short(start + i * step if not wide or math.isfinite(start + i * step)
                       else (start / 2 + i * (step / 2)) * 2, step) for i in range(count)]
    if "," not in text:
        return [_number(_not_seeds(text, what), what)]
    return [_number(_not_seeds(p, what), what) for p in _items(text, what)]


def _not_seeds(text: str, what: str) -> str:
    """``text``, refused when it is written as a range of seeds, ``A..B`` (``--set N=1..8``), which is no
    number: the message said only that (``'1..8' is not a number``), where the range meant is ``1:8``."""
    m = _SEEDS_LIKE.fullmatch(text)
    if m:
        raise UsageError(f"{what}: {clipped(text)!r} is not a number: a range of values is START:STOP:STEP "
                         f"({m[1]}:{m[2]}:1), or START:STOP with a step of 1; A..B is a range of seeds")
    return text


#: ``A..B`` of two decimal numbers, the form of a range of seeds
_SEEDS_LIKE = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?)\.\.(-?[0-9]+(?:\.[0-9]+)?)")


def _seed_hint(why: str, piece: str, part: str) -> str:
    """Why ``piece`` (a seed, or an end of the range ``part``) is no seed, `` (…)``, in the words ``--seed`` says
    it with (:func:`serq.numbers.not_whole`, whose message is ``why``): the rule's hint (``1_000``, ``+5``,
    ``١٢``), a number's blanks (``' 3'``: 3) or a whole value in another notation (``1e3``: write 1000); empty
    for any other. ``--seeds`` said only ``'1e3' is not a seed or a range A..B of seeds``, where ``--seed 1e3``
    says ``write 1000``, and ``--seeds ' 3'`` nothing of the blanks ``--seed ' 3'`` names."""
    said = why.partition(" is not a whole number")[2]
    of = "" if piece == part else f" for {clipped(piece)!r}"
    if said.startswith(" in digits (write ") and said.endswith(")"):
        return f" (in digits: write {said[len(' in digits (write '):-1]}{of})"
    if said.startswith(" (") and said.endswith(")") and (WHOLE_HINT in said or BLANKS_HINT in said):
        return f" ({said[2:-1]}{of if BLANKS_HINT in said else ''})"
    return ""


def parse_seeds(text: str, given: Any = None) -> list[int]:
    """``1..20`` (both ends included), ``1,5,9``, ``7``, or a mix ``1..3,10``. ``given`` names the seeds in a
    message, as the sweep's other settings are named (:func:`serq.loading.option_given`, ``--seeds 1..0``, by
    default; :func:`serq.loading.argument_given`, ``seeds=1..0``, for the Python API)."""
    from serq.loading import given_or_option

    given = given_or_option(given)
    out: list[int] = []
    text = str(text)
    if text == "":
        raise UsageError(f"{given('seeds', repr(text))}: no seed")
    said = given("seeds", clipped(text))  # (a value of 100 000 characters was quoted whole, twice)
    for part in _items(text, given("seeds")) if "," in text else [text]:
        lo, dots, hi = part.partition("..")
        piece = lo
        try:  # digits 0-9 (serq.numbers.whole: int() took 1_000, +5, ١٢ and spaces)
            a = whole(lo)
            piece = hi
            b = whole(hi) if dots else a
        except ValueError as e:
            hint = _seed_hint(str(e), piece, part)
            raise UsageError(f"{said}: {clipped(part)!r} is not a seed or a range A..B of seeds{hint}") from None
        if b < a:
            raise UsageError(f"{said}: {clipped(part)!r} ends before it starts")
        if len(out) + (b - a) >= MAX_POINTS:  # a range, or the parts together
            raise UsageError(f"{said}: more than {MAX_POINTS} seeds")
        out.extend(range(a, b + 1))
    if not out:
        raise UsageError(f"{given('seeds', repr(clipped(text)))}: no seed")
    from serq_ir.rules import seed_problem

    for s in out:
        why = seed_problem(s)
        if why:
            raise UsageError(f"{said}: {clipped(str(s))}: {why}")
    seen: set[int] = set()
    dup = [s for s in out if s in seen or seen.add(s)]
    if dup:
        raise UsageError(f"{said}: seed {dup[0]} is given twice")
    return out


def seed_values(seeds: Any) -> list[int]:
    """The Python API's seeds given as numbers (a list of them, or one): each a whole number of 0 to 2**64 - 1
    as :func:`serq_ir.rules.seed_problem` says (``int()`` made 1.5 and True the seed 1, and a seed the run
    would refuse was refused only by its text), at least one, at most :data:`MAX_POINTS`, none twice, as
    :func:`parse_seeds` holds text to. At most ``MAX_POINTS + 1`` are read from an iterable: ``range(10**12)``
    or ``itertools.count()`` was read whole (until memory ran out), and ``range(10**7)`` was written out as
    the text ``0,1,2,…`` of every seed, quoted whole in the message that refused it."""
    from serq_ir.rules import seed_problem

    _unmasked(seeds, "seeds")
    seeds = _one(seeds)
    if _scalar(seeds):
        given = [seeds]
    else:
        given = []
        for i, s in enumerate(itertools.islice(ordered(seeds, "seeds"), MAX_POINTS + 1)):
            _unmasked(s, "seeds", i)  # (a masked seed was refused as "not 0.0", a value not given)
            given.append(_one(s))
        if len(given) > MAX_POINTS:
            raise UsageError(f"seeds: more than {MAX_POINTS} seeds")
    if not given:
        raise UsageError("seeds: no seed")
    # a whole Fraction or Decimal is its int (Decimal("7"): the seed 7); any other value is told as given
    given = [s if whole_value(s) is None else whole_value(s) for s in given]
    for s in given:
        why = seed_problem(s)
        if why:
            raise UsageError(f"seeds: {why}")
    out = [operator.index(s) for s in given]
    seen: set[int] = set()
    dup = next((s for s in out if s in seen or seen.add(s)), None)
    if dup is not None:
        raise UsageError(f"seeds: seed {dup} is given twice")
    return out


def seeds_given(seeds: Any, given: Any = None) -> list[int]:
    """The seeds of a sweep, a comparison or a capacity search, given to the Python API (``seeds=``) or the
    command (``--seeds``): text (``"1..20"``, ``"1,5,9"``: :func:`parse_seeds`) or numbers, a list of them or
    one (:func:`seed_values`: ``["3"]``, ``1.5`` and ``True`` are refused). One rule for ``sweep``,
    ``compare`` and ``find`` (``find`` read a list's items as text, so it took ``["3"]``, which ``sweep``
    refused, and failed with a TypeError on ``seeds=5``). ``given`` names text seeds in a message
    (:func:`parse_seeds`; numbers are the API's own, named ``seeds``)."""
    return parse_seeds(seeds, given) if isinstance(seeds, str) else seed_values(seeds)


def program_files(program: Any, what: str = "program") -> list[str]:
    """The program files of a sweep, a comparison or a search (the Python API's ``program``): a path (a
    ``str`` or an ``os.PathLike``) or an iterable of them, as ``str``. Anything else is a TypeError naming
    it: a ``Path`` given to ``compare`` or ``find`` was iterated (``'PosixPath' object is not iterable``),
    and ``b"p.sq"`` was taken for a list of the ints of its bytes. ``what``: the argument, ``trace`` for the
    trace files the runs replay (``trace=``, ``serq sweep --trace``), read by the same rule."""
    import os

    if isinstance(program, (str, os.PathLike)):
        program = [program]
    elif isinstance(program, (bytes, bytearray, memoryview, Mapping)) or not isinstance(program, Iterable):
        raise TypeError(f"{what} must be a path (str or os.PathLike) or a list of them, not "
                        f"{type(program).__name__}")
    out = []
    for f in itertools.islice(ordered(program, what), MAX_POINTS + 1):
        if len(out) == MAX_POINTS:  # (an endless iterable was read until memory ran out)
            raise UsageError(f"{what}: more than {MAX_POINTS} {what}s")
        path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
        if not isinstance(path, str):
            raise TypeError(f"{what}: each {what} is a path (str or os.PathLike), not {type(f).__name__}"
                            + (" naming bytes" if isinstance(f, os.PathLike) else ""))
        out.append(path)
    return out


def named_values(value: Any, what: str) -> Mapping[str, Any]:
    """``sets`` or ``defs`` (``what``) of the Python API: a mapping of names to values, {} for None; anything
    else is a TypeError naming it (a list of pairs was an AttributeError of ``.items()``)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a mapping of names to values ({what}={{\"B\": [512, 8192]}}), not "
                        f"{type(value).__name__}")
    return {plain(k): v for k, v in value.items()}


def plain(x: Any) -> Any:
    """``x`` as a plain ``str`` when it is a str of a subclass (numpy's ``str_``, a user's class), else itself:
    a name or a text the Python API takes is what it holds. A sweep's names kept their class, so that
    ``sets={numpy.str_("B"): …}`` put ``np.str_('B')`` in the frame's ``attrs["axes"]`` and a search's
    columns, where every other name is a str."""
    return str.__str__(x) if isinstance(x, str) and type(x) is not str else x


def zip_groups(zipped: Any) -> list[list[str]]:
    """``zip`` of the Python API: groups of names that move together, each a list of names. A str where
    the list of groups or a group goes, or a group that is no list of str, is a TypeError: ``zip=["a",
    "b"]`` (one group meant, written without its brackets) was read as groups of letters (``--zip a: a is
    not a swept name``, or for a one-letter name a group of one, silently no group at all), and
    ``zip=[3]`` was ``'int' object is not iterable``."""
    if isinstance(zipped, (str, bytes, bytearray, Mapping)) or not isinstance(zipped, Iterable):
        raise TypeError(f"zip must be a list of groups of names (zip=[[\"a\", \"b\"]]), not {type(zipped).__name__}")
    groups = []
    for g in itertools.islice(zipped, MAX_POINTS + 1):  # (as texts: an endless iterable was read for ever)
        if len(groups) == MAX_POINTS:
            raise UsageError(f"zip: more than {MAX_POINTS} groups")
        if isinstance(g, (str, bytes, bytearray, Mapping)) or not isinstance(g, Iterable):
            shown = f"the str {g!r}" if isinstance(g, str) else type(g).__name__
            raise TypeError(f"zip: a group is a list of names (zip=[[\"a\", \"b\"]]), not {shown}")
        g = list(itertools.islice(g, MAX_POINTS + 1))
        if len(g) > MAX_POINTS:
            raise UsageError(f"zip: a group of more than {MAX_POINTS} names")
        bad = next((n for n in g if not isinstance(n, str)), None)
        if bad is not None or not g:
            raise TypeError(f"zip: a group is a list of names (zip=[[\"a\", \"b\"]]), not {g!r}")
        groups.append([plain(n) for n in g])
    return groups


def set_axes(sets: Mapping[str, Any], given: Any = None) -> list[Axis]:
    """Axes of ``--set``: each value a number, a list of numbers or a range string. ``given`` names a name's
    values in a message (:func:`parse_seeds`: ``--set lam``, ``sets['lam']``)."""
    from serq.loading import given_or_option

    given = given_or_option(given)
    out = []
    for name, v in sets.items():
        what = given("set", clipped(name))
        _unmasked(v, what)
        v = _one(v)
        if isinstance(v, str):
            values = parse_range(v, what)
        elif _scalar(v):
            values = [_real(v, what)]
        elif isinstance(v, Iterable) and not isinstance(v, (bytes, Mapping)):
            values = []
            for i, x in enumerate(ordered(v, f"sets[{name!r}]")):
                _unmasked(x, what, i)
                x = _one(x)
                values.extend(parse_range(x, what) if isinstance(x, str) else [_real(x, what)])
                if len(values) > MAX_POINTS:  # each range is bounded; so are they together
                    raise UsageError(f"{what}: more than {MAX_POINTS} values")
        if not values:
            raise UsageError(f"{what}: no value")
        out.append(Axis(name, "set", tuple(values)))
    return out


def def_axes(defs: Mapping[str, Any], given: Any = None) -> list[Axis]:
    """Axes of ``--def``: each value an expression or a list of them; ``given`` as :func:`set_axes`'s."""
    from serq.loading import given_or_option

    given = given_or_option(given)
    out = []
    for name, v in defs.items():
        if isinstance(v, str):
            values = [v]
        elif _scalar(v):
            raise UsageError(f"{given('def', clipped(name))}: {shown(v)} is not an expression (a string) or a list "
                             "of them")
        else:
            values = texts(v, f"defs[{name!r}]", "expression")
        if not values:
            raise UsageError(f"{given('def', clipped(name))}: no value")
        out.append(Axis(name, "def", tuple(values)))
    return out


def group_cli(items: Sequence[str], flag: str) -> dict[str, list[str]]:
    """``NAME=VALUES`` items of a repeated flag, a name given again adding values to its axis."""
    out: dict[str, list[str]] = {}
    from serq.loading import split_assignment

    for item in items:
        name, value = split_assignment(item, flag)
        out.setdefault(name, []).append(value)
    return out


def points(axes: Sequence[Axis], zipped: Sequence[Sequence[str]] = (), *, repeat: bool = False,
           seeds: int = 1, forms: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
           given: Any = None) -> list[dict[str, Any]]:
    """The points of a sweep: the grid (cartesian product, the first axis varying slowest) over the axes,
    where the axes of each ``zipped`` group move together (equal lengths) as one axis of the grid. A point
    that comes twice (a value given twice) is refused, unless ``repeat`` (serq compare's arms: ``--set
    x=0,0`` is an A/A comparison, every difference exactly 0). ``seeds``: the runs of each point; a grid
    of more than :data:`MAX_POINTS` runs is refused before it is made, as one of more points. ``forms``: a
    swept definition's values by their canonical forms (serq_sweep.core.definition_forms), by which its
    points are told apart: ``--def f=a+b`` and ``--def 'f= a + b'`` are one point given twice. ``given`` names
    the groups and the definitions in a message (:func:`set_axes`: ``--zip a,b``, ``zip=a,b``)."""
    from serq.loading import given_or_option

    given = given_or_option(given)
    by_name = {a.name: a for a in axes}
    grouped: set[str] = set()
    units: list[list[dict[str, Any]]] = []
    groups = zip_groups(zipped)
    for g in groups:
        shown = ",".join(map(clipped, g))  # (each name cut as a message cuts one)
        for name in g:
            if name not in by_name:
                raise UsageError(f"{given('zip', shown)}: {clipped(name)} is not a swept name "
                                f"(swept: {', '.join(by_name) or 'none'})"
                                 + knob_hint(name, [n for n, a in by_name.items() if a.kind != "def"],
                                             [n for n, a in by_name.items() if a.kind == "def"], "either", given))
            if name in grouped:  # (a name twice in one group was said to be "in two groups")
                twice = "given twice in the group" if g.count(name) > 1 else "in two groups"
                raise UsageError(f"{given('zip')}: {clipped(name)} is {twice}"
                                 + (f" {shown}" if g.count(name) > 1 else ""))
            grouped.add(name)
        lengths = {len(by_name[n].values) for n in g}
        if len(lengths) > 1:
            raise UsageError(f"{given('zip', shown)}: the zipped names have different numbers of values ("
                            + ", ".join(f"{n}: {len(by_name[n].values)}" for n in g) + ")")
    order: list[Any] = []
    for a in axes:
        g = next((g for g in groups if a.name in g), None)
        if g is None:
            order.append([a.name])
        elif g not in order:
            order.append(g)
    total = 1
    for names in order:  # counted before the grid's units are made: a few axes of a million values each
        total *= len(by_name[names[0]].values)  # held gigabytes only to be refused
    if total > MAX_POINTS:
        raise UsageError(f"the sweep has {_count(total)} points, more than {MAX_POINTS}")
    if total * seeds > MAX_POINTS:  # (the grid of a million points took 5 s and 600 MB to be refused so)
        raise UsageError(f"the sweep has {total} point(s) times {seeds} seed(s), {total * seeds} runs, more "
                         f"than {MAX_POINTS}")
    for names in order:
        n = len(by_name[names[0]].values)
        units.append([{name: by_name[name].values[i] for name in names} for i in range(n)])
    out = []
    seen: dict[tuple, dict[str, Any]] = {}
    forms = forms or {}
    for combo in itertools.product(*units):
        p: dict[str, Any] = {}
        for d in combo:
            p.update(d)
        # a value given twice (--set B=512,512, --set B=512 --set B=512, a list and a range that meet) made
        # two points of one run: two rows of one key, which a curve across the table's rows took for two
        # seeds (its CI narrowed). (repr: -0 and 0 are two constants, 1/x tells them apart.) A definition's
        # body is told by its form: two spellings of one (`a+b`, ` a + b`) made two rows of one program.
        same = tuple((k, forms[k][v] if k in forms else repr(v)) for k, v in p.items())
        if same in seen and not repeat:
            from serq.numbers import quoted

            from .core import quoted_label

            label = quoted_label(p)
            first = seen[same]
            spelt = next((k for k in p if p[k] != first[k]), None)
            if spelt is not None:  # (its values differ as text)
                form = forms[spelt][p[spelt]][0]
                raise UsageError(f"the point {label} is given twice: {given('def', spelt)} {quoted(p[spelt])} is "
                                 f"{quoted(first[spelt])} written otherwise (both are {quoted(form)}), which runs "
                                 "the same runs twice; give each definition once")
            raise UsageError(f"the point {label} is given twice (a value given twice runs the same runs twice); "
                            "give each value once")
        seen[same] = p
        out.append(p)
    return out
