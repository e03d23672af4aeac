//go:build amd64 && !purego

package use

import "golang.org/x/sys/cpu"

// hasSIMD reports whether the AVX2+FMA kernels in kernel_amd64.s can run.
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dot3x4(a *float32, lda int, w *float32, ldw int, d int, out *[12]float32)

//go:noescape
func dot1x4(a *float32, w *float32, ldw int, d int, out *[4]float32)
