"""Same program, same seed, the same bytes whatever the locale's encoding (the determinism audit).

serQ's files are UTF-8 (docs/language.md); a file of its own read in the locale's encoding made a compile
depend on the locale: the grammar files' comments hold ``…`` and ``§``, so under an ASCII locale (``LC_ALL=C``
with Python's UTF-8 mode and locale coercion off, as a minimal container may run it) every compile ended in
a ``UnicodeDecodeError`` traceback, and under a Latin-1 one the grammar was another text.
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

SERQ = str(Path(sys.executable).parent / "serq")

#: a locale whose encoding is ASCII: C, with the UTF-8 mode and the coercion to C.UTF-8 turned off
ASCII = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}

PROG = """// M/M/1 — a comment with a dash, an ellipsis … and a section sign §
let lam = 0.5;
stage svc : fifo;
workload { arrive poisson(lam); }
session {
  set t0 = now;
  run svc (~exp(1));
  observe response = now - t0;
}
run { horizon 100; }
"""


def _env(**extra: str) -> dict[str, str]:
    # the compile cache off: a hit reads no grammar (the LALR tables of the suite's cache folder stay on)
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_CTYPE", "LANG", "PYTHONUTF8",
                                                             "PYTHONCOERCECLOCALE", "PYTHONIOENCODING")}
    return {**env, "SERQ_COMPILE_CACHE": "0", **extra}


def test_the_ir_does_not_depend_on_the_locales_encoding(tmp_path):
    prog = tmp_path / "mm1.sq"
    prog.write_bytes(PROG.encode("utf-8"))
    enc = subprocess.run([sys.executable, "-c", "import locale; print(locale.getpreferredencoding(False))"],
                         capture_output=True, text=True, env=_env(**ASCII), timeout=60).stdout.strip()
    assert codecs.lookup(enc).name == "ascii", enc  # the child's locale really is ASCII
    utf8 = subprocess.run([SERQ, "ir", str(prog), "--no-spans"], capture_output=True, timeout=120,
                          env=_env(LC_ALL="C.UTF-8"))
    ascii_ = subprocess.run([SERQ, "ir", str(prog), "--no-spans"], capture_output=True, timeout=120,
                            env=_env(**ASCII))
    assert utf8.returncode == 0, utf8.stderr.decode()
    assert ascii_.returncode == 0 and ascii_.stderr == b"", ascii_.stderr.decode()[-500:]
    assert ascii_.stdout == utf8.stdout
    ir = json.loads(ascii_.stdout)
    assert [s["name"] for s in ir["stages"]] == ["svc"]


# two programs that use sugar layers (definitions; a queue with its roles, as lib/vllm.sq's request side)
SUGARED = [PROG.replace("run svc (~exp(1));", "run svc (service());").replace("let lam = 0.5;",
                                                                          "let lam = 0.5;\ndef service() = ~exp(1);"),
           """let lam = 0.5;
pool p[2] { cap 1; }
stage svc[2] : fifo;
workload { arrive poisson(lam); }
session {
  set t0 = now;
  choose k in 2 by (queued(p[k]));
  hold p[k] (1) { run svc[k] (~exp(1)); }
  observe response = now - t0;
  set best = max j in 2 (queued(p[j]));
}
run { horizon 100; }
"""]


def test_compiles_in_two_threads_at_once_give_what_each_gives_alone():
    # the parser of a set of layers is shared, and so was what its builders note while they build (the
    # file, the reporter, the layers whose rules were built): a compile that started in another thread
    # cleared that in the middle of this one's parse, which then skipped a layer it used
    import threading

    import serq_frontend
    import serq_ir

    alone = [serq_ir.encode(serq_frontend.compile(source=s)) for s in SUGARED]
    got: list[tuple[int, bytes | str]] = []

    def work(i: int) -> None:
        for _ in range(25):
            try:
                got.append((i, serq_ir.encode(serq_frontend.compile(source=SUGARED[i]))))
            except serq_frontend.CompileError as e:
                got.append((i, str(e)))

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads switch often: their parses interleave
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert len(got) == 50
    wrong = [(i, r) for i, r in got if r != alone[i]]
    assert not wrong, wrong[:2]


def test_cold_loads_in_two_threads_at_once_give_standard_error_back(tmp_path, monkeypatch):
    # a compile through the cache puts a tee over sys.stderr (what it writes is kept with the entry) and put
    # back what it found only when its own tee was still on top: two that overlapped (A begins, B begins,
    # A ends, B ends) left A's tee as the process's standard error, keeping every write made after
    import threading

    from serq_frontend import cache

    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_COMPILE_CACHE", raising=False)
    files = []
    for i, src in enumerate(SUGARED):
        files.append(tmp_path / f"p{i}.sq")
        files[-1].write_text(src)
    before = sys.stderr

    def work(i: int) -> None:
        for k in range(15):  # another --set value each time: a miss, compiled and stored
            cache.load(files[i], sets={"lam": 0.5 + k / 64})

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert sys.stderr is before
    assert len(list((tmp_path / "cache").glob("compile-*.bin"))) == 30
