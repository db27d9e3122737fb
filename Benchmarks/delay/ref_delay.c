/* C -O2 reference delays for the delay benchmark (never part of the product).
 * 48 kHz; channels processed one after another per block, as the Swift unit does. */
#include "ref_delay.h"
#include <math.h>
#include <stdlib.h>

#define SIZE 131072
#define MASK (SIZE - 1)

struct ref_delay {
    int kind, channels, tap, w;
    float a, b, fb, wet, dry;
    float *line;
    float lp[16];
};

ref_delay *ref_delay_new(int kind, int channels, int tap, float cutoff_hz, float feedback, float wet) {
    ref_delay *d = calloc(1, sizeof *d);
    d->kind = kind;
    d->channels = channels > 16 ? 16 : channels;
    d->tap = tap;
    d->b = (float)exp(-2 * M_PI * cutoff_hz / 48000.0);
    d->a = 1 - d->b;
    d->fb = feedback;
    d->wet = wet;
    d->dry = 1 - wet;
    d->line = calloc((size_t)SIZE * d->channels, sizeof(float));
    return d;
}

void ref_delay_free(ref_delay *d) {
    free(d->line);
    free(d);
}

/* Same curve as the Swift unit: linear within +-1, quadratic knee, flat at +-2 from +-3. */
static inline float saturate(float v) {
    float m = fabsf(v);
    if (m <= 1.0f) return v;
    if (m > 3.0f) m = 3.0f;
    float k = m - 1.0f;
    float s = m - 0.25f * (k * k);
    return v < 0.0f ? -s : s;
}

/* Output: subnormal, infinite and NaN become 0. Line: also anything under one 24-bit step. */
static inline float flush(float v) {
    float m = fabsf(v);
    return m >= 1.17549435e-38f && m < INFINITY ? v : 0.0f;
}

static inline float gate(float v) {
    float m = fabsf(v);
    return m >= 5.9604645e-8f && m < INFINITY ? v : 0.0f;
}

void ref_delay_block(ref_delay *d, const float *const *in, float *const *out, int n) {
    const int tap = d->tap;
    const float fb = d->fb, wet = d->wet, dry = d->dry, a = d->a, b = d->b;
    for (int c = 0; c < d->channels; c++) {
        float *line = d->line + (size_t)c * SIZE;
        const float *src = in[c];
        float *dst = out[c];
        int w = d->w;
        if (d->kind == 0) {
            for (int i = 0; i < n; i++) {
                float x = src[i];
                float y = line[(w - tap) & MASK];
                line[w] = x + fb * y;
                dst[i] = dry * x + wet * y;
                w = (w + 1) & MASK;
            }
        } else {
            float lp = d->lp[c];
            for (int i = 0; i < n; i++) {
                float x = src[i];
                float y = line[(w - tap) & MASK];
                lp = b * lp + a * y;
                line[w] = gate(x + saturate(fb * lp));
                dst[i] = flush(dry * x + wet * lp);
                w = (w + 1) & MASK;
            }
            if (fabsf(lp) < 1e-30f) lp = 0;
            d->lp[c] = lp;
        }
    }
    d->w = (d->w + n) & MASK;
}
