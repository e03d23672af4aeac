//go:build !amd64

package index

// useAVX2 is never set here; it exists so tests can toggle the kernels the
// same way on every architecture.
var useAVX2 bool

// dot is the dot product of equal-length a and b.
func dot(a, b []float32) float32 { return dotGo(a, b) }
