#!/usr/bin/env bash
# Rebuilds docs/benchmarks.md: the summary below, then every area's record
# from docs/bench/*.md (each written by the benchmark's own command).
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/benchmarks.md
{
	cat docs/bench/SUMMARY.md
	for area in core hostfs layers embedding use index eval search ingest freshness shell daemon create api scale; do
		f=docs/bench/$area.md
		[ -f "$f" ] || continue
		printf '\n---\n\n<!-- from %s -->\n' "$f"
		# Demote headings one level so each area sits under the summary.
		sed -e 's/^#/##/' "$f"
	done
} > "$out"
echo "wrote $out"
