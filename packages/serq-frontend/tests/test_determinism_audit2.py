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
