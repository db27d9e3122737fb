#define _GNU_SOURCE
#include "stage_shim.h"
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define STAGE_MXCSR_FTZ 0x8000u
#define STAGE_MXCSR_DAZ 0x0040u

void stage_enable_flush_to_zero(void) {
    _mm_setcsr(_mm_getcsr() | STAGE_MXCSR_FTZ | STAGE_MXCSR_DAZ);
}

int stage_flush_to_zero_enabled(void) {
    return (_mm_getcsr() & STAGE_MXCSR_FTZ) != 0;
}

#elif defined(__aarch64__)
#define STAGE_FPCR_FZ (1ull << 24)

void stage_enable_flush_to_zero(void) {
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    fpcr |= STAGE_FPCR_FZ;
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
}

int stage_flush_to_zero_enabled(void) {
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    return (fpcr & STAGE_FPCR_FZ) != 0;
}

#else
void stage_enable_flush_to_zero(void) {}
int stage_flush_to_zero_enabled(void) { return 0; }
#endif

#include <pthread.h>
#include <string.h>

int stage_name_thread(unsigned long thread, const char *name) {
    char shortName[16];
    strncpy(shortName, name, sizeof shortName - 1);
    shortName[sizeof shortName - 1] = 0;
    return pthread_setname_np((pthread_t)thread, shortName);
}
