//go:build !amd64 || purego

package use

// hasSIMD is false: linear uses the portable Go kernel.
const hasSIMD = false

func gemm6x16(a *float32, lda int, wp *uint16, d int, c *float32, ldc int) {
	panic("use: gemm6x16 without SIMD")
}

func gemm1x16(a *float32, wp *uint16, d int, c *float32) {
	panic("use: gemm1x16 without SIMD")
}

func dot1x4(a *float32, w *float32, ldw int, d int, out *[4]float32) {
	panic("use: dot1x4 without SIMD")
}

func axpy(alpha float32, x *float32, y *float32, n int) {
	panic("use: axpy without SIMD")
}

const hasAVX512 = false

func gemm6x32z(a *float32, lda int, wp *uint16, d int, c *float32, ldc int) {
	panic("use: gemm6x32z without AVX-512")
}
