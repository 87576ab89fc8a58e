"""The tables serQ prints (``serq sweep --show``, ``serq compare``, the report's) write a cell's characters that do
not print as escapes (serq.errors.printable), as every message does: a swept ``--def`` body may hold any
character in a comment, and one with a line break split its row of ``--show`` in two, one with an escape
sequence (``ESC [31m``, a bell) was sent to the terminal as it is, in ``--show``'s row and in ``serq compare``'s
heading. The table written to a file or as CSV keeps the value as given: it is data."""

from __future__ import annotations

import pytest
from serq.cli import main
from serq.layout import align

PROGRAM = """def service() = ~exp(1);
stage svc : fifo;
workload { arrive poisson(0.5); }
session { run svc (service()); end; }
run { horizon 20; seed 1; }
"""

BODY = "~erlang(2,\n 2) // \x1b[31mred\x07"
SHOWN = "~erlang(2,\\n 2) // \\x1b[31mred\\x07"


def _serq(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_align_writes_escapes_and_aligns_by_them():
    assert align([["name", "n"], ["a\nb", "1"], ["\x1b[0m", "22"]]) == ["name      n", "a\\nb      1", "\\x1b[0m  22"]


def test_show_prints_a_body_with_escapes_one_row_each(here, capsys):
    code, out, err = _serq(["sweep", "p.sq", "--def", "service=~exp(1)", "--def", f"service={BODY}", "--workers", "0",
                            "--no-progress", "--show", "events"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 3  # the header and one row a point
    assert lines[2].startswith(SHOWN + "  ")
    assert out.isascii() and all(ch.isprintable() for ch in out.replace("\n", ""))


def test_compare_prints_its_heading_with_escapes(here, capsys):
    code, out, err = _serq(["compare", "p.sq", "--def", "service=~exp(1)", "--def", f"service={BODY}", "--seeds", "1..2",
                            "--workers", "0", "--no-progress"], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == f"service={SHOWN} - service=~exp(1), paired over 2 seeds (95 % CIs):"
    assert all(ch.isprintable() for ch in out.replace("\n", ""))


def test_the_csv_table_keeps_the_value(here, capsys):
    code, out, err = _serq(["sweep", "p.sq", "--def", f"service={BODY}", "--workers", "0", "--no-progress"], capsys)
    assert code == 0, err
    assert '"' + BODY + '"' in out  # (a quoted CSV field: it holds a line break)


FAILING = """def service() = ~exp(1);
let lam = 0.5;
stage svc : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run svc (service() - now); observe w = now - t0; end; }
run { horizon 20; seed 1; }
"""


def test_a_failed_run_s_point_is_said_with_escapes(here, capsys):
    (here / "f.sq").write_text(FAILING)
    code, out, err = _serq(["sweep", "f.sq", "--def", "service=0.001 // \x1b[31mred\x07", "--workers", "0",
                            "--no-progress"], capsys)
    assert code == 1
    assert err.endswith("(at the sweep's point service=0.001 // \\x1b[31mred\\x07, seed 1)\n")
    assert all(ch.isprintable() for ch in err.replace("\n", ""))


def test_find_s_notes_say_a_point_with_escapes(here, capsys):
    # (a message keeps its line breaks, as every message's, serq.errors.printable_lines: a body without one here)
    body, shown = "~exp(2) // \x1b[31mred\x07", "~exp(2) // \\x1b[31mred\\x07"
    (here / "q.sq").write_text(PROGRAM.replace("stage svc", "let lam = 0.5;\nstage svc").replace("poisson(0.5)",
                                                                                                  "poisson(lam)"))
    code, out, err = _serq(["sweep", "q.sq", "--def", f"service={body}", "--find", "events < 1e9", "--over", "lam",
                            "0.1:0.5", "--workers", "0", "--no-progress"], capsys)
    assert code == 0, err
    assert err.startswith(f"note: holds_everywhere at service={shown}: the conditions hold at both ends")
    assert all(ch.isprintable() for ch in (err + out).replace("\n", ""))
