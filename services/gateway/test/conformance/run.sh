#!/usr/bin/env bash
# The MCP conformance suite (server mode, --suite all) against the fixture directly and through
# a toolbus gateway in naming = "conditional" mode; prints both and exits 1 on a regression.
# Usage: services/gateway/test/conformance/run.sh [--out <dir>]   (NATS_URL, default nats://127.0.0.1:4222)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
exec node --conditions=@toolbus/source --import tsx services/gateway/test/conformance/run.ts "$@"
