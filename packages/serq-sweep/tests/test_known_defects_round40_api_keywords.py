"""The Python API's errors of ``records=`` and ``slo=`` name those keywords, as its other errors do
(serq.loading.argument_given: ``horizon=10``, ``sets['lam']``): ``serq_sim.sweep(records=…)`` said
``--records x.csv: give --out too`` and ``slo=`` ``--slo: the program records no requests``, options the
caller never gave. The command line's words are unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serq_sim
from serq.errors import UserError

HERE = Path(__file__).parent
MMC = HERE / "peer_programs27" / "mmc.sq"  # records `job`, no requests
TANDEM = HERE / "peer_programs14" / "tandem.sq"  # records nothing


def _sweep(program=MMC, **kw):
    return serq_sim.sweep(program, **{"horizon": 10, "warmup": 0, "sets": {"lam": [1]}, "workers": 0,
                                      "progress": False, **kw})


def test_slo_of_a_program_without_requests_names_slo(tmp_path):
    with pytest.raises(UserError) as e:
        _sweep(slo={"ttft": 1})
    assert str(e.value) == (f"error: {MMC}: slo=: the program records no requests (a record table with the columns "
                            "sent, first_token, last_token and output; lib/vllm.sq's vllm_request records them)")
    assert "--" not in str(e.value)


def test_records_without_out_names_records_and_out(tmp_path):
    with pytest.raises(UserError) as e:
        _sweep(records=str(tmp_path / "r.csv"))
    assert str(e.value) == (f"error: records={tmp_path / 'r.csv'}: give out= too (the records resume with the "
                            "sweep's table)")


def test_records_of_no_format_names_records(tmp_path):
    with pytest.raises(UserError) as e:
        _sweep(records=str(tmp_path / "r.txt"), out=str(tmp_path / "o.csv"))
    assert str(e.value) == f"error: records={tmp_path / 'r.txt'}: a records file is .parquet or .csv"


def test_records_in_no_folder_names_records(tmp_path):
    where = tmp_path / "none" / "r.csv"
    with pytest.raises(UserError) as e:
        _sweep(records=str(where), out=str(tmp_path / "o.csv"))
    assert str(e.value) == f"error: records={where}: no folder {where.parent} to write it in"


def test_records_of_a_program_without_records_names_records(tmp_path):
    with pytest.raises(UserError) as e:
        _sweep(TANDEM, records=str(tmp_path / "r.csv"), out=str(tmp_path / "o.csv"))
    assert str(e.value).startswith("error: records=: the program declares no records (")
    assert not (tmp_path / "o.csv").exists()


def test_the_command_line_still_names_its_options(tmp_path):
    def serq(*args):
        return subprocess.run([sys.executable, "-m", "serq", "sweep", str(MMC), "--set", "lam=1", "--horizon", "10",
                               "--warmup", "0", "--workers", "0", *args], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)

    r = serq("--slo", "ttft=1")
    assert r.returncode == 1 and f"error: {MMC}: --slo: the program records no requests" in r.stderr
    r = serq("--records", "r.txt", "--out", "o.csv")
    assert r.returncode == 2 and "error: --records r.txt: a records file is .parquet or .csv" in r.stderr


def test_records_at_an_output_of_out_names_the_keywords(tmp_path, monkeypatch):
    # said '--out' and '--records' (serq.files.check_distinct's labels) to the API's caller
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as e:
        _sweep(records="o.csv", out="o.csv")
    assert str(e.value) == ("error: o.csv: named by both out= and records=; each output of a sweep needs a file of "
                            "its own")
    with pytest.raises(UserError) as e:
        _sweep(records="o.points.csv", out="o.csv")
    assert str(e.value) == ("error: o.points.csv: named by both the points table of out= and records=; each output "
                            "of a sweep needs a file of its own")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_command_line_names_its_options_of_outputs(tmp_path):
    r = subprocess.run([sys.executable, "-m", "serq", "sweep", str(MMC), "--set", "lam=1", "--horizon", "10",
                        "--warmup", "0", "--workers", "0", "--records", "o.points.csv", "--out", "o.csv"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2
    assert ("error: o.points.csv: named by both --out's points table and --records; each output of a sweep needs "
            "a file of its own") in r.stderr
