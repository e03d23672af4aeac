//go:build amd64 && !purego

package use

import "golang.org/x/sys/cpu"

// hasSIMD reports whether the AVX2+FMA+F16C kernels in kernel_amd64.s can run.
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

//go:noescape
func gemm6x16(a *float32, lda int, wp *uint16, d int, c *float32, ldc int)

//go:noescape
func gemm1x16(a *float32, wp *uint16, d int, c *float32)

//go:noescape
func dot1x4(a *float32, w *float32, ldw int, d int, out *[4]float32)

// hasAVX512 selects gemm6x32z for pairs of panels.
var hasAVX512 = hasSIMD && cpu.X86.HasAVX512F

//go:noescape
func gemm6x32z(a *float32, lda int, wp *uint16, d int, c *float32, ldc int)

//go:noescape
func wsum64(p *float32, v *float32, ldv int, n int, o *float32)

//go:noescape
func gemm12x32z(a *float32, lda int, wp *uint16, d int, c *float32, ldc int)
