#!/bin/sh
# Installs the system packages the tests need when they are missing: Java 17+ for DynamoDB Local.
# Runs before `npm test` (npm's pretest); installs only as root with apt, otherwise says what to install.
set -e

java_major() {
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

if command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ] 2>/dev/null; then
  exit 0
fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-system-deps: installing Java 17 (openjdk-17-jre-headless) for DynamoDB Local"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  exit 0
fi

echo "ensure-system-deps: Java 17 or newer is needed for DynamoDB Local and was not found." >&2
echo "Install it, e.g. 'sudo apt-get install -y openjdk-17-jre-headless' (Debian/Ubuntu) or 'brew install openjdk@17' (macOS)." >&2
exit 1
