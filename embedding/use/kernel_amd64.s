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

// func dot3x4(a *float32, lda int, w *float32, ldw int, d int, out *[12]float32)
// out[4*i+j] = Σ_k a[i*lda+k] * w[j*ldw+k] for i < 3, j < 4, k < d.
// d must be a positive multiple of 8; lda, ldw are in floats.
TEXT ·dot3x4(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), AX
	MOVQ w+16(FP), DI
	MOVQ ldw+24(FP), BX
	MOVQ d+32(FP), CX
	MOVQ out+40(FP), DX
	SHLQ $2, AX
	SHLQ $2, BX
	SHLQ $2, CX
	LEAQ (SI)(AX*1), R8
	LEAQ (R8)(AX*1), R9
	LEAQ (DI)(BX*1), R10
	LEAQ (R10)(BX*1), R11
	LEAQ (R11)(BX*1), R12
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
	XORQ R13, R13

loop3x4:
	VMOVUPS (SI)(R13*1), Y12
	VMOVUPS (R8)(R13*1), Y13
	VMOVUPS (R9)(R13*1), Y14
	VMOVUPS (DI)(R13*1), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS (R10)(R13*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS (R11)(R13*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS (R12)(R13*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11
	ADDQ $32, R13
	CMPQ R13, CX
	JLT  loop3x4

	REDUCE4(Y0, Y1, Y2, Y3, X0, X1, (DX))
	REDUCE4(Y4, Y5, Y6, Y7, X4, X5, 16(DX))
	REDUCE4(Y8, Y9, Y10, Y11, X8, X9, 32(DX))
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
