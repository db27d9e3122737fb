/* Reference for Benchmarks/reverb: Jezar's Freeverb, mono (8 lowpass-feedback combs in
 * parallel, 4 allpasses in series), written for this benchmark after the public-domain
 * original (tunings, fixed gain, room/damp scaling as in freeverb's tuning.h), per-sample
 * as the original. Built by run.sh with gcc -O2 into .build/reverb-bench/ and linked into
 * the benchmark driver only, never into the product. */
#include <stdlib.h>
#include "freeverb.h"

enum { NCOMB = 8, NALLPASS = 4 };
static const int comb_tuning[NCOMB] = {1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617};
static const int allpass_tuning[NALLPASS] = {556, 441, 341, 225};

typedef struct { float *buf; int size, idx; float feedback, store, damp1, damp2; } comb_t;
typedef struct { float *buf; int size, idx; float feedback; } allpass_t;

struct freeverb {
    comb_t comb[NCOMB];
    allpass_t allpass[NALLPASS];
    float gain, wet, dry;
};

freeverb_t *freeverb_new(float room, float damp, float wet, float dry) {
    freeverb_t *f = calloc(1, sizeof *f);
    float feedback = room * 0.28f + 0.7f;   /* scaleroom, offsetroom */
    float d = damp * 0.4f;                  /* scaledamp */
    for (int i = 0; i < NCOMB; i++) {
        comb_t *c = &f->comb[i];
        c->size = comb_tuning[i];
        c->buf = calloc((size_t)c->size, sizeof(float));
        c->idx = 0; c->store = 0; c->feedback = feedback; c->damp1 = d; c->damp2 = 1 - d;
    }
    for (int i = 0; i < NALLPASS; i++) {
        allpass_t *a = &f->allpass[i];
        a->size = allpass_tuning[i];
        a->buf = calloc((size_t)a->size, sizeof(float));
        a->idx = 0; a->feedback = 0.5f;
    }
    f->gain = 0.015f;  /* fixedgain */
    f->wet = wet * 3;  /* scalewet */
    f->dry = dry * 2;  /* scaledry */
    return f;
}

static inline float comb_process(comb_t *c, float input) {
    float output = c->buf[c->idx];
    c->store = output * c->damp2 + c->store * c->damp1;
    c->buf[c->idx] = input + c->store * c->feedback;
    if (++c->idx >= c->size) c->idx = 0;
    return output;
}

static inline float allpass_process(allpass_t *a, float input) {
    float bufout = a->buf[a->idx];
    float output = -input + bufout;
    a->buf[a->idx] = input + bufout * a->feedback;
    if (++a->idx >= a->size) a->idx = 0;
    return output;
}

void freeverb_process(freeverb_t *f, const float *in, float *out, int n) {
    for (int i = 0; i < n; i++) {
        float x = in[i] * f->gain;
        float acc = 0;
        for (int c = 0; c < NCOMB; c++) acc += comb_process(&f->comb[c], x);
        for (int a = 0; a < NALLPASS; a++) acc = allpass_process(&f->allpass[a], acc);
        out[i] = acc * f->wet + in[i] * f->dry;
    }
}

