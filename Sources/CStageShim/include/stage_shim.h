#ifndef STAGE_SHIM_H
#define STAGE_SHIM_H

/// Turns on flush-to-zero and denormals-are-zero for the calling thread
/// (x86: MXCSR FTZ|DAZ; AArch64: FPCR.FZ). Thread: the thread that renders.
void stage_enable_flush_to_zero(void);

/// Returns 1 when flush-to-zero is on for the calling thread. Thread: any.
int stage_flush_to_zero_enabled(void);

#endif
