// Run-time check of the flush-to-zero shim on the machine it runs on (x86_64 natively,
// AArch64 under qemu-aarch64): a product that would be subnormal, and a subnormal input,
// must give 0 once stage_enable_flush_to_zero() has run, and not before.
#include "stage_shim.h"
#include <stdio.h>

static volatile float tiny = 1e-30f, small = 1e-10f, subnormal = 1e-40f, one = 1.0f;

int main(void) {
    int failed = 0;
    volatile float before = tiny * small, before_in = subnormal * one;
    if (stage_flush_to_zero_enabled()) { puts("FAIL: FTZ already on at start"); failed++; }
    if (before == 0.0f || before_in == 0.0f) { puts("FAIL: subnormals are already flushed without FTZ"); failed++; }
    printf("without FTZ: %g %g\n", (double)before, (double)before_in);  // printed now: DAZ would read them as 0
    stage_enable_flush_to_zero();
    volatile float after = tiny * small, after_in = subnormal * one;
    if (!stage_flush_to_zero_enabled()) { puts("FAIL: stage_flush_to_zero_enabled() says off after enabling"); failed++; }
    if (after != 0.0f) { printf("FAIL: 1e-30 * 1e-10 gave %g with FTZ on\n", (double)after); failed++; }
    if (after_in != 0.0f) { printf("FAIL: a subnormal input gave %g with FTZ on\n", (double)after_in); failed++; }
    printf("with FTZ: %g %g\n", (double)after, (double)after_in);
    return failed ? 1 : 0;
}
