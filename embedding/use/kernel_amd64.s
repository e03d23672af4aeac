//go:build amd64 && !purego

#include "textflag.h"

// Reduce four 8-lane accumulators A,B,C,D to [ΣA, ΣB, ΣC, ΣD] in the low
// 128 bits of A and store them at dst. Clobbers B, C and D.
#define REDUCE4(A, B, C, D, XA, XB, dst) \
	VHADDPS B, A, A \
	VHADDPS D, C, C \
	VHADDPS C, A, A \
	VEXTRACTF128 $1, A, XB \
	VADDPS XB, XA, XA \
	VMOVUPS XA, dst


// func gemm6x16(a *float32, lda int, wp *uint16, d int, c *float32, ldc int)
// For i < 6, j < 16: c[i*ldc+j] += Σ_k a[i*lda+k] * half(wp[16*k+j]), k < d.
// wp is one panel of 16 output columns of IEEE float16 weights (see
// newMatrix), widened to float32 by VCVTPH2PS as it is loaded; d > 0.
TEXT ·gemm6x16(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), AX
	MOVQ wp+16(FP), DI
	MOVQ d+24(FP), CX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), BX
	SHLQ $2, AX
	SHLQ $2, BX
	LEAQ (SI)(AX*2), R8
	ADDQ AX, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop6x16:
	VCVTPH2PS (DI), Y12
	VCVTPH2PS 16(DI), Y13
	VBROADCASTSS (SI), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS (SI)(AX*1), Y15
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS (SI)(AX*2), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS (R8), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VBROADCASTSS (R8)(AX*1), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS (R8)(AX*2), Y15
	VFMADD231PS Y12, Y15, Y10
	VFMADD231PS Y13, Y15, Y11
	ADDQ $4, SI
	ADDQ $4, R8
	ADDQ $32, DI
	DECQ CX
	JNZ  loop6x16

	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ BX, DX
	VADDPS (DX), Y2, Y2
	VADDPS 32(DX), Y3, Y3
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ BX, DX
	VADDPS (DX), Y4, Y4
	VADDPS 32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ BX, DX
	VADDPS (DX), Y6, Y6
	VADDPS 32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ BX, DX
	VADDPS (DX), Y8, Y8
	VADDPS 32(DX), Y9, Y9
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ BX, DX
	VADDPS (DX), Y10, Y10
	VADDPS 32(DX), Y11, Y11
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func gemm1x16(a *float32, wp *uint16, d int, c *float32)
// For j < 16: c[j] += Σ_k a[k] * half(wp[16*k+j]), k < d; d > 0.
TEXT ·gemm1x16(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ wp+8(FP), DI
	MOVQ d+16(FP), CX
	MOVQ c+24(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop1x16:
	VCVTPH2PS (DI), Y12
	VCVTPH2PS 16(DI), Y13
	VBROADCASTSS (SI), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	ADDQ $4, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop1x16

	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET

// func dot1x4(a *float32, w *float32, ldw int, d int, out *[4]float32)
// out[j] = Σ_k a[k] * w[j*ldw+k] for j < 4, k < d (d a positive multiple of 8).
TEXT ·dot1x4(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ ldw+16(FP), BX
	MOVQ d+24(FP), CX
	MOVQ out+32(FP), DX
	SHLQ $2, BX
	SHLQ $2, CX
	LEAQ (DI)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	LEAQ (R11)(BX*1), R12
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ R13, R13

loop1x4:
	VMOVUPS (SI)(R13*1), Y12
	VFMADD231PS (DI)(R13*1), Y12, Y0
	VFMADD231PS (R10)(R13*1), Y12, Y1
	VFMADD231PS (R11)(R13*1), Y12, Y2
	VFMADD231PS (R12)(R13*1), Y12, Y3
	ADDQ $32, R13
	CMPQ R13, CX
	JLT  loop1x4

	REDUCE4(Y0, Y1, Y2, Y3, X0, X1, (DX))
	VZEROUPPER
	RET

// func axpy(alpha float32, x *float32, y *float32, n int)
// y[k] += alpha * x[k] for k < n; n a positive multiple of 8.
TEXT ·axpy(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	XORQ AX, AX

loopaxpy:
	VMOVUPS (DI)(AX*1), Y1
	VFMADD231PS (SI)(AX*1), Y0, Y1
	VMOVUPS Y1, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT  loopaxpy
	VZEROUPPER
	RET
