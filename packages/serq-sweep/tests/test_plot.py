"""serq plot: the data drawn (means and CI bands by hand, a CDF's steps, a gauge's change points), the files
written (SVG that parses, PNG of the size asked, the same bytes twice), and users' mistakes."""

from __future__ import annotations

import csv
import math
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from serq_sweep import plots

ROOT = Path(__file__).resolve().parents[3]
MG1 = ROOT / "examples/single-turn/mg1.sq"
SERQ = str(Path(sys.executable).parent / "serq")


def table(tmp_path) -> tuple[Path, dict]:
    """A runs table written by hand: x in {1, 2}, hue h in {a, b}, three seeds, y = a known value."""
    path = tmp_path / "r.csv"
    values = {}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["point", "h", "x", "seed", "status", "message", "key", "observes.ttft.p99", "events"])
        i = 0
        for h in ("a", "b"):
            for x in (1.0, 2.0):
                ys = [x * (2 if h == "b" else 1) + 0.1 * s for s in (1, 2, 3)]
                values[(h, x)] = ys
                for s, y in zip((1, 2, 3), ys):
                    w.writerow([i, h, x, s, "ok", "", f"k{i}{s}", y, 10])
                i += 1
        w.writerow([i, "a", 3.0, 1, "error", "boom", "kx", "", ""])  # a failed run is no point
    return path, values


def test_curve_draws_means_and_ci_bands(tmp_path):
    path, values = table(tmp_path)
    fig = plots.curve(str(path), "x", "ttft.p99", "h")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["h = a", "h = b"]
    for line, h in zip(ax.lines, ("a", "b")):
        xy = line.get_xydata()
        assert list(xy[:, 0]) == [1.0, 2.0]
        assert list(xy[:, 1]) == pytest.approx([statistics.mean(values[(h, x)]) for x in (1.0, 2.0)])
    for band, h in zip(ax.collections, ("a", "b")):
        verts = band.get_paths()[0].vertices
        for x in (1.0, 2.0):
            ys = values[(h, x)]
            ci = 0.95 / math.sqrt(2 * 0.975 * 0.025) * statistics.stdev(ys) / math.sqrt(3)  # t(2), closed form
            at = sorted({round(float(v[1]), 9) for v in verts if v[0] == x})
            assert at == pytest.approx([statistics.mean(ys) - ci, statistics.mean(ys) + ci])
    svg = tmp_path / "f.svg"
    plots.save(fig, str(svg))
    root = ET.fromstring(svg.read_bytes())
    assert root.tag.endswith("svg") and len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 10
    again = tmp_path / "g.svg"
    plots.save(plots.curve(str(path), "x", "ttft.p99", "h"), str(again))
    assert again.read_bytes() == svg.read_bytes()


