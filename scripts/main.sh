#!/usr/bin/env bash
# The main job of the README: prepare this machine, start a node (`aenv
# server` on its embedded defaults: 127.0.0.1:8000, state in $AENV_HOME or
# /var/lib/aenv), create a sandbox in it with the e2b SDK, run
# `uname -a; python3 --version` inside, print the output, kill the sandbox
# and stop the node. The first run builds the guest artifacts (kernel,
# tools image, Debian base image): a few minutes, with progress shown.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

export AENV_HOME="${AENV_HOME:-/var/lib/aenv}"
port="${AENV_PORT:-8000}"
log="$(mktemp -t aenv-server.XXXXXX.log)"
node packages/cli/dist/src/main.js server --port "$port" > >(tee "$log") 2> >(tee -a "$log" >&2) &
server=$!
stop_server() {
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}
trap stop_server EXIT

echo "main: waiting for the node (first start prepares guest artifacts)..."
until grep -q 'aenv node ready' "$log"; do
  kill -0 "$server" 2>/dev/null || { echo "main: the node exited; see $log" >&2; exit 1; }
  sleep 1
done

export E2B_API_URL="http://127.0.0.1:$port"
export E2B_SANDBOX_URL="$E2B_API_URL"
E2B_API_KEY="$(cat "$AENV_HOME/api-key")"
export E2B_API_KEY
node scripts/demo-sandbox.mjs 'uname -a; python3 --version'
