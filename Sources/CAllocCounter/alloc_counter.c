// Interposes glibc's allocator to count allocations made on one thread.
// For tests and benchmarks only.
#define _GNU_SOURCE
#include "alloc_counter.h"
#include <stddef.h>
#include <errno.h>
#include <malloc.h>

// The thread sanitizer has an allocator of its own that must see every allocation: under
// it (`make tsan`) nothing is interposed and the counter reports itself unavailable.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STAGE_NO_INTERPOSE 1
#endif
#endif

#if defined(__GLIBC__) && !defined(STAGE_NO_INTERPOSE)
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread int64_t count;

static inline void note(void) { if (counting) count++; }

void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    note();
    void *p = __libc_memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void alloc_counter_start(void) { count = 0; counting = 1; }
int64_t alloc_counter_stop(void) { counting = 0; return count; }
int alloc_counter_available(void) { return 1; }
int64_t alloc_counter_heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return (int64_t)(m.uordblks + m.hblkhd);
}
#else
void alloc_counter_start(void) {}
int64_t alloc_counter_stop(void) { return 0; }
int alloc_counter_available(void) { return 0; }
int64_t alloc_counter_heap_in_use(void) { return -1; }
#endif
