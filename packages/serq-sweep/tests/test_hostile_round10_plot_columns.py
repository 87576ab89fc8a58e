"""``serq plot --x``/``--hue`` naming no column of a points table lists the table's swept names.

The message listed the columns before ``seed`` as the swept names; a points table (``OUT.points.csv``, which
serq plot reads as it is) has no ``seed`` column, its swept names coming before ``runs``, so it said
``--x nope: no column nope (the table's swept names: )``. It now reads them by the table's kind
(serq_sweep.core.point_columns), and a table with neither column (a CSV saved with ``;`` between its
cells: one column ``point;lam;seed;…``) is said to be no sweep's table, with its columns.
"""

from __future__ import annotations

import pytest
from serq.errors import UserError
from serq_sweep.plots import curve_data

RUNS = "point,lam,B,seed,status,message,key,y\n0,0.1,8,1,ok,,k1,1.5\n0,0.1,8,2,ok,,k2,2.5\n"
POINTS = "point,lam,B,runs,y:mean,y:ci\n0,0.1,8,2,2.0,6.35\n"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", [RUNS, POINTS], ids=["runs", "points"])
@pytest.mark.parametrize("x, hue, what", [("nope", None, "--x"), ("lam", "nope", "--hue")])
def test_a_missing_column_lists_the_swept_names_of_either_table(tmp_path, text, x, hue, what):
    table = tmp_path / "t.csv"
    table.write_text(text)
    with pytest.raises(UserError) as e:
        curve_data(table, x, "y", hue)
    assert str(e.value) == f"error: {what} nope: no column nope (the table's swept names: lam, B)"


@pytest.mark.timeout(60)
def test_a_table_of_semicolons_is_said_to_be_no_sweeps(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text(RUNS.replace(",", ";"))
    with pytest.raises(UserError) as e:
        curve_data(table, "lam", "y")
    # (said to be one column holding ';' since test_known_defects_round49_plot_separator: it was "--x lam: no column
    # lam (no seed column, so not a table of serq sweep; its columns: point;lam;B;seed;status;message;key;y)")
    assert str(e.value).splitlines()[0] == (
        f"{table}:1:6: error: cannot read the table (the header is one column, point;lam;B;seed;status;message;key;y, "
        "whose name holds ';': the fields seem separated by ';', not by commas; serq reads a table whose fields are "
        "separated by commas, as serq writes one: write it with commas)")
