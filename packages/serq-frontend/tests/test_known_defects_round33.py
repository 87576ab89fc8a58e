"""Known defects, round 33, in serq-frontend's compile cache.

2. The key did not cover the serq host's own sources nor the serq-* distributions but serq-frontend's and
   serq-ir's: an entry kept the warnings of a compile whose words (serq's messages) had been edited since in
   the checkout, or made with another version of a serq part. The key now has every installed serq and
   serq-* distribution (the dist-info names: the versions) and the size and modification time of the files
   of serq-frontend, serq-ir and serq, those made once per process. A folder that is not empty at an
   entry's name made that program miss for ever, silently: it is said in one warning on stderr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import serq
import serq_frontend
import serq_ir
from serq_frontend import cache

BIN = Path(sys.executable).parent

PROGRAM = """stage s : fifo;
workload { arrive poisson(0.5); }
session { run s (~exp(1)); }
run { horizon 10; }
"""

KEY = """import serq_frontend
from serq_frontend import cache

pm = serq_frontend._default_pm(None)
print(cache.compute_key("p.sq", "/p.sq", "stage s : fifo;", {}, {}, pm, []))
"""


def _key(env: dict[str, str]) -> str:
    r = subprocess.run([sys.executable, "-c", KEY], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_an_edit_of_the_serq_hosts_sources_is_a_miss(tmp_path):
    # a checkout of the host whose messages (serq.errors) are edited: its version stays as it was
    shadow = tmp_path / "shadow"
    shutil.copytree(Path(serq.__file__).parent, shadow / "serq", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    first = _key(env)
    assert _key(env) == first  # the same code, the same key
    errors = shadow / "serq" / "errors.py"
    errors.write_text(errors.read_text() + "\n# an edit\n")
    assert _key(env) != first


def _dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_every_installed_serq_distributions_version_is_in_the_key(tmp_path, monkeypatch):
    pm = serq_frontend._default_pm(None)

    def key() -> str:
        return cache.compute_key("p.sq", "/p.sq", "stage s : fifo;", {}, {}, pm, [])

    plain = key()
    # a serq-* distribution of another name (a third party's part), then another version of it
    one, two, other = tmp_path / "one", tmp_path / "two", tmp_path / "other"
    _dist(one, "serq-foo", "1.0")
    _dist(two, "serq-foo", "1.1")
    _dist(other, "fooserq", "1.0")  # of another family: not the compile's code
    monkeypatch.syspath_prepend(str(other))
    assert key() == plain
    with monkeypatch.context() as m:
        m.syspath_prepend(str(one))
        first = key()
    with monkeypatch.context() as m:
        m.syspath_prepend(str(two))
        second = key()
    assert len({plain, first, second}) == 3
    versions = cache._versions()
    assert versions["serq"].startswith("serq-") and versions["serq_sim"].startswith("serq_sim-"), versions


def test_the_sources_are_stamped_once_a_process(monkeypatch):
    pm = serq_frontend._default_pm(None)
    walked: list[str] = []
    real = cache._tree

    def tree(folder: str) -> list:
        walked.append(folder)
        return real(folder)

    monkeypatch.setattr(cache, "_tree", tree)
    monkeypatch.setattr(cache, "_SOURCES", [], raising=False)
    one = cache.compute_key("p.sq", "/p.sq", "stage s : fifo;", {}, {}, pm, [])
    two = cache.compute_key("q.sq", "/q.sq", "stage s : fifo;", {}, {}, pm, [])
    assert one != two
    assert sorted(walked) == sorted(os.path.dirname(os.path.abspath(m.__file__))
                                    for m in (serq_frontend, serq_ir, serq))


def test_a_folder_at_an_entrys_name_is_said_once(tmp_path):
    folder = tmp_path / "cache"
    prog = tmp_path / "p.sq"
    prog.write_text(PROGRAM)
    env = {**os.environ, "SERQ_CACHE_DIR": str(folder)}
    env.pop("SERQ_COMPILE_CACHE", None)

    def check() -> subprocess.CompletedProcess:
        return subprocess.run([str(BIN / "serq"), "check", str(prog)], capture_output=True, text=True, env=env,
                              timeout=60)

    r = check()
    assert r.returncode == 0 and r.stderr == "", r.stderr
    (entry,) = folder.glob("compile-*.bin")
    entry.unlink()
    (entry / "kept").mkdir(parents=True)  # a folder of someone's, not empty, where the entry goes
    for _ in range(2):
        r = check()
        assert r.returncode == 0 and r.stdout.startswith("OK:"), r.stderr
        assert r.stderr == (f"serq: warning: the cache cannot keep {entry}: a folder that is not empty is there "
                            "and cannot be removed (Directory not empty); remove it, or what it would keep is "
                            "made again at every run\n"), r.stderr
    assert (entry / "kept").is_dir()
    # once it is gone the entry is kept again, silently
    (entry / "kept").rmdir()
    entry.rmdir()
    assert check().stderr == "" and entry.is_file()


# 6. `serq fmt --check` said both "some file would be reformatted" and "a file could not be checked" with
#    status 1. An error of --check is status 2 (a usage error's, the one other status every command gives),
#    with its message as it was; 1 is "would reformat" alone. Without --check an error stays 1, as in
#    serq check.

LOOSE = PROGRAM.replace("stage s : fifo;", "stage   s:fifo;")


def _fmt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "serq"), "fmt", *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)


def test_fmt_check_tells_an_error_from_a_file_to_reformat(tmp_path):
    from serq_frontend.fmt import format_source

    (tmp_path / "good.sq").write_text(format_source(PROGRAM))
    (tmp_path / "loose.sq").write_text(LOOSE)
    (tmp_path / "bad.sq").write_text("let x = ;\n")
    (tmp_path / "p.ir.json").write_text("{}")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    r = _fmt(tmp_path, "--check", "good.sq", "loose.sq")
    assert (r.returncode, r.stdout, r.stderr) == (1, "would reformat loose.sq\n", "")
    errors = {
        ("loose.sq", "bad.sq"): "bad.sq:1:9: error: unexpected `;`",
        ("good.sq", "absent.sq"): "error: absent.sq: cannot read: No such file or directory\n",
        ("loose.sq", "p.ir.json"): "error: p.ir.json: an IR file, not serQ source",
    }
    for files, said in errors.items():
        r = _fmt(tmp_path, "--check", *files)
        assert (r.returncode, r.stdout) == (2, "") and r.stderr.startswith(said), r.stderr
        # the same error without --check: status 1, the same message, as serq check's
        plain = _fmt(tmp_path, *files)
        assert (plain.returncode, plain.stderr) == (1, r.stderr)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written