def test_cli_png_from_a_sweep_and_from_a_dump(tmp_path, serq_in_process):
    from matplotlib.image import imread

    # (the sweep and the run that make the table and the dump in this process, serq.cli.main; the plots, the
    # commands under test, as child processes)
    out = tmp_path / "r.parquet"
    r = serq_in_process("sweep", str(MG1), "--set", "lambda=0.3,0.6", "--seeds", "1..2", "--horizon", "3000",
                        "--workers", "0", "--out", str(out))
    assert r.returncode == 0, r.stderr
    png = tmp_path / "p.png"
    r = subprocess.run([SERQ, "plot", str(out), "--x", "lambda", "--y", "response.mean", "-o", str(png)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert imread(str(png)).shape[:2] == (480, 768)  # 6.4 x 4 inches at 120 dpi
    # the points table draws the same curve as the runs table
    a = plots.curve_data(str(out), "lambda", "response.mean")[1][None]
    b = plots.curve_data(str(tmp_path / "r.points.parquet"), "lambda", "response.mean")[1][None]
    assert a[0] == b[0] == [0.3, 0.6] and a[1] == pytest.approx(b[1]) and a[2] == pytest.approx(b[2])

    src = tmp_path / "g.sq"
    src.write_text(MG1.read_text().replace("stage svc : fifo;", "stage svc : fifo;\ngauge inq = queue(svc);"))
    dump = tmp_path / "dump"
    r = serq_in_process("run", str(src), "--horizon", "2100", "--dump", str(dump), "--no-progress")
    assert r.returncode == 0, r.stderr
    with open(dump / "response.csv") as f:
        samples = sorted(float(x["value"]) for x in csv.DictReader(f))
    fig = plots.cdf(str(dump), ["response"])
    xy = fig.axes[0].lines[0].get_xydata()
    assert list(xy[:, 0]) == samples and list(xy[:, 1]) == [(i + 1) / len(samples) for i in range(len(samples))]
    with open(dump / "gauge" / "inq.csv") as f:
        points = [(float(x["time"]), float(x["value"])) for x in csv.DictReader(f)]
    fig = plots.gauges(str(dump), ["inq"])
    assert [tuple(p) for p in fig.axes[0].lines[0].get_xydata()] == points
    for args in (("--cdf", "response", "-o", str(tmp_path / "c.svg")), ("--gauge", "inq", "-o", str(tmp_path / "g.pdf"))):
        r = subprocess.run([SERQ, "plot", str(dump), *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"


def test_mistakes(tmp_path):
    from serq.errors import UserError

    path, _ = table(tmp_path)
    (tmp_path / "d").mkdir()
    for kw, msg in [(dict(y="ttft.p99"), "needs --x NAME: the table sweeps h, x"),
                    (dict(x="x", y="tpot.p99"), "no figure 'tpot.p99'"),
                    (dict(x="nope", y="ttft.p99"), "--x nope: no column"),
                    (dict(x="x", y="ttft.p99", out="x.jpg"), "a plot is .svg, .png or .pdf"),
                    (dict(source=tmp_path / "d", gauge=["g"]), "no gauge g in the dump"),
                    (dict(cdf_of=["ttft"]), "--cdf ttft needs the records' columns sent, first_token"),
                    (dict(gauge=["g"]), "--gauge reads a dump folder")]:
        kw.setdefault("source", path)
        with pytest.raises(UserError, match=msg.replace(".", r"\.").replace("(", r"\(")):
            plots.plot(kw.pop("source"), kw.pop("out", str(tmp_path / "x.svg")), **kw)
    r = subprocess.run([SERQ, "plot", str(path), "--x", "x", "--y", "tpot.p99", "-o", "x.svg"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "no figure 'tpot.p99'" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "x.svg").exists()


SINGLE = ROOT / "examples/multi-turn/vllm_single_turn.sq"


def empirical(values):
    """An empirical CDF by hand: the values sorted, and i/n at the i-th."""
    xs = sorted(values)
    return xs, [(i + 1) / len(xs) for i in range(len(xs))]


def test_cdfs_from_the_records_of_a_run(tmp_path, serq_in_process):
    rec = tmp_path / "requests.csv"
    # (the run that makes the records in this process, serq.cli.main; the plot as a child process)
    r = serq_in_process("run", str(SINGLE), "--set", "Lambda=6", "--horizon", "40", "--warmup", "5",
                        "--no-progress", "--records", str(rec))
    assert r.returncode == 0, r.stderr
    with open(rec) as f:
        rows = [{k: float(v) for k, v in x.items()} for x in csv.DictReader(f)]
    assert len(rows) > 100
    want = {"ttft": [x["first_token"] - x["sent"] for x in rows],
            "tpot": [(x["last_token"] - x["first_token"]) / (x["output"] - 1) for x in rows if x["output"] > 1],
            "e2el": [x["last_token"] - x["sent"] for x in rows],
            "prompt": [x["prompt"] for x in rows]}
    want["itl"] = want["tpot"]  # a request's mean gap: its TPOT
    assert len(want["tpot"]) < len(rows)  # requests of one output token have none
    svg = tmp_path / "fig.svg"
    r = subprocess.run([SERQ, "plot", str(rec), "--cdf", "ttft", "--cdf", "tpot", "-o", str(svg)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ET.fromstring(svg.read_bytes()).tag.endswith("svg")
    fig = plots.records_cdf(str(rec), ["ttft", "tpot", "itl", "e2el", "prompt"])
    lines = fig.axes[0].lines
    assert [line.get_label() for line in lines] == [f"{m} ({len(want[m])} requests)"
                                                    for m in ("ttft", "tpot", "itl", "e2el", "prompt")]
    for line, m in zip(lines, ("ttft", "tpot", "itl", "e2el", "prompt")):
        xs, ys = empirical(want[m])
        xy = line.get_xydata()
        assert list(xy[:, 0]) == pytest.approx(xs, rel=1e-15, abs=0) and list(xy[:, 1]) == ys, m


def test_cdfs_from_a_sweeps_records_by_hue(tmp_path, serq_in_process):
    out, rec = tmp_path / "r.parquet", tmp_path / "rec.parquet"
    # (the sweep that makes the records in this process, serq.cli.main; the plot as a child process)
    r = serq_in_process("sweep", str(SINGLE), "--set", "Lambda=2,6", "--seeds", "1..2", "--horizon", "30",
                        "--warmup", "5", "--workers", "0", "--no-progress", "--out", str(out), "--records", str(rec))
    assert r.returncode == 0, r.stderr
    import pyarrow.parquet as pq

    t = pq.read_table(rec).to_pydict()
    png = tmp_path / "cdf.png"
    r = subprocess.run([SERQ, "plot", str(rec), "--cdf", "ttft", "--hue", "Lambda", "-o", str(png)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = plots.records_cdf(str(rec), ["ttft", "e2el"], hue="Lambda")
    lines = fig.axes[0].lines
    assert [line.get_label().split(" (")[0] for line in lines] == [
        "ttft, Lambda = 2", "ttft, Lambda = 6", "e2el, Lambda = 2", "e2el, Lambda = 6"]
    for line, (m, lam) in zip(lines, [("ttft", 2), ("ttft", 6), ("e2el", 2), ("e2el", 6)]):
        end = "first_token" if m == "ttft" else "last_token"
        values = [e - s for e, s, lv in zip(t[end], t["sent"], t["Lambda"]) if lv == lam]  # both seeds
        xs, ys = empirical(values)
        xy = line.get_xydata()
        assert list(xy[:, 0]) == pytest.approx(xs, rel=1e-15, abs=0) and list(xy[:, 1]) == ys
        assert len(values) == sum(1 for lv in t["Lambda"] if lv == lam) > 20
    from serq.errors import UserError

    for kw, msg in [(dict(cdf_of=["ttft"], hue="nope"), "--hue nope: no column nope (the swept names: Lambda)"),
                    (dict(cdf_of=["nope"]), "--cdf nope: no column nope"),
                    (dict(cdf_of=["key"]), "--cdf key: column key does not hold numbers"),
                    (dict(source=out, cdf_of=["ttft"]), "--cdf ttft needs the records' columns sent, first_token"),
                    (dict(gauge=["g"]), "--gauge reads a dump folder")]:
        with pytest.raises(UserError, match=msg.replace("(", r"\(").replace(")", r"\)")):
            plots.plot(kw.pop("source", rec), str(tmp_path / "x.svg"), **kw)
