"""Regenerate the answers of the generated oracle scenarios with the real vLLM scheduler.

Run it with an interpreter that has vLLM (see docs/vllm-oracle.md); serQ itself need not be
installed there, since the bridge (``serq_vllm/real.py``) is loaded from its file:

    ~/vllm-venv/bin/python packages/serq-vllm/scripts/make_oracle.py           # rewrite NAME.out.json
    ~/vllm-venv/bin/python packages/serq-vllm/scripts/make_oracle.py --check   # compare, write nothing
    ~/vllm-venv/bin/python packages/serq-vllm/scripts/make_oracle.py NAME ...  # only these scenarios

``--check`` exits 1 if any answer differs from the stored one (on first, done, preempted, cached,
preemptions and steps), e.g. to check a new vLLM release against the stored data.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "serq_vllm"
GENERATED = PACKAGE / "oracle" / "generated"
FIELDS = ("first", "done", "preempted", "cached", "preemptions", "steps")


def load_real():
    spec = importlib.util.spec_from_file_location("serq_vllm_real", PACKAGE / "real.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scenarios(folder: Path, names: list[str]) -> list[Path]:
    paths = sorted(p for p in folder.glob("*.json") if not p.name.endswith((".out.json", ".target.json")))
    if names:
        wanted = {n.removesuffix(".json") for n in names}
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            sys.exit(f"no such scenario in {folder}: {', '.join(sorted(unknown))}")
        paths = [p for p in paths if p.stem in wanted]
    # a folder may also hold other data (e.g. measured results): only files with requests
    return [p for p in paths if isinstance(json.loads(p.read_text()).get("requests"), list)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="scenario names (default: all in the folder)")
    ap.add_argument("--check", action="store_true", help="compare with the stored answers, write nothing")
    ap.add_argument("--dir", type=Path, default=GENERATED, help=f"scenario folder (default: {GENERATED})")
    args = ap.parse_args()

    real = load_real()
    try:
        version = real.vllm_version()
        if version is None:
            raise real.VllmNotInstalled("vLLM is not installed; see docs/vllm-oracle.md")
    except real.VllmNotInstalled as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    differ = 0
    for path in scenarios(args.dir, args.names):
        answer = real.run_real(json.loads(path.read_text()))
        out = path.with_name(path.stem + ".out.json")
        if args.check:
            if not out.exists():
                print(f"{path.stem}: no stored answer")
                differ += 1
                continue
            stored = json.loads(out.read_text())
            diffs = [f for f in FIELDS if f in stored and stored[f] != answer[f]]
            print(
                f"{path.stem}: {'differs on ' + ', '.join(diffs) if diffs else 'same'}"
                f" (stored vLLM {stored.get('vllm', '?')}, this vLLM {answer['vllm']})"
            )
            differ += bool(diffs)
        else:
            out.write_text(json.dumps(answer) + "\n")
            print(
                f"{path.stem}: wrote {out.name} (steps {answer['steps']}, "
                f"preemptions {answer['preemptions']})"
            )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
