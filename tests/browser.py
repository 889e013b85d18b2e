"""Debian's Chromium, headless, driven over the DevTools protocol by Playwright (no browser
download: ``executable_path`` is the system Chromium). Not a test module.

``python -m tests.browser PAGE.html OUT.png [--height H | --card KEY] [--scale S]`` takes a
screenshot of the page, 1320 pixels wide (its top H pixels, or one chart's card), scaled
and reduced to 256 colours: the docs' pictures of the report are made this way.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path(os.environ.get("CHUNKMILL_CHROMIUM", "/usr/bin/chromium"))
# No background traffic: on a closed network Chromium's own requests fail noisily.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
ALL_DRAWN = (
    "document.querySelectorAll('.chart').length === "
    "document.querySelectorAll('.chart[data-rendered]').length"
)


def missing() -> str | None:
    """Why no browser test can run here, or None when one can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    return None


def require() -> None:
    """Skip with the reason where no browser exists; fail instead on CI (CI=true), where
    .ci/run installs Chromium, so that a browser test is never skipped there."""
    import pytest

    reason = missing()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser test cannot run on CI: {reason}")
    pytest.skip(f"browser test skipped: {reason}")


@dataclass
class Visit:
    page: object  # playwright Page
    url: str
    console: list[str] = field(default_factory=list)  # errors and warnings the page logged
    errors: list[str] = field(default_factory=list)  # uncaught exceptions
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    @property
    def foreign_requests(self) -> list[str]:
        return [u for u in self.requests if u != self.url]


@contextmanager
def chromium():
    """A headless Chromium (a browser context with a new empty profile, offline)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS, offline=True
        )
        try:
            yield context
        finally:
            context.close()


@contextmanager
def visit(page_file: Path, context=None, width: int = 1320, height: int = 900):
    """Open ``page_file`` (in ``context``, or a Chromium of its own) and wait until every
    chart has been drawn."""
    if context is None:
        with chromium() as own, visit(page_file, own, width, height) as seen:
            yield seen
        return
    url = Path(page_file).resolve().as_uri()
    page = context.new_page()
    try:
        page.set_viewport_size({"width": width, "height": height})
        seen = Visit(page, url)
        page.on("console", lambda m: seen.console.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") else None)  # fmt: skip
        page.on("pageerror", lambda e: seen.errors.append(str(e)))
        page.on("request", lambda r: seen.requests.append(r.url))
        page.goto(url, wait_until="load")
        page.wait_for_function(ALL_DRAWN, timeout=60_000)
        yield seen
    finally:
        page.close()


def screenshot(page_file: Path, out: Path, height=None, card=None, scale=1.0) -> None:
    import io

    from PIL import Image

    with visit(page_file) as seen:
        if card:
            png = seen.page.locator(f"[data-card={card}]").screenshot()
        else:
            png = seen.page.screenshot(full_page=True)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image = image.crop((0, 0, image.width, min(height or image.height, image.height)))
    size = (round(image.width * scale), round(image.height * scale))
    image.resize(size, Image.LANCZOS).quantize(256).save(out, optimize=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.browser")
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--height", type=int)
    parser.add_argument("--card")
    parser.add_argument("--scale", type=float, default=1.0)
    a = parser.parse_args()
    screenshot(a.page, a.out, a.height, a.card, a.scale)
