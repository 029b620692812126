"""Harnesses the tests, scripts and benches share (not part of the package): the
DevTools client driving headless Chromium, generated run stores at size, the example
runs of the screenshots and browser test, and small store edits."""
