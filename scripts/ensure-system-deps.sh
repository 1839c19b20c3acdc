#!/bin/sh
# Installs the system packages the tests need when they are missing: Java 17+ with its compiler module (DynamoDB
# Local, started through lib/local/DynamoDBLocalOnHost.java, which is compiled on first use; Debian's JRE has it),
# Chromium (the browser tests drive Debian's /usr/bin/chromium with playwright-core), and moto_server and
# cfn-lint (Python; the IAM tier, jest.moto.config.js, runs the functions against moto).
# Runs before `npm test` (npm's pretest); installs system packages only as root with apt and the Python ones
# with pip when a pip is there, otherwise says what to install.
set -e

# moto (with its server) and cfn-lint, with pip, when missing.
python_missing=""
command -v moto_server >/dev/null 2>&1 || python_missing="$python_missing moto[server]"
command -v cfn-lint >/dev/null 2>&1 || python_missing="$python_missing cfn-lint"
if [ -n "$python_missing" ]; then
  pip=""
  if command -v pip3 >/dev/null 2>&1; then pip="pip3"; elif command -v pip >/dev/null 2>&1; then pip="pip"; elif command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then pip="python3 -m pip"; fi
  if [ -n "$pip" ]; then
    echo "ensure-system-deps: installing$python_missing with $pip"
    # shellcheck disable=SC2086
    $pip install -q $python_missing || true
    command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1 || true
  fi
  if ! command -v moto_server >/dev/null 2>&1 || ! command -v cfn-lint >/dev/null 2>&1; then
    echo "ensure-system-deps: the tests need moto_server and cfn-lint (Python), which are missing." >&2
    echo "Install them, e.g. 'pip install \"moto[server]\" cfn-lint' (Python 3.9+) or 'pipx install \"moto[server]\"' and 'pipx install cfn-lint', so that both are on the PATH." >&2
    exit 1
  fi
fi

java_ok() {
  command -v java >/dev/null 2>&1 || return 1
  major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  [ -n "$major" ] && [ "$major" -ge 17 ]
}
# A JRE without jdk.compiler (some vendors' JREs) cannot compile DynamoDB Local's launcher; a JDK can.
java_compiles() {
  java --list-modules 2>/dev/null | grep -q '^jdk.compiler@'
}

missing=""
if ! java_ok; then missing="$missing openjdk-17-jre-headless"; elif ! java_compiles; then missing="$missing openjdk-17-jdk-headless"; fi
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
