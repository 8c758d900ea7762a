#include "textflag.h"

// indexProbe (prefetch.go): slot +0, next +8, tag +16 (4 bytes),
// keyEnd +20 (4 bytes), found +24; 32 bytes.
// An index entry is tag<<36 | offset/8 (index.go); an empty slot is 0.

// func prefetchProbes(p *indexProbe, n int, mem unsafe.Pointer, memLen uint64)
TEXT ·prefetchProbes(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ	p+0(FP), SI
	MOVQ	n+8(FP), DX
	MOVQ	mem+16(FP), R8
	MOVQ	memLen+24(FP), R9
	MOVQ	$0xFFFFFFFFF, R10 // an entry's low 36 bits

	// First pass: ask for every home slot's line.
	MOVQ	SI, DI
	MOVQ	DX, CX
lines:
	MOVQ	0(DI), AX
	PREFETCHT0	(AX)
	ADDQ	$32, DI
	DECQ	CX
	JNZ	lines

	// Second pass: read the slots, ask for the records.
probe:
	MOVQ	0(SI), AX
	MOVQ	(AX), AX
	MOVL	16(SI), BX
	MOVQ	AX, CX
	SHRQ	$36, CX
	CMPQ	CX, BX
	JEQ	found
	TESTQ	AX, AX
	JEQ	none // an empty home slot: the key is absent
	MOVQ	8(SI), AX
	MOVQ	(AX), AX
	MOVQ	AX, CX
	SHRQ	$36, CX
	CMPQ	CX, BX
	JNE	none
found:
	ANDQ	R10, AX
	SHLQ	$3, AX
	CMPQ	AX, R9
	JAE	none
	MOVQ	AX, 24(SI)
	ADDQ	R8, AX
	PREFETCHT0	(AX)
	MOVL	20(SI), CX
	ADDQ	CX, AX
	PREFETCHT0	(AX)
	PREFETCHT0	64(AX) // the value's start, or the next line of it
	JMP	next
none:
	MOVQ	$-1, 24(SI)
next:
	ADDQ	$32, SI
	DECQ	DX
	JNZ	probe
	RET
