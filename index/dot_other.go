//go:build !amd64

package index

// dot is the dot product of equal-length a and b.
func dot(a, b []float32) float32 { return dotGo(a, b) }
