/* The librubberband settings compared by Benchmarks/transpose (run.sh): each a name and
   its option flags on top of what the player always uses (real time, one thread); all but
   the "apart" ones process the channels together. "r3" is the player's setting before issue 30's cost work;
   "r3short" (R3 with its short window) is the player's default since. */
#ifndef TRANSPOSE_OPTIONS_H
#define TRANSPOSE_OPTIONS_H
#include <string.h>
#include <rubberband/rubberband-c.h>

typedef struct { const char *name; RubberBandOptions options; } Variant;

#define TOGETHER RubberBandOptionChannelsTogether

static const Variant variants[] = {
    {"r3", RubberBandOptionEngineFiner | TOGETHER},
    {"r3short", RubberBandOptionEngineFiner | RubberBandOptionWindowShort | TOGETHER},
    {"r2", RubberBandOptionEngineFaster | TOGETHER},
    {"r2hq", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality | TOGETHER},
    {"r2hc", RubberBandOptionEngineFaster | RubberBandOptionPitchHighConsistency | TOGETHER},
    {"r2smooth", RubberBandOptionEngineFaster | RubberBandOptionTransientsSmooth | TOGETHER},
    {"r2indep", RubberBandOptionEngineFaster | RubberBandOptionPhaseIndependent | TOGETHER},
    {"r2short", RubberBandOptionEngineFaster | RubberBandOptionWindowShort | TOGETHER},
    {"r2hq-smooth-indep", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality
        | RubberBandOptionTransientsSmooth | RubberBandOptionPhaseIndependent | TOGETHER},
    {"r2hq-smooth", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality
        | RubberBandOptionTransientsSmooth | TOGETHER},
    {"r2hq-indep", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality
        | RubberBandOptionPhaseIndependent | TOGETHER},
    {"r2hq-mixed-indep", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality
        | RubberBandOptionTransientsMixed | RubberBandOptionPhaseIndependent | TOGETHER},
    {"r2-smooth-indep", RubberBandOptionEngineFaster | RubberBandOptionTransientsSmooth
        | RubberBandOptionPhaseIndependent | TOGETHER},
    {"r2apart", RubberBandOptionEngineFaster},
    {"r2hq-apart", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality},
    {"r2hq-smooth-indep-apart", RubberBandOptionEngineFaster | RubberBandOptionPitchHighQuality
        | RubberBandOptionTransientsSmooth | RubberBandOptionPhaseIndependent},
    {"r3short-apart", RubberBandOptionEngineFiner | RubberBandOptionWindowShort},
};

static const int variantCount = sizeof variants / sizeof variants[0];

/* The flags of variant `name` with the player's own, or -1 if there is none such. */
static long variantOptions(const char *name) {
    for (int i = 0; i < variantCount; i++)
        if (strcmp(variants[i].name, name) == 0)
            return (long)(variants[i].options | RubberBandOptionProcessRealTime | RubberBandOptionThreadingNever);
    return -1;
}
#endif
