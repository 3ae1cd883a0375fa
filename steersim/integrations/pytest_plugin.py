"""steersim's pytest plugin (registered through the `pytest11` entry point).

`assert_properties("teaching", K=2)` (or `assert_properties("path/to/file.py:SPEC")`, a model by path)
checks every interleaving of a model and fails the test when a property is violated or a `sometimes` was
never reached; the failure shows, per broken property, its
shortest counterexample as a step table, so the test report alone says what went wrong. The same helper
is the `assert_properties` fixture. Exhaustive checks of big configurations take long: mark them
`@pytest.mark.steersim_slow`, which also marks them `slow`, so `-m "not slow"` leaves them out.

This module is an outer ring: it imports the explorer only when a check runs, so loading the plugin
costs a pytest session nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from steersim.checking.explorer import CheckOptions, CheckResult
    from steersim.core.model import Model
    from steersim.core.registry import ModelSpec

from steersim.report.steptable import FAILING, failure_text


def assert_properties(model: str | ModelSpec | Model, bug: str | None = None, options: CheckOptions | None = None,
                      **params: Any) -> CheckResult:
    """Check `model` (a model reference: a registered name, `path/to/file.py:SPEC` or
    `package.module:SPEC`; or a ModelSpec; either built with `params` and `bug`; or a built Model) with
    `keep_going`, and raise AssertionError naming every violated or unreached property with its shortest
    counterexample. Returns the CheckResult when everything holds."""
    __tracebackhide__ = True
    from steersim.checking.engines import check
    from steersim.checking.explorer import CheckOptions
    from steersim.core.registry import ModelSpec, get_model_spec
    from steersim.interrupts import INTERRUPTED

    if isinstance(model, (str, ModelSpec)):
        spec = get_model_spec(model) if isinstance(model, str) else model
        resolved = spec.resolve(params, bug)
        title = f"{spec.name}{_params_text(resolved)}" + (f" bug={bug}" if bug else "")
        model = spec.build(resolved, bug)
    else:
        if params or bug:
            raise TypeError("parameters and bug go with a model name; a Model object is already built")
        title = model.name
    result = check(model, options or CheckOptions(keep_going=True))
    if result.status == INTERRUPTED:
        raise KeyboardInterrupt  # Ctrl-C stops the test session, as pytest users expect
    broken = [p for p in result.properties if p.status in FAILING]
    if broken:
        raise AssertionError(failure_text(title, result, model))
    return result


def _params_text(params: Mapping[str, Any]) -> str:
    return "[" + " ".join(f"{k}={v}" for k, v in params.items()) + "]"


@pytest.fixture(name="assert_properties")
def assert_properties_fixture() -> Any:
    """The `assert_properties` helper, for tests that prefer fixtures to imports."""
    return assert_properties


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "steersim_slow: a slow exhaustive steersim check (also marked slow)")
    config.addinivalue_line("markers", "slow: slow tests, left out with -m 'not slow'")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every steersim_slow test slow too, before `-m` deselects, so one filter covers both."""
    for item in items:
        if item.get_closest_marker("steersim_slow") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
