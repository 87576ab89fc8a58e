"""``serq_sweep.sweep(["p.sq", "p.sq/"])`` is refused as one program given twice, as ``p.sq ./p.sq`` is.

The check that one file is not two programs of a sweep stat'ed each name as the system spells it, and
``p.sq/`` is no file there (``NotADirectoryError``: skipped, "its compile says why"); but a loader reads it
by pathlib's spelling, ``p.sq``, and compiled it: one program swept as two, every run twice
(serq_sweep.core.plan now stats the name a loader reads). The command line refuses ``p.sq/`` outright
(serq.options.Path).
"""

from __future__ import annotations

import pytest
import serq_sweep
from serq.errors import UserError

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); observe x = now; }\nrun { horizon 5; }\n"


@pytest.mark.timeout(60)
def test_a_program_and_its_name_with_a_slash_are_one_program(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sq").write_text(PROGRAM)
    with pytest.raises(UserError, match=r"the programs of a sweep are given twice: p\.sq and p\.sq/ are one file$"):
        serq_sweep.sweep(["p.sq", "p.sq/"], seeds=[1], workers=0, progress=False)
