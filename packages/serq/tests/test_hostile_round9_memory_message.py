"""Out of memory, a command says so in one line, naming only a flag it has.

Every command's ``MemoryError`` was ``error: out of memory (serq run --max-samples N bounds the samples a
run holds)``: ``serq check`` of a program, or ``serq sweep``, which has no ``--max-samples``, pointed at
another command's flag. Only ``serq run`` says what bounds it, where it ran out: compiling the program
there is no sample yet that ``--max-samples`` could bound (test_known_defects_round2.py: the run's phases).
"""

from __future__ import annotations

import pytest

PROGRAM = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 5; }\n"


@pytest.mark.parametrize("args, said", [
    (["check", "p.sq"], "error: out of memory\n"),
    (["ir", "p.sq"], "error: out of memory\n"),
    # compiling the program, before any sample: --max-samples bounds nothing that took it (serq_sim.memguard.hint)
    (["run", "p.sq", "--no-progress"], "error: out of memory compiling the program, before its run began "
                                       "(--max-samples bounds only the samples a run holds)\n"),
])
def test_out_of_memory_is_one_line_naming_only_the_commands_own_flag(tmp_path, monkeypatch, capsys, args, said):
    import serq_frontend.cache
    from serq.cli import _main

    def load(*a, **k):
        raise MemoryError

    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(serq_frontend.cache, "load", load)  # the compile, as a program too large to compile
    code = _main(args)
    out, err = capsys.readouterr()
    assert (code, out, err) == (1, "", said)
