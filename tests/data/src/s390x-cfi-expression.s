# An FP rule DWARF writes as an expression (the FP saved at r10 - 8: DW_CFA_expression r11,
# DW_OP_breg10 -8). binutils 2.47's assembler turns it into a flexible FDE whose FP control word
# is 0xfffffffb, register -1 with reserved bits set; its readelf prints (r536870911-8).
	.text
	.globl fp_deref
	.type fp_deref, @function
fp_deref:
	.cfi_startproc
	stg %r11,-8(%r10)
	.cfi_escape 0x10,0xb,0x2,0x7a,0x78
	nopr
	br %r14
	.cfi_endproc
	.size fp_deref, .-fp_deref
