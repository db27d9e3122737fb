#ifndef STAGE_SHIM_H
#define STAGE_SHIM_H

/// Turns on flush-to-zero and denormals-are-zero for the calling thread
/// (x86: MXCSR FTZ|DAZ; AArch64: FPCR.FZ). Thread: the thread that renders.
void stage_enable_flush_to_zero(void);

/// Returns 1 when flush-to-zero is on for the calling thread. Thread: any.
int stage_flush_to_zero_enabled(void);

/// Called with each alsa-lib error message (already formatted; `err` is alsa-lib's errno,
/// 0 if none). Thread: whichever thread alsa-lib reports on.
typedef void (*stage_alsa_error_callback)(const char *file, int line, const char *function, int err,
                                          const char *message);

/// Sends alsa-lib's own error lines to `callback` instead of stderr (NULL drops them).
/// Thread: control, before the first ALSA call whose messages should be routed.
void stage_alsa_route_errors(stage_alsa_error_callback callback);

/// Names a thread (`pthread_setname_np`; at most 15 bytes are kept) as `ps -L` and
/// `top -H` show it; returns 0 or an errno. Thread: any.
int stage_name_thread(unsigned long thread, const char *name);

#endif
