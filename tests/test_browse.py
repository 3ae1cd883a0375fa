"""`steersim explore`: the views behind the page, and the page itself in headless Chromium.

The browser test drives Debian's chromium through its WebDriver (chromium-driver) with selenium; it
skips where they are not installed (the README's test command installs them).
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator

import pytest

from steersim.core.registry import get_model_spec
from steersim.errors import UsageError
from steersim.integrations.browse import Browser, parse_path
from steersim.integrations.browse_page import serve_in_background

BUG = "lost-at-boundary"


@pytest.fixture(scope="module")
def browser() -> Browser:
    spec = get_model_spec("teaching")
    params = spec.resolve({}, BUG)
    return Browser(spec.build(params, BUG), params, BUG)


def _jump(browser: Browser, name: str) -> str:
    return next(j["path"] for j in browser.jumps if j["property"] == name)


def test_a_view_shows_the_state_its_change_the_actions_and_the_properties(browser: Browser) -> None:
    view = browser.view([0])
    assert view["state"]["queue"] == ["s1"] and view["changes"] == {"queue": ["s1"], "sent": 1}
    assert [a["label"] for a in view["actions"]] == ["user: user.steer(2)", "agent: agent.model_call()"]
    path = parse_path(_jump(browser, "ordered-history"))
    broken = {p["name"]: p["status"] for p in browser.view(path)["properties"]}
    assert broken["ordered-history"] == "violated at step 14"
    assert broken["one-active-turn"] == "holds so far"


def test_a_path_that_leaves_the_state_space_is_refused(browser: Browser) -> None:
    with pytest.raises(UsageError, match="path step 0: action 7 is not enabled"):
        browser.view([7])
    with pytest.raises(UsageError, match="expected action positions"):
        parse_path("0.x")


@pytest.fixture(scope="module")
def page(browser: Browser) -> Iterator[str]:
    served = serve_in_background(browser)
    yield served.url
    served.close()


def test_a_notebook_shows_the_served_page_inline(browser: Browser) -> None:
    served = serve_in_background(browser, start="0")
    try:
        assert f'<iframe src="{served.url}"' in served._repr_html_()
        with urllib.request.urlopen(served.url) as reply:
            html = reply.read().decode()
        inline = json.loads(html.split('<script type="application/json" id="initial">')[1].split("</script>")[0])
        assert inline == browser.view([0])  # the first view is in the page, before any script runs
        with urllib.request.urlopen(served.url + "api/view?path=0.1") as reply:
            assert json.loads(reply.read()) == browser.view([0, 1])
    finally:
        served.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[object]:
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("chromium and chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    from selenium.webdriver.chrome.service import Service

    chrome = webdriver.Chrome(options=options, service=Service(chromedriver))
    yield chrome
    chrome.quit()


def _at(driver: object, path: str) -> dict:
    """Wait until the page shows `path`, then read the state it shows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-path") == path)
    return json.loads(driver.find_element(By.ID, "state").text)


def test_the_page_clicks_through_a_counterexample(browser: Browser, page: str, driver: object) -> None:
    from selenium.webdriver.common.by import By

    driver.get(page)
    assert _at(driver, "") == browser.view([])["state"]  # the first view, before any click
    target = _jump(browser, "ordered-history")
    done: list[int] = []
    for k in parse_path(target):
        driver.find_element(By.CSS_SELECTOR, f"#actions button[data-index='{k}']").click()
        done.append(k)
        assert _at(driver, ".".join(map(str, done))) == browser.view(done)["state"]
    rows = {r.find_elements(By.TAG_NAME, "td")[0].text: r.find_elements(By.TAG_NAME, "td")[2].text
            for r in driver.find_elements(By.CSS_SELECTOR, "#properties tr")}
    assert rows["ordered-history"] == "violated at step 14"
    assert driver.current_url.endswith("?path=" + target)  # the URL holds the path


def test_the_page_jumps_goes_back_and_forward_and_opens_a_shared_url(browser: Browser, page: str,
                                                                       driver: object) -> None:
    from selenium.webdriver.common.by import By

    driver.get(page)
    _at(driver, "")
    witness = _jump(browser, "steer-skips-a-call")
    driver.find_element(By.CSS_SELECTOR, f"a.jump[data-path='{witness}']").click()
    assert _at(driver, witness) == browser.view(parse_path(witness))["state"]
    driver.find_element(By.ID, "back").click()
    assert _at(driver, "") == browser.view([])["state"]
    driver.find_element(By.ID, "forward").click()
    assert _at(driver, witness) == browser.view(parse_path(witness))["state"]
    driver.get(page + "?path=0.1")
    assert _at(driver, "0.1") == browser.view([0, 1])["state"]


def test_explore_refuses_a_bad_port_and_a_foreign_trace(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from steersim.cli import main

    assert main(["explore", "teaching", "--port", "70000"]) == 2
    assert "a port is at most 65535" in capsys.readouterr().err
    trace = tmp_path / "t.jsonl"
    header = {"steersim": 1, "model": "teaching", "params": {}, "bug": None, "seed": None, "timing": None, "init": 0}
    step = {"i": 0, "t": None, "action": {"actor": "agent", "kind": "agent.fly", "args": []}, "events": [],
            "facts": [], "state": "0"}
    trace.write_text(json.dumps(header) + "\n" + json.dumps(step) + "\n")
    assert main(["explore", "teaching", "--trace", str(trace), "--port", "0"]) == 2
    assert "trace step 0: action 'agent.fly' is not enabled here" in capsys.readouterr().err
