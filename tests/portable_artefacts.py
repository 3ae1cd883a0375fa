"""Write, into one folder, a sample of everything steersim outputs whose bytes must not depend on the
machine: a long stream of delays of each random distribution, a `simulate --json` sweep and per-seed
traces of every model, `check --json` of the teaching model with both engines (less `seconds`, the one
field that is wall time), and a piece of the `reports/` regeneration (the teaching model's reports and
every canonical trace and diagram).

    python tests/portable_artefacts.py OUT

tests/test_portable.py runs it under several CPU dispatch settings and compares the folders byte for
byte. It also writes `dispatch.json`, which numpy kernels this process runs, so that the test can show
that a setting really changed the dispatch; that file is the one not compared.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
from pathlib import Path

from steersim.cli import main as steersim
from steersim.core.registry import available_models
from steersim.errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_VIOLATION
from steersim.simulate.audit import record
from steersim.simulate.timing import Clocks, TimingProfile

ROOT = Path(__file__).resolve().parents[1]
SEEDS = "0..19"
TRACED_SEEDS = range(5)
DISPATCH_FILE = "dispatch.json"
# enough delays to show a function whose last bit depends on the CPU in one case in 1,500 (glibc's exp)
DELAYS = 50_000
SAMPLED = {"exponential": {"dist": "exponential", "mean": 0.2},
           "lognormal": {"dist": "lognormal", "median": 1.5, "sigma": 1.0},
           "uniform": {"dist": "uniform", "low": 0.25, "high": 4.0}}


def run(argv: list[str]) -> None:
    """A steersim command whose verdict, whatever it is, is an artefact: only a failure stops."""
    with contextlib.redirect_stdout(io.StringIO()):
        code = steersim(argv)
    if code not in (EXIT_OK, EXIT_VIOLATION, EXIT_INCOMPLETE):
        raise SystemExit(f"steersim {' '.join(argv)} exited {code}")


def write_artefacts(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    clocks = Clocks(TimingProfile.from_mapping(SAMPLED), 0)
    for kind in SAMPLED:
        (out / f"delays-{kind}.txt").write_text("".join(f"{clocks.delay(kind)!r}\n" for _ in range(DELAYS)))
    specs = available_models()
    for name, spec in sorted(specs.items()):
        run(["simulate", name, "--seeds", SEEDS, "--json", str(out / f"simulate-{name}.json"),
             "--out", str(out / "counterexamples")])
        record(spec, spec.resolve({}), None, TRACED_SEEDS, out / "traces" / name)
    for engine in ("generic", "vector"):
        target = out / f"check-teaching-{engine}.json"
        run(["check", "teaching", "--engine", engine, "--json", str(target)])
        report = json.loads(target.read_text())
        for checked in (report, *report["readings"]):
            del checked["seconds"]
        target.write_text(json.dumps(report, indent=1))
    regenerate = runpy.run_path(str(ROOT / "reports" / "regenerate.py"), run_name="regenerate")  # a script
    regenerate["regenerate"](out / "reports", ["teaching"])
    for scenario in regenerate["SCENARIOS"]:
        regenerate["draw_scenario"](specs[scenario.model], scenario, out / "reports")
    from numpy.lib.introspect import opt_func_info  # numpy 2 only, as is the test that reads it

    (out / DISPATCH_FILE).write_text(json.dumps(opt_func_info(func_name="exp", signature="float64")))


if __name__ == "__main__":
    write_artefacts(Path(sys.argv[1]))
