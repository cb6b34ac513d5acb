#!/usr/bin/env bash
# Makes sure the browser suite (test/sdk/posthog-js-browser.test.ts) has a Chromium to drive: the system package
# at /usr/bin/chromium, never a downloaded Playwright build. Idempotent and quiet; runs as `npm test`'s pretest.
# It does not stop the run itself: without a browser the browser suite FAILS with the reason (so the other suites
# still report), unless QUILL_TEST_SKIP_BROWSER=1 says to skip it knowingly (test/helpers/required-environment.ts).
set -u

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "ensure-chromium: $CHROMIUM present ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi
if [ "${QUILL_TEST_SKIP_BROWSER:-}" = "1" ]; then
  echo "ensure-chromium: $CHROMIUM missing; QUILL_TEST_SKIP_BROWSER=1, so not installing (the browser suite will skip)" >&2
  exit 0
fi

if [ "$(id -u)" != "0" ]; then
  echo "ensure-chromium: $CHROMIUM missing and not running as root; not installing (the browser suite will FAIL; QUILL_TEST_SKIP_BROWSER=1 skips it)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM missing and apt-get not available; not installing (the browser suite will FAIL; QUILL_TEST_SKIP_BROWSER=1 skips it)" >&2
  exit 0
fi

echo "ensure-chromium: $CHROMIUM missing; installing the 'chromium' package with apt-get"
log=$(mktemp)
if DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >>"$log" 2>&1; then
  echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo chromium)"
else
  echo "ensure-chromium: apt-get could not install chromium (the browser suite will FAIL); last lines of its output:" >&2
  tail -n 20 "$log" >&2
fi
rm -f "$log"
exit 0
