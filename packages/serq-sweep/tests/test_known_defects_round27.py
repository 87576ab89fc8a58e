"""Known defects of serq sweep, round 27."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.timeout(120)

SERQ = str(Path(sys.executable).parent / "serq")

# 3. a records table in Parquet to resume from holds no more rows than the runs of the sweep's table wrote, as
# their rows count them (records.NAME): the bound of --max-samples samples a run (10^8 by default, 25 million
# rows of 4 record columns a run) let a file of a few hundred KB of one value in a million rows through
RECORDS = """let lam = 1;
stage s : delay;
workload { arrive poisson(lam); }
session { run s (1); record req { wait = 1; } }
run { horizon 5; seed 1; }
"""


def _bomb(path: Path, key: str, n: int) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    np = pytest.importorskip("numpy")
    keys = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([key]))
    pq.write_table(pa.table({"point": np.zeros(n, dtype=np.int64), "seed": np.ones(n, dtype=np.int64), "key": keys,
                             "session": np.zeros(n, dtype=np.int64), "turn": np.zeros(n, dtype=np.int32),
                             "time": np.ones(n), "wait": np.ones(n, dtype=np.int64)}), path, compression="zstd")


def _sweep(folder: Path) -> subprocess.CompletedProcess:
    # (no --max-samples: serQ's default bound of a run's samples)
    return subprocess.run([SERQ, "sweep", "p.sq", "--workers", "0", "--no-progress", "-o", "t.parquet", "--records",
                           "r.parquet"], capture_output=True, text=True, cwd=folder, timeout=100,
                          stdin=subprocess.DEVNULL)


def test_records_of_more_rows_than_the_tables_runs_wrote_are_refused_by_default(tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "p.sq").write_text(RECORDS)
    r = _sweep(tmp_path)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    table = pd.read_parquet(tmp_path / "t.parquet")
    # poisson(1) up to t = 5 under seed 1: the run's row counts the 5 rows it wrote, as the records hold them
    assert table["records.req"].tolist() == [5]
    assert len(pd.read_parquet(tmp_path / "r.parquet")) == 5
    _bomb(tmp_path / "r.parquet", str(table["key"][0]), 1_000_000)  # (within 25 million, the old default)
    assert (tmp_path / "r.parquet").stat().st_size < 100_000
    before = (tmp_path / "r.parquet").read_bytes()
    r = _sweep(tmp_path)
    assert (r.returncode, r.stderr) == (1, "error: r.parquet: cannot read the records to resume from (it holds "
                                           "1000000 rows, more than the 5: 5 that the 1 run(s) of the sweep's table "
                                           "wrote (their records.req)); remove it or give --fresh\n")
    assert (tmp_path / "r.parquet").read_bytes() == before


def _meta(rows: int, columns: int) -> SimpleNamespace:
    return SimpleNamespace(num_rows=rows, num_columns=columns)


def test_the_bound_is_the_rows_counted_and_max_samples_for_the_runs_that_count_none():
    from serq_sweep.records import records_size, written_rows

    done = {"a": {"status": "ok", "figures": {"records.req": 7}},
            "b": {"status": "partial", "figures": {"records.req": 2}},
            "c": {"status": "error", "figures": {}},  # (a failed run keeps no records)
            "d": {"status": "ok", "figures": {}}}  # (a row without the count)
    assert written_rows("req", done, 0) == (9, 3, 1)
    assert written_rows("req", {k: done[k] for k in "abc"}, 2) == (9, 3, 2)  # (2 runs of another sweep)
    # a run of a program that records no table req (a sweep of several programs) wrote none of it
    points = {"d": SimpleNamespace(records={"cls": ("prio",)})}
    assert written_rows("req", done, 0, points) == (9, 4, 0)
    # 4 columns before the record's (point, one swept name, seed, key), 4 record columns: 1000 samples a run
    # are 250 rows, and a tick of 20 000 events' rows more
    check = records_size("req", 9, 3, 1, 1000, 4)
    check(_meta(9 + 20_250, 8))
    with pytest.raises(ValueError) as e:
        check(_meta(9 + 20_251, 8))
    assert str(e.value) == ("it holds 20260 rows, more than the 20259: 9 that the 3 run(s) of the sweep's table wrote "
                            "(their records.req) and 20250 that 1 run(s) of at most 1000 samples each of 4 record "
                            "column(s) can have written")
    exact = records_size("req", 9, 3, 0, 10**8, 4)
    exact(_meta(9, 8))
    with pytest.raises(ValueError, match=r"^it holds 10 rows, more than the 9: 9 that the 3 run"):
        exact(_meta(10, 8))
    with pytest.raises(ValueError, match=r"^it holds 1 rows, more than the 0 that the runs of the sweep's table wrote \(it holds none\)$"):
        records_size("req", 0, 0, 0, 10**8, 4)(_meta(1, 8))


# 4. serq plot --where NAME=VALUE reads a value as written, blanks and all, a number's as a word's: the blanks
# around a number were trimmed ("blocks= 8010" kept the rows of 8010) and those around a word kept ("status= ok"
# kept none)
@pytest.mark.parametrize("name, value, values", [("blocks", " 8010", "2000, 8010"), ("blocks", "8010 ", "2000, 8010"),
                                                 ("status", " ok", "error, ok")])
def test_a_where_value_keeps_its_blanks_a_number_as_a_word(name, value, values):
    pd = pytest.importorskip("pandas")
    from serq.errors import UserError
    from serq_sweep.rows import selected

    frame = pd.DataFrame({"blocks": [2000, 8010, 8010], "status": ["ok", "ok", "error"]})
    with pytest.raises(UserError) as e:
        selected(frame, {name: value})
    assert str(e.value) == (f"error: --where {name}={value}: no row of the table has {name} = {value} (its values: {values}); "
                            f"the blanks around {value.strip()!r} are part of the value")
    assert selected(frame, {name: value.strip()}).index.tolist() == ([1, 2] if name == "blocks" else [0, 1])


def test_a_where_value_with_blanks_from_the_command_line(tmp_path):
    (tmp_path / "sw.csv").write_text("point,blocks,seed,key,status,warnings,w.mean\n"
                                     "0,2000,1,a,ok,,1.0\n1,8010,1,b,ok,,2.0\n")
    r = subprocess.run([SERQ, "plot", "sw.csv", "--x", "blocks", "--y", "w.mean", "--where", "blocks= 8010", "-o",
                        "p.svg"], capture_output=True, text=True, cwd=tmp_path, timeout=100, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stderr) == (1, "error: --where blocks= 8010: no row of the table has blocks =  8010 (its "
                                           "values: 2000, 8010); the blanks around '8010' are part of the value\n")
    assert not (tmp_path / "p.svg").exists()


# 6. the report's program.plugins (serq.extensions.plugins_used) and a sweep's run keys (serq_sweep.versions
# .deciding) name a plugin's distribution by one helper, serq.extensions.provider_of; the same outputs
KIND = '''from serq import hookimpl
from serq_sim.stages import DelayStage


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("slow", DelayStage)
'''

PLUGGED = """stage s : @slow;
stage d : delay;
workload { arrive poisson(1); }
session { run s (1); run d (1); }
run { horizon 5; }
"""


@pytest.fixture
def acme(tmp_path, monkeypatch):
    """serq-acme 0.3.0, whose entry point ``acme`` registers the stage kind ``slow`` (serQ's delay), installed as
    a wheel leaves it; the folder it is in (for a command's PYTHONPATH)."""
    site = tmp_path / "site"
    info = site / "serq_acme-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme27_kind\n")
    (site / "acme27_kind.py").write_text(KIND)
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("acme27_kind", None)


class InProcess:
    """A plugin registered in this process (no distribution): the eviction order ``mine`` (serQ's lru)."""

    from serq import hookimpl

    @hookimpl
    def serq_sim_register_eviction_orders(self, register):
        from serq_sim.policies.eviction import LruOrder

        register("mine", LruOrder)


def test_one_provider_of_a_name_for_the_report_and_the_run_keys(acme):
    import serq_frontend
    from serq.extensions import Provider, plugins_used, provider_of
    from serq.plugins import find_distributions, get_plugin_manager
    from serq_ir.report import FIGURES_VERSION
    from serq_sim.api import registries
    from serq_sweep.versions import PARTS, deciding

    pm = get_plugin_manager(plugins=[InProcess()])
    source = "pool p { cap 4; evict @mine; }\n" + PLUGGED.replace("run s (1);", "hold p (1) { run s (1); }")
    program = serq_frontend.compile(source=source, pm=pm)
    reg = registries(pm)
    mine = f"{InProcess.__module__}.InProcess"
    assert provider_of(pm, reg.stage_kinds, "slow") == Provider("acme", "serq-acme", "0.3.0")
    assert provider_of(pm, reg.evict, "mine") == Provider(mine, None, None)
    assert plugins_used(program, pm) == [
        {"point": "eviction order", "name": "mine", "plugin": mine, "distribution": None, "version": None},
        {"point": "stage kind", "name": "slow", "plugin": "acme", "distribution": "serq-acme", "version": "0.3.0"}]
    # the run keys' lines as they were written before the helper: the parts, the report's figures, then each
    # provider's distribution and version, or the plugin registered in this process
    parts = [f"{n} {d.version if d is not None else 'absent'}" for n, d in find_distributions(PARTS).items()]
    assert deciding(program, pm) == sorted({*parts, f"report version {FIGURES_VERSION}", "serq-acme 0.3.0",
                                            f"{mine} (registered in this process)"})


def test_a_sweep_of_a_plugins_kind_resumes_its_table(acme, tmp_path):
    import os

    (tmp_path / "p.sq").write_text(PLUGGED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(acme), os.environ.get("PYTHONPATH", "")])}
    cmd = [SERQ, "sweep", "p.sq", "--seeds", "1..2", "--workers", "0", "--no-progress", "-o", "t.csv"]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=100, env=env,
                           stdin=subprocess.DEVNULL)
    assert first.returncode == 0 and "(2 run now, 0 resumed)" in first.stderr, first.stderr
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=100, env=env,
                           stdin=subprocess.DEVNULL)
    assert again.returncode == 0 and "(0 run now, 2 resumed)" in again.stderr, again.stderr


# 7. the note that every seed ran the same run counts its points in the right number ("at each of 1 point(s)")
@pytest.mark.parametrize("points, said", [(1, "at each of 1 point its 3 seeds"), (2, "at each of 2 points its 3 seeds")])
def test_the_seeds_alike_note_counts_its_points_in_words(points, said):
    from serq_sweep.alike import seeds_alike

    runs = [{"point": p, "seed": s, "status": "ok", "w.mean": 1.0} for p in range(points) for s in (1, 2, 3)]
    note = seeds_alike(runs, ["point", "seed", "key", "status", "warnings", "w.mean"], "the CIs across them are 0")
    assert note.startswith(f"note: every seed ran the same run: {said} gave every figure alike, "), note
