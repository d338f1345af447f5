# The browser tests (tests/test_html_browser.py) drive Debian's chromium: install it when missing.
# On a user's machine without chromium they skip and say why; here they must run, so a failed
# install makes them fail (TCOMPACT_REQUIRE_BROWSER).
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
  { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      chromium >/dev/null; } || echo "warning: could not install chromium; the browser tests will fail" >&2
fi
export TCOMPACT_REQUIRE_BROWSER=1
