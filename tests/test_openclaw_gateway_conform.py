"""The gateway queue model against OpenClaw's own queue code (settings resolution, enqueue with cap and
drop policy, the drain with collect coalescing and overflow summaries), on both pinned builds: no
divergence, and the model's old behaviours and bug variants would each have been caught."""

from __future__ import annotations

import functools

import pytest

from steersim.models.openclaw import queue_settings
from steersim.models.openclaw.harness import driver, gateway_conform

BUILDS = {"2026.8.1-beta.3": driver.NODE_MODULES / "openclaw-beta", "2026.9.6": driver.NODE_MODULES / "openclaw-latest"}
needs_node = pytest.mark.skipif(
    not (driver.NODE_MODULES / ".bin" / "node").exists()
    or not all((path / "package.json").exists() for path in BUILDS.values()),
    reason="the OpenClaw builds are not installed (npm ci --prefix steersim/models/openclaw/harness/node)")


@functools.cache
def real(version):
    return gateway_conform.probe(driver.find_target(str(BUILDS[version])))


@needs_node
@pytest.mark.parametrize("version", [
    "2026.8.1-beta.3", pytest.param("2026.9.6", marks=pytest.mark.slow)])
def test_the_model_answers_every_case_as_the_build_does(version):
    assert gateway_conform.compare(real(version)) == []


@needs_node
@pytest.mark.parametrize("bug", ["unbounded-summary", "overflow-across-routes", "collect-across-routes"])
def test_each_queue_bug_variant_diverges_from_the_build(bug):
    found = gateway_conform.compare(real("2026.8.1-beta.3"),
                                    queue=functools.partial(gateway_conform.model_queue, bug=bug))
    assert found and {d.part for d in found} == {"queue"}


def old_session_mode(stored):
    """The model's resolution before it was checked against the build: exact legacy spellings only."""
    if stored in ("steer-backlog", "steer+backlog"):
        return "followup"
    if stored == "queue":
        return "steer"
    return queue_settings.normalize_mode(stored)


@needs_node
def test_the_old_legacy_mode_spellings_diverge_from_the_build(monkeypatch):
    monkeypatch.setattr(queue_settings, "session_mode", old_session_mode)
    found = gateway_conform.compare(real("2026.8.1-beta.3"))
    legacy = {d.case["sessionEntry"]["queueMode"] for d in found}
    assert legacy == {"queued", "Steer+Backlog", "steer_backlog"}


def test_a_real_run_is_named_as_the_model_names_runs():
    summary = {"prompt": "[Queue overflow] Dropped 2 messages due to cap.\nSummary:\n- m3", "route": 0}
    collect = {"prompt": "[Queued messages while agent was busy]\n\n---\nQueued #1\nm3\n\n---\nQueued #2\nm4",
               "route": 1}
    assert gateway_conform.real_run(summary) == {"items": ["overflow:m3"], "route": 0}
    assert gateway_conform.real_run(collect) == {"items": ["m3", "m4"], "route": 1}
