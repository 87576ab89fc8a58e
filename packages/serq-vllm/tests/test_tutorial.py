"""docs/tutorial.md: every command in it runs, in order, as written (in a copy of its folder), and says
what the text says it says."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: each worker runs the tutorial itself
    fcntl = None

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text())]


def test_the_program_in_the_text_is_the_file():
    (sq,) = [body for kind, body in blocks() if kind == "sq"]
    assert sq == (ROOT / "docs" / "tutorial" / "engine.sq").read_text()


def run_the_tutorial(work: Path) -> list[tuple[str, str]]:
    """Every sh and python block run in order in ``work``, a fresh folder holding docs/tutorial/; what each
    printed."""
    shutil.copytree(ROOT / "docs" / "tutorial", work / "docs" / "tutorial")
    # (the caches of the test run, SERQ_CACHE_DIR as the root conftest sets it, as a user's own: the tables and
    # compiled programs each command made again with the caches off were 0.2 s of CPU a command)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    outputs = []
    for kind, body in blocks():
        if kind == "sh":
            for line in body.splitlines():
                p = subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True, text=True,
                                   timeout=900)
                assert p.returncode == 0, f"{line}\n{p.stdout}\n{p.stderr}"
                assert "Traceback" not in p.stderr, p.stderr
                outputs.append((line, p.stdout))
        elif kind == "python":
            p = subprocess.run([sys.executable, "-c", body], cwd=work, env=env, capture_output=True, text=True,
                               timeout=900)
            assert p.returncode == 0, f"{body}\n{p.stdout}\n{p.stderr}"
            outputs.append((body, p.stdout))
    return outputs


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The tutorial run once for the whole test run: the pytest-xdist workers of one run share the parent of
    their temporary folders, and the first worker to need the run makes it there (under a lock) for the
    others, which read what it printed (a module fixture alone runs it again in each worker that gets one
    of these tests). A run that fails leaves nothing behind, so the next worker runs it again."""
    pytest.importorskip("pandas", reason="the tutorial reads its outputs with pandas (the dev environment has it)")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None:
        shared = shared.parent
    work, printed = shared / "tutorial", shared / "tutorial-printed.json"
    with open(shared / "tutorial.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if not printed.exists():
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            printed.write_text(json.dumps(run_the_tutorial(work)))
        return work, [tuple(pair) for pair in json.loads(printed.read_text())]


@pytest.mark.timeout(1800)  # the first test to use the fixture runs the whole tutorial
def test_every_command_runs(ran):
    work, outputs = ran
    assert len(outputs) == sum(len(b.splitlines()) if k == "sh" else 1 for k, b in blocks() if k in ("sh", "python"))


@pytest.mark.timeout(1800)
def test_what_the_text_says_the_runs_show(ran):
    work, outputs = ran
    one = next(out for cmd, out in outputs if cmd.startswith("serq run docs/tutorial/engine.sq --no-progress --slo"))
    assert "requests (request): completed" in one and "goodput" in one and "\nttft " in one
    # the goodput chapter 2 quotes is the command's, and the Python API's set_slo gives the same count
    quoted = re.search(r"\(`(goodput [\d.]+ req/s \((\d+) of (\d+) good: .*?)  attainment", DOC.read_text())
    assert quoted and quoted.group(1) in one
    api = next(out for cmd, out in outputs if "report.set_slo(" in cmd)
    assert api.splitlines()[-1] == f"{quoted.group(2)} of {quoted.group(3)} good"
    # the observe table has the library's observes the text names, and no other
    said = re.search(r"The observe table above it has the library's own\s+observes \((.*?)\), each", DOC.read_text(), re.S)
    names = re.findall(r"`(\w+)`", said.group(1))
    table = one.split("\n\n")[1].splitlines()
    assert table[0].split()[0] == "observe" and sorted(line.split()[0] for line in table[1:]) == sorted(names)
    # the stage table's completions, which the text counts out: its figures are this run's
    text = " ".join(DOC.read_text().split())
    blocks = [b.splitlines() for b in one.split("\n\n")]
    stage = next(b for b in blocks if b and b[0].startswith("stage "))
    completions = int(stage[1].split()[stage[0].split().index("completions")])
    engine = next(b for b in blocks if b and b[0].startswith("engine "))
    assert engine[0].split()[-2:] == ["requests", "req/s"]  # (`token util` is a heading of two words)
    requests = int(engine[1].split()[-2])
    instants = dict(re.findall(r"(\w+) (\d+)", one.split("instants (samples only): ", 1)[1].splitlines()[0]))
    first, done = int(instants["first_token"]), int(instants["done"])
    completed = int(re.search(r"requests \(request\): completed (\d+)", one).group(1))
    assert (f"This run shows `completions {completions}` beside the engine table's `requests {requests}`: {first} "
            f"prefills") in text
    assert f"(the instants' `first_token {first}`) and {done} decodes (`done {done}`), less {first + done - completions} " \
           "decodes of no token" in text
    assert f"{first} + {done} − {first + done - completions}." in text and f"`completed {completed}`" in text
    # one row per request, and the JSON reports one row per run
    import pandas as pd

    df = pd.read_csv(work / "out" / "requests.csv")
    report = json.loads((work / "out" / "rate2.json").read_text())
    assert len(df) == report["requests"]["completed"] == report["records"]["request"]
    assert list(df.columns[:4]) == ["session", "turn", "time", "sent"]
    runs = pd.json_normalize([json.loads((work / "out" / f"rate{r}.json").read_text()) for r in (2, 4, 6, 8)])
    assert len(runs) == 4 and runs["program.sets.rate"].tolist()[1:] == [4.0, 6.0, 8.0]  # rate2: the default
    p99 = list(runs["requests.ttft.p99"])
    assert p99[0] < 1 < p99[-1]  # the answer lies between rate 2 and rate 8
    assert report["notes"] == [] and any("not steady" in n for n in runs["notes"].iloc[-1])
    # a report written with -o holds its warnings; the terminal shows none (the text says so)
    p = subprocess.run(["bash", "-c", "serq run docs/tutorial/engine.sq --no-progress --set rate=8 --json -o out/q.json"],
                       cwd=work, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert p.returncode == 0 and p.stdout == p.stderr == "", p.stderr
    # --strict exits 4 and says why on stderr, with -o too (it exited 4 without a word)
    p = subprocess.run(["bash", "-c", "serq run docs/tutorial/engine.sq --no-progress --set rate=8 --strict -o out/q.json"],
                       cwd=work, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert p.returncode == 4 and p.stdout == "", p.stderr
    assert p.stderr.startswith("error: --strict: the report has 1 warning (exit status 4): the run is not steady: ")
    # the printed table has every column (pandas' print fitted it to 80 characters: "..." for the p99)
    table = next(out for cmd, out in outputs if "json_normalize" in cmd).splitlines()
    assert table[0].split() == ["program.sets.rate", "requests.ttft.p99", "requests.request_throughput", "notes"]
    assert [float(line.split()[2]) for line in table[1:5]] == pytest.approx(p99, rel=1e-5)
    kv = json.loads((work / "out" / "kv1200.json").read_text())
    full = json.loads((work / "out" / "rate4.json").read_text())
    assert kv["pools"][1]["name"] == "kv" and kv["pools"][1]["preemptions"] > full["pools"][1]["preemptions"]
    # the cost lands on the wait (a smaller batch, a queue that grows), not on the TPOT tail
    assert 100 < kv["pools"][1]["preemptions"] and full["pools"][1]["preemptions"] == 0
    assert kv["requests"]["ttft"]["p99"] > 60 > 0.5 > full["requests"]["ttft"]["p99"]
    assert kv["requests"]["tpot"]["p99"] < full["requests"]["tpot"]["p99"]
    assert kv["stages"][0]["batch"] < 0.7 * full["stages"][0]["batch"]
    assert any("not steady" in n for n in kv["notes"])
    last = next(out for cmd, out in outputs if "--set blocks=100 " in cmd)
    assert "warning: pool kv rejected" in last and "can never fit its capacity 1600" in last


@pytest.mark.timeout(1800)
def test_what_the_sweep_chapter_says(ran):
    work, outputs = ran
    import pandas as pd

    sweep_cmd = next(cmd for cmd, _ in outputs if cmd.startswith("serq sweep docs/tutorial/engine.sq --set rate"))
    runs = pd.read_csv(work / "out" / "sweep.csv")
    assert len(runs) == 24 and (runs["status"] == "ok").all()
    p99 = runs.groupby(["rate", "blocks"])["requests.ttft.p99"].mean()
    assert p99[(2, 8010)] < p99[(4, 8010)] < p99[(6, 8010)] < 1 < 5 < p99[(8, 8010)]
    assert p99[(2, 1200)] > 1
    # the warnings column: not-steady for every run at rate 8, and with 1200 blocks from rate 4 on; no other
    steady = runs["warnings"].isna()
    assert set(runs.loc[~steady, "warnings"]) == {"not-steady"}
    unsteady = {(r, b) for r, b, s in zip(runs["rate"], runs["blocks"], steady) if not s}
    assert unsteady == {(8, 8010), (4, 1200), (6, 1200), (8, 1200)}
    assert (~steady).sum() == 12  # each of those 4 points under all 3 seeds
    points = pd.read_csv(work / "out" / "sweep.points.csv")
    assert len(points) == 8 and (points["runs"] == 3).all()
    recs = pd.read_parquet(work / "out" / "sweep_requests.parquet")
    assert list(recs.columns[:6]) == ["point", "rate", "blocks", "seed", "key", "session"]
    assert (runs["key"].map(recs.groupby("key").size()) == runs["records.request"]).all()
    joined = next(out for cmd, out in outputs if "rows per run" in cmd)
    assert "rows per run = the run's request count: True" in joined
    # a rerun runs nothing
    p = subprocess.run(["bash", "-c", sweep_cmd], cwd=work, capture_output=True, text=True, timeout=900,
                       env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert p.returncode == 0 and "(0 run now, 24 resumed)" in p.stderr, p.stderr
    # the capacity search lands inside the grid's bracket, in 6 evaluations
    found = next(out for cmd, out in outputs if "--find" in cmd).splitlines()
    assert found[0].split() == ["blocks", "rate", "outcome", "holds", "fails", "evaluations", "requests.ttft.p99:mean"]
    blocks, rate, outcome, holds, fails, evaluations, p99 = found[1].split()
    assert outcome == "found" and 6 <= float(holds) < float(fails) <= 8 and float(fails) - float(holds) <= 0.5
    assert 0 < float(p99) <= 1  # (the condition's mean at the value found)
    # bisecting 2:10 to --tol 0.5 evaluates the midpoints 6, 8, 7, 6.5: the grid says 6 holds (its runs are
    # these: same program, seeds and bounds) and 8 fails, so the bracket is one of 6 to 6.5, 6.5 to 7, 7 to
    # 7.5 and 7.5 to 8; the text says the first
    assert (holds, fails) == ("6.0", "6.5")
    assert evaluations == "6"
    # the KV search on the grid of whole blocks: upwards, to two neighbouring counts, the figures the text gives
    kv = next(out for cmd, out in outputs if "--over blocks" in cmd).splitlines()
    assert kv[0].split() == ["rate", "blocks", "outcome", "holds", "fails", "evaluations", "requests.ttft.p99:mean"]
    said = re.search(r"outcome `found_smallest`: ([\d ]+) blocks \(([\d ]+) tokens\), ([\d ]+) failing, in (\d+) "
                     r"evaluations", " ".join(DOC.read_text().split()))
    blocks, tokens, failing, count = (int(g.replace(" ", "")) for g in said.groups())
    assert kv[1].split()[:6] == ["4", str(blocks), "found_smallest", str(blocks), str(failing), str(count)]
    assert 0 < float(kv[1].split()[6]) <= 1  # (the condition's mean at the value found)
    assert (tokens, failing) == (blocks * 16, blocks - 1)
    # the paired CI of the mean E2E latency is far narrower than the unpaired one; the small cache preempts
    compare = next(out for cmd, out in outputs if cmd.startswith("serq compare"))
    rows = {line.split()[0]: line.split() for line in compare.splitlines()[2:]}
    e2el = rows["requests.e2el.mean"]
    assert float(e2el[4]) < float(e2el[5]) / 10 and float(e2el[6].rstrip("%")) > 90
    # the figures the text quotes, to the digits it gives; over 100 times the seeds: (unpaired / paired)**2
    assert (round(float(e2el[4]), 3), round(float(e2el[5]), 2)) == (0.068, 0.85)
    assert (float(e2el[5]) / float(e2el[4])) ** 2 > 100
    assert float(rows["pools.kv.preemptions"][2]) > 0 == float(rows["pools.kv.preemptions"][1])
    # the plots are SVG files
    import xml.etree.ElementTree as ET

    for name in ("ttft_vs_rate.svg", "rate2_cdf.svg", "ttft_cdf_rate6.svg"):
        assert ET.fromstring((work / "out" / name).read_bytes()).tag.endswith("svg"), name
