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

const hasAVX512 = false

func gemm6x32z(a *float32, lda int, wp *uint16, d int, c *float32, ldc int) {
	panic("use: gemm6x32z without AVX-512")
}

func wsum64(p *float32, v *float32, ldv int, n int, o *float32) {
	panic("use: wsum64 without SIMD")
}

func gemm12x32z(a *float32, lda int, wp *uint16, d int, c *float32, ldc int) {
	panic("use: gemm12x32z without AVX-512")
}
