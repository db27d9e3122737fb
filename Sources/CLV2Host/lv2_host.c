#include "lv2_host.h"

#include <lv2/atom/util.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- URID map: a growing array of URIs, searched linearly under a mutex (plugins map a
// few dozen URIs, at instantiation).

static pthread_mutex_t urid_lock = PTHREAD_MUTEX_INITIALIZER;
static char **urid_uris = NULL;
static uint32_t urid_count = 0, urid_capacity = 0;

uint32_t stage_lv2_map(const char *uri) {
    if (!uri) return 0;
    pthread_mutex_lock(&urid_lock);
    for (uint32_t i = 0; i < urid_count; i++) {
        if (strcmp(urid_uris[i], uri) == 0) {
            pthread_mutex_unlock(&urid_lock);
            return i + 1;
        }
    }
    if (urid_count == urid_capacity) {
        uint32_t capacity = urid_capacity ? urid_capacity * 2 : 256;
        char **grown = realloc(urid_uris, capacity * sizeof(char *));
        if (!grown) {
            pthread_mutex_unlock(&urid_lock);
            return 0;
        }
        urid_uris = grown;
        urid_capacity = capacity;
    }
    char *copy = strdup(uri);
    if (!copy) {
        pthread_mutex_unlock(&urid_lock);
        return 0;
    }
    urid_uris[urid_count++] = copy;
    uint32_t urid = urid_count;
    pthread_mutex_unlock(&urid_lock);
    return urid;
}

const char *stage_lv2_unmap(uint32_t urid) {
    const char *uri = NULL;
    pthread_mutex_lock(&urid_lock);
    if (urid >= 1 && urid <= urid_count) uri = urid_uris[urid - 1];
    pthread_mutex_unlock(&urid_lock);
    return uri;
}

static LV2_URID map_callback(LV2_URID_Map_Handle handle, const char *uri) {
    (void)handle;
    return stage_lv2_map(uri);
}

static const char *unmap_callback(LV2_URID_Unmap_Handle handle, LV2_URID urid) {
    (void)handle;
    return stage_lv2_unmap(urid);
}

static LV2_URID_Map map_data = {NULL, map_callback};
static LV2_URID_Unmap unmap_data = {NULL, unmap_callback};
static const LV2_Feature map_feature = {LV2_URID__map, &map_data};
static const LV2_Feature unmap_feature = {LV2_URID__unmap, &unmap_data};

const LV2_Feature *stage_lv2_urid_map_feature(void) { return &map_feature; }
const LV2_Feature *stage_lv2_urid_unmap_feature(void) { return &unmap_feature; }

// ---- Log

static int log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap) {
    (void)type;
    stage_lv2_log *log = handle;
    if (log->realtime) {
        log->messages_while_rendering++;
        return 0;
    }
    char text[512];
    int n = vsnprintf(text, sizeof text, fmt, ap);
    size_t len = strlen(text);
    while (len > 0 && text[len - 1] == '\n') text[--len] = 0;
    fprintf(stderr, "%s: %s\n", log->prefix, text);
    return n;
}

static int log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = log_vprintf(handle, type, fmt, ap);
    va_end(ap);
    return n;
}

void stage_lv2_log_init(stage_lv2_log *log, const char *prefix) {
    memset(log, 0, sizeof *log);
    log->log.handle = log;
    log->log.printf = log_printf;
    log->log.vprintf = log_vprintf;
    log->feature.URI = LV2_LOG__log;
    log->feature.data = &log->log;
    snprintf(log->prefix, sizeof log->prefix, "%s", prefix ? prefix : "lv2");
}

// ---- Atom sequences

void stage_lv2_sequence_clear(void *buffer, uint32_t sequence_type) {
    LV2_Atom_Sequence *seq = buffer;
    seq->atom.size = sizeof(LV2_Atom_Sequence_Body);
    seq->atom.type = sequence_type;
    seq->body.unit = 0;
    seq->body.pad = 0;
}

int stage_lv2_sequence_append(void *buffer, uint32_t capacity, int64_t frames, uint32_t type,
                              const uint8_t *data, uint32_t size) {
    LV2_Atom_Sequence *seq = buffer;
    uint32_t used = (uint32_t)sizeof(LV2_Atom) + seq->atom.size;
    uint32_t need = lv2_atom_pad_size((uint32_t)sizeof(LV2_Atom_Event) + size);
    if (used + need > capacity) return 0;
    LV2_Atom_Event *ev = (LV2_Atom_Event *)((uint8_t *)buffer + used);
    ev->time.frames = frames;
    ev->body.size = size;
    ev->body.type = type;
    memcpy(ev + 1, data, size);
    seq->atom.size += need;
    return 1;
}

void stage_lv2_output_prepare(void *buffer, uint32_t capacity, uint32_t chunk_type) {
    LV2_Atom *atom = buffer;
    atom->size = capacity - (uint32_t)sizeof(LV2_Atom);
    atom->type = chunk_type;
}
