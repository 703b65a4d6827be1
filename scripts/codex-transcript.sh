#!/usr/bin/env bash
# Records a real OpenAI Codex session through toolbus (test/real-clients/codex-transcript.ts) and
# writes it to docs/transcripts/codex-cli.md, or to the file given. Installs the pinned Codex CLI
# once into a cache folder (~170 MB download, ~385 MB unpacked: too big to be a CI dependency),
# or uses CODEX_BIN when set. Needs what `pnpm start` needs (nats-server on PATH) and network for
# the first install only.
set -euo pipefail
cd "$(dirname "$0")/.."

CODEX_VERSION="0.171.0"
out="${1:-docs/transcripts/codex-cli.md}"

if [ -z "${CODEX_BIN:-}" ]; then
  cache="${TOOLBUS_CODEX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolbus/codex-$CODEX_VERSION}"
  CODEX_BIN="$cache/node_modules/.bin/codex"
  if [ ! -x "$CODEX_BIN" ]; then
    echo "== installing @openai/codex@$CODEX_VERSION into $cache"
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-save --no-audit --no-fund "@openai/codex@$CODEX_VERSION" >/dev/null ||
      { echo "codex-transcript: npm could not install @openai/codex@$CODEX_VERSION; set CODEX_BIN to a codex you have" >&2; exit 1; }
  fi
fi

CODEX_BIN="$CODEX_BIN" node --conditions=@toolbus/source --import tsx test/real-clients/codex-transcript.ts "$out"
# The repository's formatter lays out Markdown tables; the transcript is kept as it would leave it.
pnpm exec biome format --write "$out" >/dev/null
