#!/bin/sh
# Installs the system packages the tests need when they are missing: Java 17+ (DynamoDB Local) and
# Chromium (the browser tests drive Debian's /usr/bin/chromium with playwright-core).
# Runs before `npm test` (npm's pretest); installs only as root with apt, otherwise says what to install.
set -e

java_ok() {
  command -v java >/dev/null 2>&1 || return 1
  major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  [ -n "$major" ] && [ "$major" -ge 17 ]
}

missing=""
java_ok || missing="$missing openjdk-17-jre-headless"
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing="$missing chromium"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-system-deps: installing$missing"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  exit 0
fi

echo "ensure-system-deps: the tests need these packages, which are missing:$missing" >&2
echo "Install them, e.g. 'sudo apt-get install -y$missing' (Debian/Ubuntu); on macOS 'brew install openjdk@17'" >&2
echo "and a Chromium at /usr/bin/chromium (or set CHROMIUM_PATH)." >&2
exit 1
