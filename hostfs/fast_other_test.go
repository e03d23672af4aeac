//go:build !linux

package hostfs

func noFastPath(*FS, bool) {}
