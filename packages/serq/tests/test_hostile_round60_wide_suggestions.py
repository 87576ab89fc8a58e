"""The did-you-mean of a name among very many (serq plot --y of a table of 300 000 figures, a look-up of the
Python API): difflib compared the name with each candidate in turn, seconds for a wide table's figures, all
alike in length and letters, before the command said the name was unknown. Past serq.errors.CLOSE_POOL
candidates, those difflib compares are narrowed first (the neighbours of the name in the names sorted from
their beginning and from their end, among the lengths difflib's ratio allows); at most that many, what is
offered among them is what difflib offered over them all, and the offer is the same for every table of at
most that many (the old rule, kept here as the oracle)."""

from __future__ import annotations

import difflib
import random
import time

from serq import errors
from serq.errors import did_you_mean

WIDE = [f"stages.s{i}.throughput" for i in range(60_000)]  # (the 300 000 of the report: the same, slower)


def _old(name, candidates):
    """The offer as it was made (every candidate compared by difflib): the oracle for tables of few names."""
    names = sorted({c for c in candidates if isinstance(c, str)} - {name})
    folded = {}
    for c in names:
        folded.setdefault(c.casefold(), c)
    key = name.casefold()
    if key in folded:
        return folded[key]
    if len(key) == 2:
        near = errors.one_edit(key, [c for c in folded if len(c) == 2])
        if near is not None:
            return folded[near]
    close = difflib.get_close_matches(key, list(folded), n=1)
    return folded[close[0]] if close else None


def _typos(word, rng, n):
    out = []
    for _ in range(n):
        w = list(word)
        i = rng.randrange(len(w))
        op = rng.randrange(3)
        if op == 0:
            del w[i]
        elif op == 1:
            w[i] = rng.choice("abcdefghijklmnopqrstuvwxyz._0123456789")
        else:
            w.insert(i, rng.choice("abcdefghijklmnopqrstuvwxyz"))
        out.append("".join(w))
    return out


def test_a_wide_table_compares_few_and_offers_the_figure_meant(monkeypatch):
    compared = []
    real = difflib.get_close_matches

    def counting(word, possibilities, *a, **k):
        compared.append(len(possibilities))
        return real(word, possibilities, *a, **k)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    cpu = time.process_time()
    offers = {name: did_you_mean(name, WIDE) for name in ["stages.s12345.througput", "tages.s12345.throughput",
                                                        "Stages.S59999.Throughput.mean", "nosuch"]}
    cpu = time.process_time() - cpu
    assert offers == {"stages.s12345.througput": " (did you mean `stages.s12345.throughput`?)",
                      "tages.s12345.throughput": " (did you mean `stages.s12345.throughput`?)",
                      "Stages.S59999.Throughput.mean": " (did you mean `stages.s59999.throughput`?)",
                      "nosuch": ""}
    assert compared and max(compared) <= errors.CLOSE_POOL
    assert cpu < 4 * 1.5  # (four offers; each took seconds of difflib over these, more over a wider table)


def test_a_table_of_at_most_the_pool_offers_what_it_always_did():
    rng = random.Random(60)
    words = ["ttft", "tpot", "itl", "e2e", "queue", "response", "throughput", "utilisation", "present",
             "completions", "service", "wait", "mean", "p50", "p90", "p99", "count", "ci", "cv2", "kv", "engine"]
    names = sorted({f"{rng.choice(['observes', 'stages', 'pools', 'gauges'])}.{rng.choice(words)}"
                    f"{rng.choice(['', str(rng.randrange(40))])}.{rng.choice(words)}" for _ in range(3000)})
    for table, n in ((names[:30], 12), (names[:400], 6), (names[:errors.CLOSE_POOL], 2)):
        for meant in rng.sample(table, n):
            for name in [*_typos(meant, rng, 2), meant.upper(), "to"]:
                assert errors._closest(name, table) == _old(name, table), (name, len(table))
