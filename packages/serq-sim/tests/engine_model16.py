"""What test_conformance_round16_b.py and test_conformance_round16_c.py share: the engine models' key
readings, their victim and serving orders, and the program text they write (a helper module, not a test
module: one test module importing another is refused by packages/serq/tests/test_suite_layout.py)."""

from __future__ import annotations

import math


def up(x, b):
    return math.ceil(x / b - 1e-12) * b


class Stuck(Exception):
    """The model's engine cannot go on (a livelock of self-preemption, or a head that never fits)."""


def keys_of(names, s, job):
    out = []
    for k in names:
        sign = -1 if k.startswith("-") else 1
        name = k.lstrip("-")
        if name == "decoding":
            x = 1 if job["mode"] == "decode" else 0
        elif name == "position":
            x = job["pos"]
        elif name == "remaining":
            x = job["rem"]
        elif name == "admission":
            x = job["adm"]
        else:  # serial
            x = s
        out.append(sign * x)
    return tuple(out)


def choose(names):
    return ", ".join(names)


def ternary(values):
    e = str(values[-1])
    for i in range(len(values) - 2, -1, -1):
        e = f"serial == {i} ? {values[i]} : ({e})"
    return e


POLICIES = [("lifo", None), (("decoding", "-position"), "head"), (("decoding", "-position"), "tail"),
            (("position",), "tail"), (("-position",), "head"), (("-decoding", "position"), "tail"),
            (("serial",), "tail")]


#: victim orders reading `admission` (the fourth case)
BY_ADMISSION = [(("admission",), "tail"), (("admission",), "head"), (("decoding", "admission"), "tail"),
                (("-admission", "position"), "tail"), (("-admission", "serial"), "head")]


ORDERS = [None, ("remaining",), ("-remaining",), ("decoding",), ("-decoding",), ("-serial",),
          ("decoding", "-remaining")]
