// The LV2 host features StageRack gives plugins, in C because LV2's log feature is
// variadic (Swift cannot implement a C variadic callback), plus atom-sequence helpers
// for the render thread. Used only by StageLV2.
#ifndef STAGE_LV2_HOST_H
#define STAGE_LV2_HOST_H

#include <stdint.h>
#include <stddef.h>
#include <lv2/core/lv2.h>
#include <lv2/urid/urid.h>
#include <lv2/log/log.h>
#include <lv2/options/options.h>
#include <lv2/atom/atom.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/midi/midi.h>
#include <lv2/parameters/parameters.h>

/// The process-wide URID map and unmap features (one table for every plugin, so that URIDs
/// agree between plugins). Mapping a new URI takes a mutex and allocates: plugins map in
/// `instantiate` (control thread); a URI already mapped is found without allocating.
/// Thread: any.
const LV2_Feature *stage_lv2_urid_map_feature(void);
const LV2_Feature *stage_lv2_urid_unmap_feature(void);
uint32_t stage_lv2_map(const char *uri);
/// The URI of `urid`, or NULL. The string lives as long as the process.
const char *stage_lv2_unmap(uint32_t urid);

/// One plugin instance's log: messages print to stderr (prefixed with the plugin's name)
/// while `realtime` is 0 (instantiation, on the control thread); once the instance renders,
/// `realtime` is 1 and messages are only counted (printing could block the render thread).
typedef struct stage_lv2_log {
    LV2_Log_Log log;
    LV2_Feature feature;
    char prefix[96];
    volatile int realtime;
    volatile uint64_t messages_while_rendering;
} stage_lv2_log;

/// Fills `log` (caller-owned memory that outlives the instance). Thread: control.
void stage_lv2_log_init(stage_lv2_log *log, const char *prefix);

/// An empty atom:Sequence in `buffer` (for an input atom port, each cycle). Thread: render.
void stage_lv2_sequence_clear(void *buffer, uint32_t sequence_type);
/// Appends a MIDI event of `size` bytes at `frames`; returns 0 when it does not fit in
/// `capacity` bytes (the event is dropped). Thread: render.
int stage_lv2_sequence_append(void *buffer, uint32_t capacity, int64_t frames, uint32_t type,
                              const uint8_t *data, uint32_t size);
/// Prepares an output atom port's buffer for the plugin to write: an atom:Chunk whose size
/// is the space available. Thread: render.
void stage_lv2_output_prepare(void *buffer, uint32_t capacity, uint32_t chunk_type);

#endif
