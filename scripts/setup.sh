#!/usr/bin/env bash
# Installs what toolbus needs on this machine and nothing it already has: the pinned pnpm, the
# workspace's packages, and nats-server (which `pnpm start` runs when NATS_URL is unset). With
# --tests, also what the tests need: a Postgres (unless one answers on 127.0.0.1:5432) and
# Chromium for the browser tests. Debian/Ubuntu (apt-get, as root or through sudo) and macOS
# (Homebrew); anything it cannot install it names, with what to do, and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."

tests=false
for arg in "$@"; do
  case "$arg" in
    --tests) tests=true ;;
    *) echo "usage: bash scripts/setup.sh [--tests]" >&2; exit 2 ;;
  esac
done

step() { echo "== $*"; }
fail() { echo "setup: $*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# How this machine installs system packages: apt-get (root, or sudo) or Homebrew.
if have apt-get && { [ "$(id -u)" = 0 ] || have sudo; }; then
  system=apt
elif have brew; then
  system=brew
else
  system=none
fi
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=false
apt_install() {
  if [ "$apt_updated" = false ]; then as_root apt-get update -qq >/dev/null || return 1; apt_updated=true; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
# `install_system <what> <apt package> <brew formula> <manual hint>`
install_system() {
  step "installing $1"
  case "$system" in
    apt) apt_install "$2" || fail "apt-get install $2 failed; install $1 yourself ($4)" ;;
    brew) brew install $3 >/dev/null || fail "brew install $3 failed; install $1 yourself ($4)" ;;
    none) fail "$1 is missing and this machine has neither apt-get (as root or with sudo) nor Homebrew: install it yourself ($4), then run this again" ;;
  esac
}

# Debian trixie's nats-server 2.10.27 .deb, unpacked into .toolbus/bin (apt's own sources untouched).
fetch_nats_210() {
  local tmp mirror opts
  tmp="$(mktemp -d)" && mkdir -p "$tmp/lists/partial" .toolbus/bin || return 1
  mirror="$(grep -rhE '^[[:space:]]*(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^ ]*debian[^ ]*' | grep -v security | head -1)"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror:-http://deb.debian.org/debian} trixie main" >"$tmp/sources.list"
  opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache::archives=$tmp")
  as_root apt-get "${opts[@]}" update -qq >/dev/null 2>&1 &&
    (cd "$tmp" && as_root apt-get "${opts[@]}" download -qq nats-server=2.10.27-1+b2 >/dev/null 2>&1) &&
    dpkg-deb -x "$tmp"/nats-server_*.deb "$tmp/x" &&
    cp "$tmp/x/usr/sbin/nats-server" .toolbus/bin/nats-server &&
    .toolbus/bin/nats-server --version >/dev/null
  local rc=$?
  as_root rm -rf "$tmp"
  return $rc
}

pnpm_version="$(node -p 'require("./package.json").packageManager.split("@")[1]')" || fail "node is needed first (20.19 or later)"
if [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
  step "installing pnpm $pnpm_version"
  npm i -g "pnpm@$pnpm_version" >/dev/null 2>&1 || npm i -g --allow-scripts=pnpm "pnpm@$pnpm_version" >/dev/null ||
    fail "npm i -g pnpm@$pnpm_version failed (on a system Node, run it with sudo, or use a Node version manager)"
fi

if ! have nats-server && [ ! -x /usr/sbin/nats-server ]; then
  install_system nats-server nats-server nats-server "https://docs.nats.io/running-a-nats-service/introduction/installation"
fi

if [ "$tests" = true ]; then
  pg_answers() { node -e 'require("net").connect(5432, "127.0.0.1").on("connect", () => process.exit(0)).on("error", () => process.exit(1))'; }
  if ! pg_answers && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    # Debian: the tests run a throwaway cluster from these binaries. Homebrew: a server on 5432
    # with the role and database the tests expect.
    install_system postgresql postgresql postgresql@17 "or set DATABASE_URL to a Postgres the tests may use"
    if [ "$system" = brew ]; then
      pg_bin="$(brew --prefix postgresql@17)/bin"
      brew services start postgresql@17 >/dev/null || fail "brew services start postgresql@17 failed"
      for _ in $(seq 1 30); do pg_answers && break; sleep 1; done
      "$pg_bin/createuser" -h 127.0.0.1 -s postgres 2>/dev/null || true
      "$pg_bin/createdb" -h 127.0.0.1 -O postgres test 2>/dev/null || true
    fi
  fi
  # The cluster tests run nats-server 2.10, as the deploy files do: Debian bookworm has 2.9.10,
  # so on apt machines trixie's .deb is fetched into .toolbus/bin without touching apt's sources.
  nats_minor="$(nats-server --version 2>/dev/null | sed -n 's/.*v2\.\([0-9]*\)\..*/\1/p')"
  if [ ! -x .toolbus/bin/nats-server ] && [ "${nats_minor:-0}" -lt 10 ] && [ "$system" = apt ]; then
    step "fetching nats-server 2.10 for the cluster tests"
    fetch_nats_210 || echo "setup: could not fetch nats-server 2.10; the cluster tests use $(nats-server --version 2>/dev/null)" >&2
  fi
  if [ ! -x /usr/bin/chromium ] && [ ! -x /Applications/Chromium.app/Contents/MacOS/Chromium ]; then
    install_system "chromium (browser tests)" chromium "--cask chromium" "or set CHROMIUM_PATH to a Chromium or Chrome binary"
  fi
fi

step "pnpm install"
pnpm install --frozen-lockfile || fail "pnpm install failed"
