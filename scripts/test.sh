#!/usr/bin/env bash
# Runs every check CI runs, on a fresh machine: installs what the tests need,
# starts nothing by hand (tests start their own servers), then gofmt, go vet
# and go test -race over the whole module.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
export GOFLAGS="${GOFLAGS:-} -mod=mod"

# shellcheck source=scripts/deps.sh
. scripts/deps.sh
install_test_deps

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 15m ./...
