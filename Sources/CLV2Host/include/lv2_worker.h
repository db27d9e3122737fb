// The LV2 worker (`worker:schedule`) StageRack gives plugins: work a plugin schedules from
// its run() goes through a single-producer/single-consumer byte ring to a worker thread of
// its own (not real-time), which calls the plugin's `work`; the plugin's responses come
// back through a second ring and are delivered on the render thread after run()
// (`work_response`, then `end_run`). Used only by StageLV2 (LV2Worker.swift).
#ifndef STAGE_LV2_WORKER_H
#define STAGE_LV2_WORKER_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <lv2/core/lv2.h>
#include <lv2/worker/worker.h>

/// A bounded ring of messages ([uint32 size][bytes]), allocated once. One producer thread
/// writes, one consumer thread reads; neither allocates, locks or blocks.
typedef struct stage_lv2_ring {
    uint8_t *data;
    uint32_t capacity;
    _Atomic uint32_t head;  // consumer's
    _Atomic uint32_t tail;  // producer's
} stage_lv2_ring;

/// Appends a message; 0 when it does not fit (nothing written). Thread: the producer.
int stage_lv2_ring_write(stage_lv2_ring *r, uint32_t size, const void *data);
/// Takes the oldest message into `out`: its size, -1 when the ring is empty, -2 when it was
/// larger than `out_capacity` (skipped). Thread: the consumer.
int64_t stage_lv2_ring_read(stage_lv2_ring *r, void *out, uint32_t out_capacity);

/// One plugin instance's worker.
///
/// Queues (each has one producer and one consumer thread):
/// - `requests`: producer the render thread (the plugin's `schedule_work` inside run() or
///   work_response(); before the first render, the control thread that restores state),
///   consumer the worker thread (the control thread in `settle`, before `start`).
/// - `responses`: producer the worker thread (the plugin's `respond` inside work()), consumer
///   the render thread (`deliver`; the control thread in `settle`, before `start`).
/// With `synchronous` (offline renders: output that does not depend on thread timing),
/// `schedule_work` runs `work` at once on the calling thread and the response still waits
/// for `deliver` after run().
typedef struct stage_lv2_worker {
    LV2_Worker_Schedule schedule;
    LV2_Feature feature;
    stage_lv2_ring requests;
    stage_lv2_ring responses;
    const LV2_Worker_Interface *iface;
    LV2_Handle instance;
    sem_t wake;
    pthread_t thread;
    atomic_int running;
    int threaded;
    int synchronous;
    uint8_t *thread_buffer;    // the worker thread's copy of a request
    uint8_t *sync_buffer;      // the synchronous worker's and `settle`'s copy of a request
    uint8_t *response_buffer;  // the render thread's copy of a response
    _Atomic uint64_t works_done;
    _Atomic uint64_t responses_delivered;
    _Atomic uint64_t dropped;  // requests or responses that did not fit their ring
} stage_lv2_worker;

/// Allocates the rings (`capacity` bytes each, rounded up to a power of two) and fills the
/// `worker:schedule` feature. Returns 0 when memory ran out. Thread: control.
int stage_lv2_worker_init(stage_lv2_worker *w, uint32_t capacity);
/// The plugin's `worker:interface` and its instance (after instantiate). Thread: control.
void stage_lv2_worker_attach(stage_lv2_worker *w, const LV2_Worker_Interface *iface, LV2_Handle instance);
/// Before `start`, while nothing renders: runs queued work and delivers its responses on the
/// calling thread, again while any answer schedules more, at most `rounds` times (a plugin
/// that loads a file when its state is restored is ready before its first block). Returns
/// the messages handled. Thread: control.
uint32_t stage_lv2_worker_settle(stage_lv2_worker *w, uint32_t rounds);
/// Starts the worker thread (or, `synchronous`, none). Returns 0 when the thread could not
/// be made. Thread: control.
int stage_lv2_worker_start(stage_lv2_worker *w, int synchronous);
/// Delivers the responses waiting (at most 64) with `work_response`, then calls `end_run`.
/// No allocation, no lock. Returns how many it delivered. Thread: render.
uint32_t stage_lv2_worker_deliver(stage_lv2_worker *w);
/// Stops and joins the worker thread (pending work is dropped). Thread: control.
void stage_lv2_worker_stop(stage_lv2_worker *w);
/// Stops the thread and frees the rings. Thread: control.
void stage_lv2_worker_destroy(stage_lv2_worker *w);
/// Counters (relaxed reads, for tests and status). Thread: any.
uint64_t stage_lv2_worker_works_done(stage_lv2_worker *w);
uint64_t stage_lv2_worker_responses_delivered(stage_lv2_worker *w);
uint64_t stage_lv2_worker_dropped(stage_lv2_worker *w);

#endif
