#include "lv2_state.h"

#include <stdlib.h>
#include <string.h>

int stage_lv2_state_set(stage_lv2_state *s, uint32_t key, uint32_t type, uint32_t flags, const void *value,
                        uint32_t size) {
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, value, size);
    for (uint32_t i = 0; i < s->count; i++) {
        if (s->items[i].key == key) {
            free(s->items[i].value);
            s->items[i] = (stage_lv2_property){key, type, flags, size, copy};
            return 1;
        }
    }
    if (s->count == s->capacity) {
        uint32_t capacity = s->capacity ? s->capacity * 2 : 16;
        stage_lv2_property *grown = realloc(s->items, capacity * sizeof *grown);
        if (!grown) {
            free(copy);
            return 0;
        }
        s->items = grown;
        s->capacity = capacity;
    }
    s->items[s->count++] = (stage_lv2_property){key, type, flags, size, copy};
    return 1;
}

void stage_lv2_state_clear(stage_lv2_state *s) {
    for (uint32_t i = 0; i < s->count; i++) free(s->items[i].value);
    free(s->items);
    memset(s, 0, sizeof *s);
}

static LV2_State_Status store(LV2_State_Handle handle, uint32_t key, const void *value, size_t size, uint32_t type,
                              uint32_t flags) {
    stage_lv2_state *s = handle;
    if (!(flags & LV2_STATE_IS_POD)) {
        s->skipped++;
        return LV2_STATE_ERR_BAD_FLAGS;
    }
    if (size > UINT32_MAX) return LV2_STATE_ERR_UNKNOWN;
    return stage_lv2_state_set(s, key, type, flags, value, (uint32_t)size) ? LV2_STATE_SUCCESS : LV2_STATE_ERR_UNKNOWN;
}

static const void *retrieve(LV2_State_Handle handle, uint32_t key, size_t *size, uint32_t *type, uint32_t *flags) {
    const stage_lv2_state *s = handle;
    for (uint32_t i = 0; i < s->count; i++) {
        if (s->items[i].key == key) {
            if (size) *size = s->items[i].size;
            if (type) *type = s->items[i].type;
            if (flags) *flags = LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE;
            return s->items[i].value;
        }
    }
    return NULL;
}

int stage_lv2_state_save(const LV2_State_Interface *iface, LV2_Handle instance, stage_lv2_state *s,
                         const LV2_Feature *const *features) {
    stage_lv2_state_clear(s);
    return iface->save(instance, store, s, LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, features);
}

int stage_lv2_state_restore(const LV2_State_Interface *iface, LV2_Handle instance, const stage_lv2_state *s,
                            const LV2_Feature *const *features) {
    return iface->restore(instance, retrieve, (LV2_State_Handle)s, LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE,
                          features);
}

static char *abstract_path(LV2_State_Map_Path_Handle handle, const char *absolute) {
    (void)handle;
    return strdup(absolute ? absolute : "");
}

static char *absolute_path(LV2_State_Map_Path_Handle handle, const char *abstract) {
    (void)handle;
    return strdup(abstract ? abstract : "");
}

static void free_path(LV2_State_Free_Path_Handle handle, char *path) {
    (void)handle;
    free(path);
}

static LV2_State_Map_Path map_path_data = {NULL, abstract_path, absolute_path};
static LV2_State_Free_Path free_path_data = {NULL, free_path};
static const LV2_Feature map_path_feature = {LV2_STATE__mapPath, &map_path_data};
static const LV2_Feature free_path_feature = {LV2_STATE__freePath, &free_path_data};

const LV2_Feature *stage_lv2_map_path_feature(void) { return &map_path_feature; }
const LV2_Feature *stage_lv2_free_path_feature(void) { return &free_path_feature; }
