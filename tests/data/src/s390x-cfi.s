# s390x CFI that gcc rarely writes, for the SFrame binutils 2.47 makes of it: the RA and the FP
# kept in floating-point registers (f0 = DWARF 16, f2 = DWARF 17; flexible FDEs), the FP alone
# in one (RA padding), a CFA based on r10 (flexible), on the FP r11 (default), the RA undefined
# (outermost frame), and a frame of 100,000 bytes (a 4-byte offset).
	.text
	.globl ra_then_fp
	.type ra_then_fp, @function
ra_then_fp:
	.cfi_startproc
	ldgr %f0,%r14
	.cfi_register 14, 16
	ldgr %f2,%r11
	.cfi_register 11, 17
	nopr
	lgdr %r11,%f2
	.cfi_restore 11
	lgdr %r14,%f0
	.cfi_restore 14
	br %r14
	.cfi_endproc
	.size ra_then_fp, .-ra_then_fp

	.globl fp_only
	.type fp_only, @function
fp_only:
	.cfi_startproc
	ldgr %f2,%r11
	.cfi_register 11, 17
	nopr
	lgdr %r11,%f2
	.cfi_restore 11
	br %r14
	.cfi_endproc
	.size fp_only, .-fp_only

	.globl r10_cfa
	.type r10_cfa, @function
r10_cfa:
	.cfi_startproc
	stmg %r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	aghi %r15,-160
	.cfi_adjust_cfa_offset 160
	lgr %r10,%r15
	.cfi_def_cfa_register 10
	nopr
	lmg %r11,%r15,248(%r15)
	.cfi_restore 11
	.cfi_restore 14
	.cfi_restore 15
	.cfi_def_cfa 15, 160
	br %r14
	.cfi_endproc
	.size r10_cfa, .-r10_cfa

	.globl fp_cfa
	.type fp_cfa, @function
fp_cfa:
	.cfi_startproc
	stmg %r11,%r15,88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	lgr %r11,%r15
	.cfi_def_cfa_register 11
	aghi %r15,-4000
	nopr
	lmg %r11,%r15,88(%r11)
	.cfi_restore 11
	.cfi_restore 14
	.cfi_restore 15
	.cfi_def_cfa 15, 160
	br %r14
	.cfi_endproc
	.size fp_cfa, .-fp_cfa

	.globl ra_undef
	.type ra_undef, @function
ra_undef:
	.cfi_startproc
	.cfi_undefined 14
	nopr
	br %r14
	.cfi_endproc
	.size ra_undef, .-ra_undef

	.globl big_frame
	.type big_frame, @function
big_frame:
	.cfi_startproc
	stmg %r14,%r15,112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	agfi %r15,-100000
	.cfi_adjust_cfa_offset 100000
	nopr
	agfi %r15,100000
	.cfi_adjust_cfa_offset -100000
	lmg %r14,%r15,112(%r15)
	br %r14
	.cfi_endproc
	.size big_frame, .-big_frame

