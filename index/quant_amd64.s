#include "textflag.h"

// Both kernels compute, per row, the dot product of stride (a multiple of
// 16) int8 codes with the int16 query codes: 32 codes a step into two
// accumulators of eight int32 lanes, 16 for the last step when stride is an
// odd multiple of 16, then a horizontal sum. The int32 lanes cannot
// overflow: the caller keeps 127·stride·max|q| below 2^31.

// func dotsI8AVX2(q *int16, codes *int8, stride int, out *int32, n int)
TEXT ·dotsI8AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), R9
	MOVQ codes+8(FP), SI
	MOVQ stride+16(FP), R10
	MOVQ out+24(FP), R8
	MOVQ n+32(FP), R11

row:
	MOVQ R9, DI
	MOVQ R10, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

loop32:
	CMPQ CX, $32
	JL   tail16
	VPMOVSXBW (SI), Y2
	VPMOVSXBW 16(SI), Y3
	VPMADDWD (DI), Y2, Y2
	VPMADDWD 32(DI), Y3, Y3
	VPADDD Y2, Y0, Y0
	VPADDD Y3, Y1, Y1
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP  loop32

tail16:
	CMPQ CX, $16
	JL   sum
	VPMOVSXBW (SI), Y2
	VPMADDWD (DI), Y2, Y2
	VPADDD Y2, Y0, Y0
	ADDQ $16, SI

sum:
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R8)
	ADDQ $4, R8
	DECQ R11
	JNZ  row
	VZEROUPPER
	RET

// func dotsI8IdxAVX2(q *int16, codes *int8, stride int, idx *int32, out *int32, n int)
TEXT ·dotsI8IdxAVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), R9
	MOVQ codes+8(FP), R12
	MOVQ stride+16(FP), R10
	MOVQ idx+24(FP), R13
	MOVQ out+32(FP), R8
	MOVQ n+40(FP), R11

irow:
	MOVLQSX (R13), SI
	IMULQ R10, SI
	ADDQ R12, SI
	ADDQ $4, R13
	MOVQ R9, DI
	MOVQ R10, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

iloop32:
	CMPQ CX, $32
	JL   itail16
	VPMOVSXBW (SI), Y2
	VPMOVSXBW 16(SI), Y3
	VPMADDWD (DI), Y2, Y2
	VPMADDWD 32(DI), Y3, Y3
	VPADDD Y2, Y0, Y0
	VPADDD Y3, Y1, Y1
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP  iloop32

itail16:
	CMPQ CX, $16
	JL   isum
	VPMOVSXBW (SI), Y2
	VPMADDWD (DI), Y2, Y2
	VPADDD Y2, Y0, Y0

isum:
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R8)
	ADDQ $4, R8
	DECQ R11
	JNZ  irow
	VZEROUPPER
	RET
