// Package bench holds side-by-side benchmark harnesses: the compared
// implementations run in one process on one machine, interleaved query by
// query, so the noise of a shared machine falls on both and the reported
// ratios hold even when absolute numbers drift. The harnesses are tests
// that skip unless SEMFS_BENCH=1; docs/bench/scale.md records the commands
// and results.
package bench
