"""The example plugins of examples/plugins/, one per hook, each installed from its own distribution the
way a third party ships it (its package and a ``.dist-info`` with its ``entry_points.txt``, as a wheel
installs them) into a temporary folder on ``PYTHONPATH``, and run by ``serq`` from the source program of
its README. They are installed only here: no other test loads them."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from host_helpers import REPO, run_serq

PLUGINS = REPO / "examples" / "plugins"

#: distribution -> (entry point, the hooks it implements)
EXPECTED = {
    "serq-example-batch": ("batch", ["serq_sim_register_stage_kinds"]),
    "serq-example-largest": ("largest", ["serq_sim_register_eviction_orders"]),
    "serq-example-oldest": ("oldest", ["serq_sim_register_preemption_policies"]),
    "serq-example-priority": ("priority", ["serq_sim_register_share_policies"]),
    "serq-example-summary": ("summary", ["serq_report_register_formats"]),
    "serq-example-repeat": ("repeat", ["serq_frontend_register_sugar"]),
    "serq-example-stages": ("stages", ["serq_register_commands"]),
    "serq-example-jobs": ("jobs", ["serq_register_loaders"]),
    "serq-example-mm": ("mm", ["serq_frontend_library_paths"]),
    "serq-example-lint": ("lint", ["serq_addhooks", "serq_example_lint_register", "serq_register_commands"]),
}


def install(dist: Path, site: Path) -> None:
    """What ``pip install --no-deps --target site`` of the distribution's wheel leaves: its package and
    ``NAME-VERSION.dist-info`` with ``METADATA`` and ``entry_points.txt`` (built here, offline)."""
    meta = tomllib.loads((dist / "pyproject.toml").read_text())
    project = meta["project"]
    for package in meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]:
        shutil.copytree(dist / package, site / Path(package).name)
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                   f"Version: {project['version']}\n")
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in groups.items()))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    for dist in sorted(PLUGINS.iterdir()):
        if (dist / "pyproject.toml").exists():
            install(dist, folder)
    return folder


def serq(site: Path, *args: str):
    return run_serq(*args, env={"PYTHONPATH": str(site)})


def program(tmp_path: Path, dist: str, lang: str = "sq", suffix: str = ".sq") -> Path:
    """The README's program (its first ```sq block, or its first ``` block for another ``lang``), as a
    file."""
    text = (PLUGINS / dist / "README.md").read_text()
    src = re.search(r"```" + (lang if lang == "sq" else "") + r"\n(.*?)```", text, re.S).group(1)
    path = tmp_path / f"{dist}{suffix}"
    path.write_text(src)
    return path


def report(site: Path, path: Path, *args: str) -> dict:
    r = serq(site, "run", str(path), "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_there_is_an_example_for_every_registration_hook():
    dists = sorted(p.name for p in PLUGINS.iterdir() if (p / "pyproject.toml").exists())
    assert dists == sorted(EXPECTED)


def test_every_hook_of_every_part_has_an_example():
    import ast

    specs = set()
    for f in REPO.glob("packages/*/src/*/hookspecs.py"):
        specs |= {n.name for n in ast.parse(f.read_text()).body if isinstance(n, ast.FunctionDef)}
    assert specs and specs <= {h for _, hooks in EXPECTED.values() for h in hooks}


def test_serq_plugins_lists_them_with_their_hooks(site):
    r = serq(site, "plugins")
    assert r.returncode == 0, r.stderr
    listed = {p["name"]: p for p in json.loads(r.stdout)}
    for dist, (name, hooks) in EXPECTED.items():
        assert listed[name]["distribution"] == dist
        assert listed[name]["version"] == "0.1.0"
        assert listed[name]["hooks"] == hooks


def test_the_examples_are_not_installed_elsewhere():
    r = run_serq("plugins")
    names = {p["name"] for p in json.loads(r.stdout)}
    assert not names & {name for name, _ in EXPECTED.values()}


def test_stage_kind_batch(site, tmp_path):
    out = report(site, program(tmp_path, "serq-example-batch"))
    assert out["observes"]["t"]["count"] == 3
    assert out["observes"]["t"]["mean"] == pytest.approx((2 + 2 + 5) / 3)


def test_eviction_order_largest(site, tmp_path):
    path = program(tmp_path, "serq-example-largest")
    out = report(site, path)
    assert (out["observes"]["hit0"]["mean"], out["observes"]["hit1"]["mean"]) == (8.0, 0.0)
    assert (out["pools"][0]["evicted_entries"], out["pools"][0]["evicted_units"]) == (1, 16.0)
    # the same program under lru evicts the other entry
    path.write_text(path.read_text().replace("evict @largest;", "evict lru;"))
    out = report(site, path)
    assert (out["observes"]["hit0"]["mean"], out["observes"]["hit1"]["mean"]) == (0.0, 16.0)


def test_preemption_policy_oldest(site, tmp_path):
    out = report(site, program(tmp_path, "serq-example-oldest"))
    assert (out["observes"]["done0"]["count"], out["observes"]["done0"]["mean"]) == (1, 5.0)
    assert (out["observes"]["start1"]["count"], out["observes"]["start1"]["mean"]) == (2, 3.0)
    assert out["pools"][0]["preemptions"] == 2


def test_share_policy_priority(site, tmp_path):
    path = program(tmp_path, "serq-example-priority")
    out = report(site, path)
    assert (out["observes"]["t"]["count"], out["observes"]["t"]["mean"]) == (2, 1.5)
    path.write_text(path.read_text().replace("share priority;", "share maxmin;"))
    assert report(site, path)["observes"]["t"]["mean"] == 2.0


def test_report_format_summary(site, tmp_path):
    r = serq(site, "run", str(program(tmp_path, "serq-example-summary")), "--format", "summary")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "t 2 1.5\nstage d 2 0.2\n"


def test_sugar_layer_repeat(site, tmp_path):
    out = report(site, program(tmp_path, "serq-example-repeat"))
    assert (out["observes"]["t"]["count"], out["observes"]["t"]["mean"]) == (1, 6.0)
    assert out["stages"][0]["completions"] == 9


def test_command_stages(site, tmp_path):
    r = serq(site, "stages", str(program(tmp_path, "serq-example-stages")))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "svc 1 @batch [2.0]\nwire 2 delay\n"


def test_a_misspelt_plugin_name_is_a_positioned_error(site, tmp_path):
    path = program(tmp_path, "serq-example-batch")
    path.write_text(path.read_text().replace("@batch(2)", "@bacth(2)"))
    r = serq(site, "check", str(path))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{path}:1:13: error: stage `svc`: unknown stage kind `@bacth` (plugins "
                               "register: batch; built in: fifo, ps, delay, step) (did you mean `@batch`?)\n")
    assert "  stage svc : @bacth(2);\n              ^" in r.stderr


def test_loader_jobs(site, tmp_path):
    path = program(tmp_path, "serq-example-jobs", lang="", suffix=".jobs")
    out = report(site, path)
    assert (out["observes"]["response"]["count"], out["observes"]["response"]["mean"]) == (3, 4.0)
    bad = tmp_path / "bad.jobs"
    bad.write_text("jobs = 3\nwrok = 2\n")
    r = serq(site, "check", str(bad))
    # at the name that is no field (line 2, column 1), the line quoted with a caret, as a source's mistake is
    assert (r.returncode, r.stderr) == (1, f"{bad}:2:1: error: expected one of jobs, work, servers = a number\n"
                                           "  wrok = 2\n  ^\n")
    bad.write_text("jobs = 3\n  work = two\n")  # a value that is no number: at it, column 10
    r = serq(site, "check", str(bad))
    assert (r.returncode, r.stderr) == (1, f"{bad}:2:10: error: expected one of jobs, work, servers = a number\n"
                                           "    work = two\n           ^\n")


def test_a_plugin_refusing_its_arguments_is_one_positioned_error(site, tmp_path):
    path = program(tmp_path, "serq-example-batch")
    path.write_text(path.read_text().replace("@batch(2)", "@batch(0)"))
    r = serq(site, "run", str(path))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{path}:1:1: error: stage svc: @batch(size) takes one whole number, at least 1, "
                               "not [0.0]\n")
    assert "Traceback" not in r.stderr


def test_library_paths_mm(site, tmp_path):
    # M/D/1 at rho = 0.5: Pollaczek-Khinchine mean response 1 + 0.5 * (1 + 0) / (2 * (1 - 0.5)) = 1.5
    path = program(tmp_path, "serq-example-mm")
    out = report(site, path)["observes"]["response"]
    assert abs(out["mean"] - 1.5) <= out["ci"] < 0.03
    r = run_serq("check", str(path))  # without the plugin: one error at the use, naming where it looked
    assert r.returncode == 1 and r.stderr.startswith(f"{path}:1:1: error: `use \"mm.sq\"`: no such library")


def test_addhooks_lint(site, tmp_path):
    path = program(tmp_path, "serq-example-lint")
    r = serq(site, "lint", str(path))
    assert (r.returncode, r.stdout) == (1, f"{path}: unused-stage: stage `spare` is declared and no run names it\n")
    path.write_text(path.read_text().replace("stage spare : delay;\n", ""))
    r = serq(site, "lint", str(path))
    assert (r.returncode, r.stdout) == (0, f"{path}: 1 lint(s), nothing found\n")
