#!/usr/bin/env bash
# The main job on the embedded default (SQLite + a local directory): builds
# semfs, fills a tree with a real corpus (Go's net/http sources) and notes
# written by two "agents", indexes it, then finds things again by tag, by
# meaning, by keyword and with the virtual shell.
#
#   scripts/demo.sh            # uses a fresh temporary directory
#   SEMFS_DEMO_DIR=/srv/ctx scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "demo: Go 1.26 is required (https://go.dev/dl)"; exit 1; }
mkdir -p bin
echo "== go build -o bin/semfs ./cmd/semfs"
go build -o bin/semfs ./cmd/semfs
semfs() { bin/semfs "$@"; }

DIR=${SEMFS_DEMO_DIR:-$(mktemp -d)/context}
mkdir -p "$DIR/http" "$DIR/notes" "$DIR/runs"
cp "$(go env GOROOT)"/src/net/http/{cookie,client,server,request,transport,fs,header}.go "$DIR/http/"
export SEMFS_DATA=$DIR
echo "== tree at $DIR"

echo "== agents write notes"
printf '# Login fails after token refresh\n\nThe session cookie is dropped when the OAuth token is refreshed.\nSuspect: SameSite handling in cookie parsing.\n' | semfs put /notes/auth-bug.md
printf '# Deploy checklist\n\n1. run the migration\n2. roll the web tier\n3. watch error rates\n' | semfs put /notes/deploy.md
printf 'step 1: reproduced the cookie loss with curl\nstep 2: bisected to the redirect path\n' | semfs put /runs/2026-11-29/trace.log

echo "== semfs index (incremental: a second run touches nothing)"
semfs index "$DIR"
semfs index "$DIR"

echo "== tag files: why they exist"
semfs tag /notes/auth-bug.md --task "fix the auth bug" --app code-editor --app notes --summary "cookie dropped on token refresh" --link /runs/2026-11-29/trace.log
semfs tag /runs/2026-11-29/trace.log --task "fix the auth bug" --app agent-runner --provenance "agent run 2026-11-29"
semfs tag /notes/deploy.md --task "release 1.4" --app ci

echo "== query (seed 000: tags and paths): 'auth bug'"
semfs query "auth bug"
echo "== query by meaning: 'login problem'"
semfs query "login problem"

echo "== search (contents, hybrid): 'how are cookies parsed from a header'"
semfs search "how are cookies parsed from a header" --limit 5
echo "== search with a filter: 'redirect task:\"fix the auth bug\"'"
semfs search 'redirect task:"fix the auth bug"' --limit 5

echo "== related (save-time candidates) of /http/cookie.go"
semfs related /http/cookie.go

echo "== the virtual shell: ls, grep -r (index-assisted), find, wc"
semfs sh -c 'ls /notes; grep -rn "func ReadRequest" /http | cut -c1-80; find / -name "*.go" | wc -l'

echo "== read-only document site (seed 003)"
DOCS=$(mktemp -d)
mkdir -p "$DOCS/auth" "$DOCS/internal"
printf '# OAuth\n\nTokens expire after one hour.\n' > "$DOCS/auth/oauth.mdx"
printf -- '---\ngroups: [billing]\n---\n# Billing internals\n\nStripe webhooks retry three times.\n' > "$DOCS/internal/billing.mdx"
semfs docs ingest "$DOCS" --site handbook
echo "-- a public session:"
semfs sh --site handbook -c 'find / -type f; grep -r webhooks / || echo "(no match: billing pages are hidden)"'
echo "-- a billing session:"
semfs sh --site handbook --groups billing -c 'find / -type f; grep -r webhooks /'

echo "== the daemon, headless: control socket, HTTP API and MCP over HTTP on the same tree"
RUN=$(dirname "$DIR")
PORT=$((17000 + RANDOM % 2000))
printf '{"tokens": {"demo-token": {"id": "demo", "app": "demo-agent"}}}\n' > "$RUN/tokens.json"
bin/semfs serve -mode headless -data "$DIR" -index "$DIR/.semfs/index.db" -socket "$RUN/semfs.sock" \
	-http "127.0.0.1:$PORT" -http-tokens "$RUN/tokens.json" -mcp-path /mcp 2>"$RUN/daemon.log" &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null || true' EXIT
semfs doctor --socket "$RUN/semfs.sock" --wait
echo "-- POST /v1/query over HTTP:"
if command -v curl >/dev/null; then
	curl -sf -H 'Authorization: Bearer demo-token' -H 'Content-Type: application/json' \
		-d '{"text": "auth bug", "limit": 2}' "http://127.0.0.1:$PORT/v1/query"
else
	echo "(curl is not installed; skipping the HTTP call)"
fi
kill $DAEMON && wait $DAEMON || true
trap - EXIT
echo "== done: the tree is $DIR (daemon log: $RUN/daemon.log)"
