"""JSON a user gave (a step trace, a scenario), read by Python's ``json`` with one guard: an integer must
have a float's range (at most 308 digits), as every number a program reads does. Without it a number such
as ``1e400`` written out in digits was read as a Python int that no float conversion takes (an
``OverflowError`` deep in the code that used it) and one of more than 4 300 digits was refused by the int
parser with a message about Python's limits."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JSONNumberError", "loads"]

#: the most digits an integer in a user's JSON may have (10**308 < the largest float < 10**309)
MAX_DIGITS = 308


class JSONNumberError(ValueError):
    """An integer in a user's JSON beyond the range of a float."""


def _int(text: str) -> int:
    digits = len(text) - (text[:1] == "-")
    if digits > MAX_DIGITS:
        shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]}"
        raise JSONNumberError(f"the integer {shown} ({digits} digits) is beyond the range of a number "
                              f"(at most {MAX_DIGITS} digits)")
    return int(text)


#: every digit as 0, so that a run of digits is a run of 0s (str.translate and a substring search: a
#: hundredth of what a call of _int for every integer of a scenario file costs)
_ZEROS = str.maketrans("123456789", "000000000")


def loads(data: str | bytes) -> Any:
    """``json.loads(data)`` refusing an integer beyond a float's range (:class:`JSONNumberError`, a
    ``ValueError``); ``NaN`` and ``Infinity`` are read as Python's json reads them, for the caller to
    refuse where a finite number goes."""
    if isinstance(data, str) and "0" * (MAX_DIGITS + 1) not in data.translate(_ZEROS):
        return json.loads(data)  # no run of more than MAX_DIGITS digits: no integer _int would refuse
    return json.loads(data, parse_int=_int)
