//go:build !amd64 || purego

package use

// hasSIMD is false: linear uses the portable Go kernel.
const hasSIMD = false

func dot3x4(a *float32, lda int, w *float32, ldw int, d int, out *[12]float32) {
	panic("use: dot3x4 without SIMD")
}

func dot1x4(a *float32, w *float32, ldw int, d int, out *[4]float32) {
	panic("use: dot1x4 without SIMD")
}
