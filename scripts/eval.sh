#!/usr/bin/env bash
# Retrieval eval of the semfs index over GOROOT/src (and, with an argument, a
# synthetic corpus of that many files): Recall@10 and MRR per method, index
# and query timings. Prints Markdown; docs/bench/index.md records the results.
#   scripts/eval.sh            # GOROOT/src only
#   scripts/eval.sh 100000     # plus a synthetic 100k-file corpus
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/semfs-eval ./eval/cmd/semfs-eval
/tmp/semfs-eval -src "$(go env GOROOT)/src" -questions eval/testdata/goroot_questions.tsv -synthetic "${1:-0}"
