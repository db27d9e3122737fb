#ifndef ALLOC_COUNTER_H
#define ALLOC_COUNTER_H
#include <stdint.h>

/// Counts heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc,
/// memalign) made by the calling thread between start and stop. The allocation functions
/// of the whole process are interposed by this library; they forward to glibc.
/// Thread: the thread being measured. For tests and benchmarks only, never the product.
void alloc_counter_start(void);
/// Stops counting on the calling thread and returns the count since start.
int64_t alloc_counter_stop(void);
/// Non-zero when the interposition is active (glibc); zero means counts are meaningless.
int alloc_counter_available(void);
/// Bytes of the heap the process has allocated and not freed (glibc's mallinfo2: in-use
/// chunks and mmapped blocks): unlike the resident size, it does not grow when the
/// allocator's arenas fragment or keep freed memory. -1 where glibc's allocator is not
/// the one in use (the thread sanitizer's). Thread: any.
int64_t alloc_counter_heap_in_use(void);

#endif
