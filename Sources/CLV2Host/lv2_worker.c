#define _GNU_SOURCE
#include "lv2_worker.h"

#include <stdlib.h>
#include <string.h>

// ---- Byte ring: messages of [uint32 size][size bytes], wrapping at `capacity` (a power of
// two). `tail` is written only by the producer, `head` only by the consumer; each publishes
// its index with release and reads the other's with acquire.

static int ring_init(stage_lv2_ring *r, uint32_t capacity) {
    uint32_t c = 1024;
    while (c < capacity) c <<= 1;
    r->data = calloc(c, 1);
    if (!r->data) return 0;
    r->capacity = c;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return 1;
}

static void ring_copy_in(stage_lv2_ring *r, uint32_t at, const void *src, uint32_t n) {
    uint32_t i = at & (r->capacity - 1);
    uint32_t first = n < r->capacity - i ? n : r->capacity - i;
    memcpy(r->data + i, src, first);
    if (n > first) memcpy(r->data, (const uint8_t *)src + first, n - first);
}

static void ring_copy_out(const stage_lv2_ring *r, uint32_t at, void *dst, uint32_t n) {
    uint32_t i = at & (r->capacity - 1);
    uint32_t first = n < r->capacity - i ? n : r->capacity - i;
    memcpy(dst, r->data + i, first);
    if (n > first) memcpy((uint8_t *)dst + first, r->data, n - first);
}

int stage_lv2_ring_write(stage_lv2_ring *r, uint32_t size, const void *data) {
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t need = (uint64_t)sizeof(uint32_t) + size;
    if (need > r->capacity - (tail - head)) return 0;
    ring_copy_in(r, tail, &size, sizeof size);
    ring_copy_in(r, tail + (uint32_t)sizeof size, data, size);
    atomic_store_explicit(&r->tail, tail + (uint32_t)need, memory_order_release);
    return 1;
}

int64_t stage_lv2_ring_read(stage_lv2_ring *r, void *out, uint32_t out_capacity) {
    uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (tail - head < sizeof(uint32_t)) return -1;
    uint32_t size;
    ring_copy_out(r, head, &size, sizeof size);
    if (size <= out_capacity) ring_copy_out(r, head + (uint32_t)sizeof size, out, size);
    atomic_store_explicit(&r->head, head + (uint32_t)sizeof size + size, memory_order_release);
    return size <= out_capacity ? (int64_t)size : -2;  // -2: skipped, larger than `out`
}

// ---- The worker

static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data) {
    stage_lv2_worker *w = handle;
    if (!stage_lv2_ring_write(&w->responses, size, data)) {
        atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
        return LV2_WORKER_ERR_NO_SPACE;
    }
    return LV2_WORKER_SUCCESS;
}

/// Runs every queued request through the plugin's `work`. Thread: the requests' consumer.
static uint32_t run_requests(stage_lv2_worker *w, uint8_t *buffer) {
    uint32_t n = 0;
    int64_t size;
    while ((size = stage_lv2_ring_read(&w->requests, buffer, w->requests.capacity)) != -1) {
        if (size < 0) continue;
        w->iface->work(w->instance, respond, w, (uint32_t)size, buffer);
        atomic_fetch_add_explicit(&w->works_done, 1, memory_order_relaxed);
        n++;
    }
    return n;
}

static LV2_Worker_Status schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data) {
    stage_lv2_worker *w = handle;
    if (!w->iface) return LV2_WORKER_ERR_UNKNOWN;
    if (!stage_lv2_ring_write(&w->requests, size, data)) {
        atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
        return LV2_WORKER_ERR_NO_SPACE;
    }
    if (w->synchronous) {
        run_requests(w, w->sync_buffer);
    } else if (w->threaded) {
        sem_post(&w->wake);
    }
    return LV2_WORKER_SUCCESS;
}

