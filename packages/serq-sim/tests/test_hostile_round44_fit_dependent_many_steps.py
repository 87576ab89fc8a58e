"""``serq fit`` of a long step trace whose terms are linearly dependent (every step the same batch, the
times varying: a trace of one decode shape): naming the dependencies took the full singular value
decomposition of the steps, whose left vectors are a square of the steps, and a trace of 10^6 such steps
ended in ``error: out of memory`` (200 000 steps: 320 GB asked for). The decomposition is the thin one, and
the message names the relations, as it does for a short trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError
from serq_sim.fit import fit_steps

SERQ = str(Path(sys.executable).parent / "serq")


def test_many_steps_of_constant_terms_name_the_relations():
    rows = [(4.0, 40.0, 3.0, 7.0, 0.02 + (i % 7) * 1e-4) for i in range(200_000)]
    with pytest.raises(UserError) as e:
        fit_steps(rows, "s.jsonl")
    assert str(e.value) == ("s.jsonl: error: the terms are linearly dependent over these 200000 steps (in every "
                            "step, attention = 7; prefilled = 3; kv_decode = 40; decoders = 4): the fit is not "
                            "determined (give steps in which these terms vary apart)")


def test_many_steps_of_proportional_terms_from_the_command(tmp_path):
    # kv_decode = 10 * decoders and attention = 2 * prefilled in every one of 100 000 steps
    lines = []
    for i in range(100_000):
        d, p = i % 9 + 1, (i * 7) % 50 + 1
        lines.append(f'{{"decoders": {d}, "kv_decode": {10 * d}, "prefilled": {p}, "attention": {2 * p}, '
                     f'"time": {0.01 + 0.001 * d + 0.0001 * p!r}}}\n')
    (tmp_path / "s.jsonl").write_text("".join(lines))
    r = subprocess.run([SERQ, "fit", "s.jsonl"], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stdout
    assert r.stderr == ("s.jsonl: error: the terms are linearly dependent over these 100000 steps (in every step, "
                        "attention = 2 * prefilled; kv_decode = 10 * decoders): the fit is not determined (give "
                        "steps in which these terms vary apart)\n")
