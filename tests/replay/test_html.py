"""``--output html`` in a real headless browser (Debian's chromium and chromium-driver,
driven by selenium): the page loads nothing from anywhere, draws the utilization chart,
and a click on a pod shows its explanation."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ksched.replay import replay
from ksched.replay._html import render_html

from .test_replay import bind, create, node, pod, trace

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
HOW_TO = (
    "needs Debian's chromium and chromium-driver (make test installs them when run as root: "
    "apt-get install chromium chromium-driver) and selenium"
)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason=HOW_TO)
    if CHROMIUM is None or DRIVER is None:
        pytest.skip(HOW_TO)
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _report() -> dict[str, Any]:
    events = [
        create(1.0, pod("a")),
        bind(1.1, "a", "n1"),  # n2 is larger: ksched disagrees
        create(2.0, pod("b")),
        bind(2.1, "b", "n2"),
        create(3.0, pod("huge", cpu="64")),
    ]
    return replay(trace([node("n1"), node("n2", cpu="8")], events), follow_recorded=True)


def test_the_page_explains_a_disagreement_on_click(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    report = _report()
    page = tmp_path / "report.html"
    page.write_text(render_html(report))
    browser.get(page.as_uri())
    assert browser.title.startswith("ksched replay:")
    # self-contained: nothing was fetched, not even from disk
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    lines = browser.find_elements(By.CSS_SELECTOR, "#utilization polyline")
    assert len(lines) == 4
    rows = browser.find_elements(By.CSS_SELECTOR, "#pods tbody tr")
    assert rows[0].find_elements(By.TAG_NAME, "td")[0].text == "default/a"  # disagreement first
    details = browser.find_element(By.ID, "details")
    assert "no pod selected" in details.text
    rows[0].click()
    text = details.text
    assert "recorded node scored" in text
    assert "NodeResourcesFit" in text and "TaintToleration \u00d73" in text  # weight 3
    assert "selected" in rows[0].get_attribute("class")
    huge = next(r for r in rows if "default/huge" in r.text)
    huge.click()
    assert "no node fits" in details.text


def test_the_page_with_a_comparison_shows_it(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from ksched.replay import compare_reports

    report = _report()
    other = replay(
        trace([node("n1"), node("n2", cpu="8")], [create(1.0, pod("a")), bind(1.1, "a", "n1")]),
        config_name="other",
    )
    page = tmp_path / "compare.html"
    page.write_text(render_html(report, compare_reports(report, other)))
    browser.get(page.as_uri())
    table = browser.find_element(By.ID, "comparison")
    assert "agreement.ratio" in table.text
