"""A page in headless Chromium, driven over the DevTools protocol on a pipe (no library, no
port): load a file, evaluate expressions in it, and collect what went wrong while it loaded --
script errors, console errors, and every network request it made.

``chromium_path()`` finds the browser; Debian's ``chromium`` package works headless with the
flags used here. ``.ci/run`` installs it when it is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-extensions", "--disable-sync", "--no-first-run", "--mute-audio",
          "--hide-scrollbars", "--window-size=1280,1024", "--remote-debugging-pipe"]
_TIMEOUT = 60.0  # a guard against a hung browser, not a measurement


def chromium_path() -> str | None:
    """The Chromium (or Chrome) executable on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class ChromiumError(RuntimeError):
    """The browser did not answer as the protocol says (it died, or an answer timed out)."""


class Page:
    """One loaded page: ``evaluate`` an expression; ``errors`` and ``requests`` from its load."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self._browser = browser
        self._session = session
        self.errors: list[str] = []
        self.requests: list[str] = []

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (an exception in it is an error)."""
        result = self._browser.call("Runtime.evaluate", {"expression": expression,
                                                         "returnByValue": True,
                                                         "awaitPromise": True},
                                    session=self._session)
        if "exceptionDetails" in result:
            raise ChromiumError(f"evaluating {expression[:80]!r} raised: "
                                f"{result['exceptionDetails'].get('text')}")
        return result["result"].get("value")


class Chromium:
    """A headless browser for the life of a ``with`` block."""

    def __init__(self, executable: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="agentkit-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes() -> None:  # the protocol's pipe ends are fds 3 and 4 of the browser
            reading, writing = os.dup(to_browser_r), os.dup(from_browser_w)  # off 3 and 4 first
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        # fds 3 and 4 are kept open in the browser (subprocess closes the others after
        # preexec_fn has run)
        self._process = subprocess.Popen(
            [executable, *_FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire_pipes, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(ChromiumError, OSError):
            self.call("Browser.close", {})
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()

    # ------------------------------------------------------------------ protocol
    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChromiumError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise ChromiumError("the browser closed the DevTools pipe (it died)")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any], *, session: str | None = None
             ) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + _TIMEOUT
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ChromiumError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self._events.append(reply)

    def _wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + _TIMEOUT
        while not any(e.get("method") == method and e.get("sessionId") == session
                      for e in self._events):
            self._events.append(self._message(deadline))

    # ------------------------------------------------------------------ pages
    def open(self, path: Path) -> Page:
        """Load the file ``path`` in a new tab and wait until it has loaded."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", {}, session=session)
        self._events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        self._wait_for("Page.loadEventFired", session)
        page.evaluate("new Promise(r => requestAnimationFrame(() => r(true)))")  # laid out
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                page.errors.append(details.get("exception", {}).get("description")
                                   or details.get("text", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                page.errors.append(" ".join(str(a.get("value")) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                page.errors.append(params["entry"].get("text", "error"))
            elif method == "Network.requestWillBeSent":
                page.requests.append(params["request"]["url"])
        return page
