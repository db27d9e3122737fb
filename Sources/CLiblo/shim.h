#include <lo/lo.h>

/* lo_arg is a union: one accessor per OSC type the remote takes, so Swift reads no union. */
static inline float stage_lo_float(lo_arg *a) { return a->f; }
static inline int32_t stage_lo_int32(lo_arg *a) { return a->i; }
static inline double stage_lo_double(lo_arg *a) { return a->d; }
static inline int64_t stage_lo_int64(lo_arg *a) { return a->h; }
static inline const char *stage_lo_string(lo_arg *a) { return &a->s; }
