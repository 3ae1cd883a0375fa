"""Inputs and outputs of the command line: no command writes over what it reads or over another of its
outputs, an output that cannot be written is refused before the work, a write that fails at the end is
bad input (exit 2) naming the path, and trace headers and option values that cannot be honoured are one
line each."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_OK, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[1]
MODEL = '''
from steersim.models.teaching import SPEC as TEACHING
SPEC = TEACHING
'''


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("steersim: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("steersim.checking.explorer.Explorer.run", lambda *a, **k: pytest.fail("the work started"))


def test_an_output_over_the_model_file_is_refused_and_the_source_kept(tmp_path, capsys, no_work):
    model = tmp_path / "victim.py"
    model.write_text(MODEL)
    err = refused(capsys, ["check", f"{model}:SPEC", "--quiet", "--json", str(model)])
    assert "--json" in err and "model's source" in err
    assert model.read_text() == MODEL


@pytest.mark.parametrize("first,second", [("--json", "--junit"), ("--json", "--graph"), ("--junit", "--checkpoint")])
def test_two_outputs_of_one_command_on_one_path_are_refused(tmp_path, capsys, no_work, first, second):
    target = tmp_path / "out.dot"
    err = refused(capsys, ["check", "teaching", "--quiet", first, str(target), second,
                           str(tmp_path / "." / "out.dot")])
    assert f"{first} and {second} both name" in err and not target.exists()


def test_an_output_over_an_input_trace_config_or_resumed_checkpoint_is_refused(tmp_path, capsys, no_work):
    trace = tmp_path / "t.jsonl"
    trace.write_text("x\n")
    assert "the file read as TRACE" in refused(capsys, ["diagram", str(trace), "-o", str(trace)])
    config = tmp_path / "ci.toml"
    config.write_text("")
    assert "--config" in refused(capsys, ["ci", "--config", str(config), "--junit", str(config)])
    ckpt = tmp_path / "run.ckpt"
    ckpt.write_text("")
    assert "--resume" in refused(capsys, ["check", "teaching", "--quiet", "--resume", str(ckpt), "--json", str(ckpt)])
    linked = tmp_path / "link.toml"
    linked.hardlink_to(config)  # another name of the same file
    assert "--config" in refused(capsys, ["ci", "--config", str(config), "--json", str(linked)])


def test_validate_never_writes_its_report_over_a_log_it_reads(tmp_path, capsys, no_work):
    logs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for log in logs:
        log.write_text('{"fact": "steer.submitted", "id": "s1", "target": "conversation"}\n')
    err = refused(capsys, ["validate", "teaching", *map(str, logs), "--json", str(logs[1])])
    assert "the file read as LOG" in err
    assert logs[1].read_text().startswith('{"fact"')


@pytest.mark.parametrize("argv,said", [
    (["conform", "foundry", "--latency", "{out}", "--json", "{out}"], "the file read as --latency"),
    (["conform", "langgraph", "--json", "{out}", "--report", "{out}"], "the file given as --json"),
    (["conform", "pydantic-ai", "--json", "{out}", "--report", "{out}"], "the file given as --json"),
    (["conform", "codex", "--json", "{out}", "--report", "{out}"], "the file given as --json"),
    (["conform", "openclaw", "--known", "{out}", "--json", "{out}"], "the file read as --known"),
    (["serve", "openai-ws", "--port", "0", "--seed", "1", "--record", "{out}", "--json", "{out}"], "both name"),
])
def test_the_harnesses_never_write_over_their_inputs_or_each_other(tmp_path, capsys, argv, said):
    out = tmp_path / "x.json"
    err = refused(capsys, [arg.format(out=out) for arg in argv])
    assert said in err and not out.exists()


def test_a_resumed_checkpoint_may_be_the_runs_checkpoint_too(tmp_path, capsys):
    ckpt = tmp_path / "run.ckpt"
    assert main(["check", "teaching", "--quiet", "--checkpoint", str(ckpt), "--checkpoint-every", "0"]) == EXIT_OK
    assert main(["check", "teaching", "--quiet", "--checkpoint", str(ckpt), "--checkpoint-every", "0",
                 "--resume", str(ckpt)]) == EXIT_OK


@pytest.mark.parametrize("option", ["--json", "--junit", "--graph", "--checkpoint"])
def test_an_output_file_named_as_a_folder_is_refused(tmp_path, capsys, no_work, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    assert "names a folder" in refused(capsys, ["check", "teaching", "--quiet", option, "newdir/"])
    assert not (tmp_path / "newdir").exists()


@pytest.mark.parametrize("argv", [["check", "teaching", "--quiet", "--json", "/proc/steersim.json"],
                                  ["simulate", "teaching", "--seeds", "0", "--json", "/proc/steersim.json"],
                                  ["check", "teaching", "--quiet", "--traces", "/proc/steersim-traces"],
                                  ["check", "teaching", "--quiet", "--json", "/proc/self/status"]])
def test_outputs_where_nothing_can_be_written_are_refused_before_the_work(capsys, no_work, argv):
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    assert "cannot write" in refused(capsys, argv)


def test_a_write_that_fails_after_the_work_is_bad_input_naming_the_path(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.json"

    def disk_full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr("steersim.report.formats.write_json", disk_full)
    err = refused(capsys, ["check", "teaching", "--quiet", "--json", str(out)])
    assert f"--json {out}: cannot write {out} (No space left on device)" in err


def test_an_error_of_another_file_is_still_an_internal_error(tmp_path, capsys, monkeypatch):
    def elsewhere(*args, **kwargs):
        raise OSError(errno.EACCES, "Permission denied", "/somewhere/else")

    monkeypatch.setattr("steersim.report.formats.write_json", elsewhere)
    assert main(["check", "teaching", "--quiet", "--json", str(tmp_path / "r.json")]) == 4
    assert "internal error" in capsys.readouterr().err


@pytest.mark.parametrize("seeds", ["-5..3", "-1"])
def test_negative_seeds_are_named_as_a_bad_range(capsys, seeds):
    assert f"--seeds {seeds}: need 0 <= A" in refused(capsys, ["simulate", "teaching", "--seeds", seeds])


@pytest.mark.parametrize("address", ["not a url", "notaurl", "tcp://:8786", "host:99999", "http://h:1/path"])
def test_a_dask_address_that_is_none_is_refused_while_parsing(capsys, address):
    assert "argument --dask" in refused(capsys, ["check", "teaching", "--quiet", "--dask", address])


def _trace(tmp_path: Path) -> list[str]:
    folder = tmp_path / "traces"
    assert main(["simulate", "teaching", "--bug", "lost-at-boundary", "--seeds", "48", "--out", str(folder)]) == 1
    return (folder / "teaching-lost-at-boundary-seed48.jsonl").read_text().splitlines()


@pytest.mark.parametrize("field,value", [("model", "nosuch"), ("params", {"ZZ": 3}), ("bug", "nosuch")])
def test_a_trace_header_naming_what_is_not_here_is_not_drawn(tmp_path, capsys, field, value):
    lines = _trace(tmp_path)
    header = json.loads(lines[0])
    header[field] = value
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    capsys.readouterr()
    err = refused(capsys, ["diagram", str(bad), "-o", str(tmp_path / "d.svg")])
    assert f"line 1 field {field}:" in err and not (tmp_path / "d.svg").exists()


@pytest.mark.parametrize("extra,said", [("9" * 5001, "more than"), ("[" * 100_000 + "]" * 100_000, "nested")])
def test_a_header_too_long_or_too_deep_is_bad_input(tmp_path, capsys, extra, said):
    lines = _trace(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0][:-1] + ', "x": ' + extra + "}", *lines[1:]]) + "\n")
    capsys.readouterr()
    for argv in (["diagram", str(bad), "-o", str(tmp_path / "d.svg")], ["replay", str(bad)]):
        assert said in refused(capsys, argv)


def test_a_check_report_of_a_model_given_by_path_is_drawn(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mine.py").write_text(MODEL)
    report = tmp_path / "r.json"
    main(["check", "mine.py:SPEC", "--bug", "lost-at-boundary", "--quiet", "--json", str(report)])
    data = json.loads(report.read_text())
    assert data["reference"] == "mine.py:SPEC" and data["model"] == "teaching"
    assert main(["diagram", str(report), "-o", "r.svg"]) == EXIT_OK and Path("r.svg").exists()
    data["model"] = "mine"  # a report of an earlier steersim, whose model's name is not installed
    del data["reference"]
    report.write_text(json.dumps(data))
    capsys.readouterr()
    assert "records the model's name" in refused(capsys, ["diagram", str(report), "-o", "old.svg"])


def test_a_checkpoint_is_not_resumed_after_the_model_file_changed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mine.py").write_text(MODEL)
    ckpt = tmp_path / "run.ckpt"
    check = ["check", "mine.py:SPEC", "--quiet"]
    assert main([*check, "--checkpoint", str(ckpt), "--checkpoint-every", "0"]) == EXIT_OK
    assert main([*check, "--resume", str(ckpt)]) == EXIT_OK  # the same source: resumed
    Path("mine.py").write_text(MODEL + "# edited\n")
    capsys.readouterr()
    assert "another version of the model's source" in refused(capsys, [*check, "--resume", str(ckpt)])


def test_the_source_digest_covers_a_built_in_models_package():
    from steersim.checking.source import source_files

    names = [name for name, _ in source_files("teaching")]
    assert "steersim.models.teaching:model.py" in names and "steersim.models.teaching:properties.py" in names


def test_a_checkpoint_of_a_newer_format_is_called_newer(tmp_path, capsys):
    from steersim.checking import checkpoint

    ckpt = tmp_path / "run.ckpt"
    ckpt.write_bytes(f"steersim-checkpoint {checkpoint.VERSION + 1}\n".encode() + b"0" * 64 + b"\n{}\n")
    err = refused(capsys, ["check", "teaching", "--quiet", "--resume", str(ckpt)])
    assert "newer than this steersim reads" in err and "older" not in err
    ckpt.write_bytes(b"steersim-checkpoint 2\n" + b"0" * 64 + b"\n{}\n")
    assert "older format" in refused(capsys, ["check", "teaching", "--quiet", "--resume", str(ckpt)])


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    assert main(["--version"]) == EXIT_OK
    assert capsys.readouterr().out == f"steersim {version('steersim')}\n"


def test_models_lists_a_model_given_by_path_in_text_and_json(tmp_path, capsys):
    model = tmp_path / "mine.py"
    model.write_text(MODEL)
    assert main(["models", f"{model}:SPEC"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("teaching: ") and "--bug lost-at-boundary" in out and "openai-ws" not in out
    assert main(["models", f"{model}:SPEC", "--json"]) == EXIT_OK
    assert [spec["name"] for spec in json.loads(capsys.readouterr().out)] == ["teaching"]
    assert "unknown model" in refused(capsys, ["models", "nosuch"])


def test_properties_no_run_judged_to_its_end_are_unknown_not_holds(tmp_path, capsys):
    report = tmp_path / "s.json"
    argv = ["simulate", "teaching", "--bug", "lost-at-boundary", "--seeds", "48", "--out", str(tmp_path / "t"),
            "--json", str(report)]
    assert main(argv) == 1  # the one run stops at its violation of no-lost-steers
    out = capsys.readouterr().out
    assert "   unknown  always     one-active-turn" in out and " holds " not in out
    rows = {row["name"]: row for row in json.loads(report.read_text())["properties"]}
    assert rows["no-lost-steers"]["status"] == "violated"
    assert rows["one-active-turn"]["status"] == "unknown" and "not judged" in rows["one-active-turn"]["note"]
    main(["simulate", "teaching", "--seeds", "0..3", "--out", str(tmp_path / "t")])
    assert "     holds  always     one-active-turn" in capsys.readouterr().out  # runs that ended judge it


@pytest.mark.parametrize("extra,why", [(["--bug", "launch-after-steer"], "at the first violation; --keep-going"),
                                       (["--max-states", "5"], "state limit 5 reached")])
def test_never_fired_blames_the_early_stop_not_the_parameters(capsys, extra, why):
    main(["check", "teaching", "--quiet", "--require-coverage", *extra])
    out = capsys.readouterr().out
    assert f"coverage: never fired before the search stopped early ({why}" in out
    assert "at these parameters" not in out


def test_never_fired_after_a_whole_search_blames_the_parameters(capsys):
    main(["check", "teaching", "--bug", "launch-after-steer", "--quiet", "--keep-going", "-p", "N=0"])
    out = capsys.readouterr().out
    assert "stopped early" not in out and "coverage: never fired at these parameters" in out


def keeps_applied_model() -> str:
    """The how-to's model file with a bug that applies a turn's first steers and leaves them in the queue
    (the view names them as the facts do), so that a later drop resolves an applied steer again."""
    source = (ROOT / "docs" / "howto" / "drop_oldest.py").read_text()
    edits = [('            return replace(s, queue=(), turns=',
              '            kept = s.queue if starting and self.bug == "keeps-applied" else ()\n'
              '            return replace(s, queue=kept, turns='),
             ('    def properties(self):', '    def render_state(self, s):\n'
              '        return {"queue": [f"s{n}" for n in s.queue], "phase": s.phase}\n\n    def properties(self):'),
             ('"ordered-history")),', '"ordered-history"),\n          Bug("keeps-applied", "applied, left queued", '
              '"no-lost-steers")),')]
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


def test_the_cause_of_an_applied_steer_left_in_its_slot_is_not_a_loss(tmp_path, capsys):
    model = tmp_path / "keeps.py"
    model.write_text(keeps_applied_model())
    assert main(["check", f"{model}:SPEC", "--bug", "keeps-applied", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "steer.applied(id='s1'" in out and "steer.failed(id='s1', code='dropped')" in out
    cause = next(line for line in out.splitlines() if line.startswith("  cause: "))
    assert "without being applied" not in cause  # it was applied, at the turn's start
    assert cause.startswith("  cause: no-lost-steers is broken at step 3 (user.steer)")
    assert cause.endswith("(s1 was still in queue when the step began, so no earlier step lost it)")


def test_a_steer_removed_while_still_open_is_named_as_lost(tmp_path, capsys):
    model = tmp_path / "keeps.py"
    model.write_text(keeps_applied_model())
    assert main(["check", f"{model}:SPEC", "--bug", "silent-drop", "--quiet"]) == 1
    cause = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  cause: "))
    assert "was removed from queue at step 1 (user.steer) without being applied" in cause


def test_a_full_disk_met_while_writing_names_the_outputs(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.json"

    def disk_full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a failing write() raises it: no file

    monkeypatch.setattr("steersim.report.formats.write_json", disk_full)
    err = refused(capsys, ["check", "teaching", "--quiet", "--json", str(out)])
    assert f"writing its outputs (--json {out}) failed: No space left on device" in err


def test_an_output_over_the_module_of_a_package_model_is_refused(tmp_path, capsys, no_work, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "m.py").write_text(MODEL)
    err = refused(capsys, ["check", "mypkg.m:SPEC", "--quiet", "--junit", "mypkg/m.py"])
    assert "model's source" in err and (tmp_path / "mypkg" / "m.py").read_text() == MODEL
