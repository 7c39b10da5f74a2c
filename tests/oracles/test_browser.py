"""`sfview serve` in a real browser: Debian's headless chromium, driven by Selenium.

The page is textual-serve's: xterm.js draws what the app sends on a canvas.
What the browser's terminal holds is read from xterm.js's own buffer (the
text its renderer draws), reached through a setter planted before the page's
script runs: the page keeps its terminal in a `terminal` property and nowhere
global. The first screen must list the functions readelf lists, with the
names nm gives them, and `n` must do what it does in a terminal: choose the
next function, whose rows readelf prints; and a byte edited there is edited.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA

ROOT = Path(__file__).parents[2]
PROGRAM = DATA / "shapes-x86_64-O2"

KEEP_TERMINAL = """
window.__terminals = [];
Object.defineProperty(Object.prototype, 'terminal', {configurable: true, set(value) {
  Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
  if (value && value.buffer) window.__terminals.push(value);
}});
"""
"""Run before the page's own script: each `x.terminal = …` keeps the xterm.js terminal where a test finds it."""

SCREEN = """
const t = window.__terminals[0];
if (!t) return null;
const b = t.buffer.active, lines = [];
for (let y = 0; y < t.rows; y++) lines.push(b.getLine(b.viewportY + y).translateToString(true));
return lines.join('\\n');
"""
"""The browser terminal's screen as text, one line a row."""

WAIT_S = 60
"""The longest a step waits for the screen on a loaded machine (it returns as soon as the screen shows it)."""


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: apt-get install chromium chromium-driver)")
    return path


def _readelf(path: Path) -> dict[int, tuple[int, list[tuple[int, str]]]]:
    """readelf's functions: index → (start address, [(row start, CFA rule)])."""
    text = subprocess.run(["readelf", "--sframe", str(path)], capture_output=True, text=True, check=True).stdout
    functions: dict[int, tuple[int, list[tuple[int, str]]]] = {}
    rows: list[tuple[int, str]] = []
    for line in text.splitlines():
        if head := re.match(r"\s+func idx \[(\d+)\]: pc = (0x[0-9a-f]+)", line):
            rows = []
            functions[int(head[1])] = (int(head[2], 16), rows)
        elif row := re.match(r"\s+([0-9a-f]{16})\s+(\S+)", line):
            rows.append((int(row[1], 16), row[2]))
    return functions


def _nm(path: Path) -> dict[int, str]:
    text = subprocess.run(["nm", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    return {int(fields[0], 16): fields[2] for fields in map(str.split, text.splitlines()) if fields[1] in "tT"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`sfview serve PROGRAM` on a free port, until the module's tests end: its address."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "sfview", "serve", str(PROGRAM), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://localhost:{port}/"
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                urllib.request.urlopen(url, timeout=5).close()
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"sfview serve ended: {server.communicate()[1].decode()}")
                if time.monotonic() > deadline:
                    pytest.fail(f"sfview serve did not answer at {url}")
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless, driven through chromedriver."""
    chromium, driver = _tool("chromium"), _tool("chromedriver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    chrome.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": KEEP_TERMINAL})
    yield chrome
    chrome.quit()


def _screen_when(chrome, shows) -> str:
    """The browser's screen once `shows(screen)` holds (failing, with the screen, if it never does)."""
    deadline, screen = time.monotonic() + WAIT_S, ""
    while time.monotonic() < deadline:
        screen = chrome.execute_script(SCREEN) or ""
        if shows(screen):
            return screen
        time.sleep(0.2)
    pytest.fail(f"the browser never showed it; its screen:\n{screen}")


def _focus(chrome) -> None:
    """The keyboard to the terminal, as a click gives it, without clicking a pane (which would choose what is
    under the pointer)."""
    chrome.execute_script("document.querySelector('.xterm-helper-textarea').focus()")


def _row_of(screen: str, index: int, start: int) -> str | None:
    """The functions table's line for FDE `index` starting at `start`."""
    return next((line for line in screen.splitlines() if line.startswith(f"{index} {start:#x} ")), None)


def test_the_browser_shows_the_functions_and_n_chooses_the_next(served: str, browser) -> None:
    functions, names = _readelf(PROGRAM), _nm(PROGRAM)
    browser.get(served)
    screen = _screen_when(browser, lambda screen: all(_row_of(screen, i, f[0]) for i, f in functions.items()))
    for index, (start, _) in functions.items():
        if start in names:
            assert names[start] in _row_of(screen, index, start).split(), (index, names[start])

    _focus(browser)
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys("nn").perform()  # in a terminal: the next function, twice
    start, rows = functions[2]
    screen = _screen_when(browser, lambda screen: f"FREs of fdes[2] {names[start]}" in screen)
    table = screen.split(f"FREs of fdes[2] {names[start]}")[1].splitlines()
    for row_start, cfa in rows:
        assert any(re.match(rf"\d+ {row_start:#x}\s+{re.escape(cfa)}\s", line) for line in table), (row_start, cfa)


def test_an_edit_in_the_browser_is_made_and_said(served: str, browser) -> None:
    """`x`, `e`, a value: the byte under the hex cursor changed, the section decoded again, as in a terminal."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    start = _readelf(PROGRAM)[0][0]
    browser.get(served)
    _screen_when(browser, lambda screen: _row_of(screen, 0, start) is not None)
    _focus(browser)
    ActionChains(browser).send_keys("x").perform()
    _screen_when(browser, lambda screen: "/ Search" in screen)  # the hex pane's key in the footer: it has the focus
    ActionChains(browser).send_keys("e").perform()
    _screen_when(browser, lambda screen: "Edit byte 0x1c" in screen)
    ActionChains(browser).send_keys("ff", Keys.ENTER).perform()
    screen = _screen_when(browser, lambda screen: "edited byte 0x1c = 0xff (78 → ff)" in screen)
    assert _row_of(screen, 0, start) is None  # the first function's start moved with its low byte