static void *worker_main(void *arg) {
    stage_lv2_worker *w = arg;
    for (;;) {
        while (sem_wait(&w->wake) != 0) {}
        if (!atomic_load_explicit(&w->running, memory_order_acquire)) break;
        run_requests(w, w->thread_buffer);
    }
    return NULL;
}

int stage_lv2_worker_init(stage_lv2_worker *w, uint32_t capacity) {
    memset(w, 0, sizeof *w);
    if (!ring_init(&w->requests, capacity) || !ring_init(&w->responses, capacity)) return 0;
    w->thread_buffer = malloc(w->requests.capacity);
    w->sync_buffer = malloc(w->requests.capacity);
    w->response_buffer = malloc(w->responses.capacity);
    if (!w->thread_buffer || !w->sync_buffer || !w->response_buffer) return 0;
    sem_init(&w->wake, 0, 0);
    w->schedule.handle = w;
    w->schedule.schedule_work = schedule_work;
    w->feature.URI = LV2_WORKER__schedule;
    w->feature.data = &w->schedule;
    return 1;
}

void stage_lv2_worker_attach(stage_lv2_worker *w, const LV2_Worker_Interface *iface, LV2_Handle instance) {
    w->iface = iface;
    w->instance = instance;
}

uint32_t stage_lv2_worker_settle(stage_lv2_worker *w, uint32_t rounds) {
    uint32_t total = 0;
    if (!w->iface) return 0;
    for (uint32_t r = 0; r < rounds; r++) {
        uint32_t n = run_requests(w, w->sync_buffer);
        n += stage_lv2_worker_deliver(w);
        total += n;
        if (n == 0) break;
    }
    return total;
}

int stage_lv2_worker_start(stage_lv2_worker *w, int synchronous) {
    if (!w->iface) return 1;
    if (synchronous) {
        w->synchronous = 1;
        return 1;
    }
    atomic_store_explicit(&w->running, 1, memory_order_release);
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        atomic_store_explicit(&w->running, 0, memory_order_release);
        return 0;
    }
    pthread_setname_np(w->thread, "stagerack-lv2w");
    w->threaded = 1;
    sem_post(&w->wake);  // work queued before the thread began (a restore without `settle`)
    return 1;
}

uint32_t stage_lv2_worker_deliver(stage_lv2_worker *w) {
    uint32_t n = 0;
    if (!w->iface) return 0;
    int64_t size;
    // At most 64 responses a cycle: a plugin whose work_response schedules work that answers
    // at once (the synchronous worker) cannot keep the render thread here.
    while (n < 64 && (size = stage_lv2_ring_read(&w->responses, w->response_buffer, w->responses.capacity)) != -1) {
        if (size < 0) continue;
        if (w->iface->work_response) w->iface->work_response(w->instance, (uint32_t)size, w->response_buffer);
        n++;
    }
    if (w->iface->end_run) w->iface->end_run(w->instance);
    atomic_fetch_add_explicit(&w->responses_delivered, n, memory_order_relaxed);
    return n;
}

void stage_lv2_worker_stop(stage_lv2_worker *w) {
    if (!w->threaded) return;
    atomic_store_explicit(&w->running, 0, memory_order_release);
    sem_post(&w->wake);
    pthread_join(w->thread, NULL);
    w->threaded = 0;
}

void stage_lv2_worker_destroy(stage_lv2_worker *w) {
    stage_lv2_worker_stop(w);
    sem_destroy(&w->wake);
    free(w->requests.data);
    free(w->responses.data);
    free(w->thread_buffer);
    free(w->sync_buffer);
    free(w->response_buffer);
}

uint64_t stage_lv2_worker_works_done(stage_lv2_worker *w) {
    return atomic_load_explicit(&w->works_done, memory_order_relaxed);
}
uint64_t stage_lv2_worker_responses_delivered(stage_lv2_worker *w) {
    return atomic_load_explicit(&w->responses_delivered, memory_order_relaxed);
}
uint64_t stage_lv2_worker_dropped(stage_lv2_worker *w) {
    return atomic_load_explicit(&w->dropped, memory_order_relaxed);
}
