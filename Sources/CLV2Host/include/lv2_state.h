// A plugin's state (`state:interface`) as a list of properties StageRack can write into a
// rack file and give back: the store and retrieve callbacks, and the `state:mapPath` and
// `state:freePath` features (paths are kept absolute). Used only by StageLV2 (LV2State.swift).
#ifndef STAGE_LV2_STATE_H
#define STAGE_LV2_STATE_H

#include <stdint.h>
#include <stddef.h>
#include <lv2/core/lv2.h>
#include <lv2/state/state.h>

/// One property: key and type as URIDs, the value's bytes (owned).
typedef struct stage_lv2_property {
    uint32_t key;
    uint32_t type;
    uint32_t flags;
    uint32_t size;
    uint8_t *value;
} stage_lv2_property;

/// Properties in the order stored. Thread: control.
typedef struct stage_lv2_state {
    stage_lv2_property *items;
    uint32_t count;
    uint32_t capacity;
    /// Values the plugin stored without `LV2_STATE_IS_POD` (not kept: they cannot be written to a file).
    uint32_t skipped;
} stage_lv2_state;

/// Adds (or replaces) a property, copying `size` bytes. Returns 0 when memory ran out.
int stage_lv2_state_set(stage_lv2_state *s, uint32_t key, uint32_t type, uint32_t flags, const void *value,
                        uint32_t size);
/// Frees every property.
void stage_lv2_state_clear(stage_lv2_state *s);
/// Calls the plugin's `save` into `s` (cleared first). Returns the plugin's status.
int stage_lv2_state_save(const LV2_State_Interface *iface, LV2_Handle instance, stage_lv2_state *s,
                         const LV2_Feature *const *features);
/// Calls the plugin's `restore` from `s`. Returns the plugin's status.
int stage_lv2_state_restore(const LV2_State_Interface *iface, LV2_Handle instance, const stage_lv2_state *s,
                            const LV2_Feature *const *features);
/// `state:mapPath` (abstract path = absolute path) and `state:freePath`. Process-wide.
const LV2_Feature *stage_lv2_map_path_feature(void);
const LV2_Feature *stage_lv2_free_path_feature(void);

#endif
