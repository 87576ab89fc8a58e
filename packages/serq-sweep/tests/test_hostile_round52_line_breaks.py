"""A column's name or a cell with a line break, quoted by ``serq metrics --by`` and ``--where`` (``serq plot``'s
too: serq_sweep.rows) in a message, is written ``\\n`` (serq.errors.printable), as every message writes a name:
the break split the message's one line in two ('its columns: …, a' and 'b)' on the next line). Truth: the
messages by hand."""

from __future__ import annotations

HEADER = 'sent,first_token,last_token,output,"a\nb"\n'


def test_by_lists_the_columns_on_one_line(tmp_path, serq_in_process):
    p = tmp_path / "req.csv"
    p.write_text(HEADER + "0,1,2,3,x\n")
    r = serq_in_process("metrics", str(p), "--by", "a")
    assert r.returncode == 1
    assert r.stderr == (f"error: --by a: {p} has no column a (its columns: sent, first_token, last_token, output, "
                        "a\\nb)\n")
    # the column of that name is grouped by
    ok = serq_in_process("metrics", str(p), "--by", "a\nb")
    assert ok.returncode == 0 and "a\\nb" in ok.stdout


def test_where_lists_the_values_on_one_line(tmp_path, serq_in_process):
    p = tmp_path / "req.csv"
    p.write_text('sent,first_token,last_token,output,g\n0,1,2,3,"x\ny"\n0,1,2,3,z\n')
    r = serq_in_process("metrics", str(p), "--where", "g=q")
    assert r.returncode == 1
    assert r.stderr == f"error: --where g=q: no row of the records {p} has g = q (its values: x\\ny, z)\n"
    r = serq_in_process("metrics", str(p), "--where", "h\nk=1")
    assert r.returncode == 1
    assert r.stderr == (f"error: --where h\\nk=1: the records {p} has no column h\\nk (its columns: sent, "
                        "first_token, last_token, output, g)\n")
