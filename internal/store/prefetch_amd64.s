#include "textflag.h"

// func prefetchLine(p unsafe.Pointer)
TEXT ·prefetchLine(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	p+0(FP), AX
	PREFETCHT0	(AX)
	RET

// func prefetchRecord(slot, next *uint64, tag uint32, mem unsafe.Pointer, memLen, keyEnd uint64) uint64
// An entry is tag<<36 | offset/8 (index.go); an empty slot is 0.
TEXT ·prefetchRecord(SB), NOSPLIT|NOFRAME, $0-56
	MOVQ	slot+0(FP), AX
	MOVQ	(AX), AX
	MOVL	tag+16(FP), BX
	MOVQ	AX, CX
	SHRQ	$36, CX
	CMPQ	CX, BX
	JEQ	found
	TESTQ	AX, AX
	JEQ	none          // an empty home slot: the key is absent
	MOVQ	next+8(FP), AX
	MOVQ	(AX), AX
	MOVQ	AX, CX
	SHRQ	$36, CX
	CMPQ	CX, BX
	JNE	none
found:
	MOVQ	$0xFFFFFFFFF, CX // the low 36 bits
	ANDQ	CX, AX
	SHLQ	$3, AX
	CMPQ	AX, memLen+32(FP)
	JAE	none
	MOVQ	AX, ret+48(FP)
	ADDQ	mem+24(FP), AX
	PREFETCHT0	(AX)
	ADDQ	keyEnd+40(FP), AX
	PREFETCHT0	(AX)
	RET
none:
	MOVQ	$-1, ret+48(FP)
	RET
