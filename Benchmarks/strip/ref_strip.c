/* C -O2 references for the channel-strip benchmark (never part of the product). The same
 * algorithms as StageUnits' EQUnit, DynamicsUnit and DeEsserUnit with steady parameters:
 * the same state-variable filter, the same 16-sample segments with state flushing, the
 * same detectors, curves and fast log2/exp2. Mono, 48 kHz. */
#include "ref_strip.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SR 48000.0
#define GRID 16

typedef struct { float a1, a2, a3, m0, m1, m2; } svf;

static svf svf_make(double g, double k, double m0, double m1, double m2) {
    double a1 = 1 / (1 + g * (g + k));
    svf s = {(float)a1, (float)(g * a1), (float)(g * g * a1), (float)m0, (float)m1, (float)m2};
    return s;
}

static inline void svf_run(const svf *c, float *b, int n, float *st) {
    float s1 = st[0], s2 = st[1];
    for (int i = 0; i < n; i++) {
        float x = b[i], v3 = x - s2;
        float v1 = c->a1 * s1 + c->a2 * v3;
        float v2 = s2 + c->a2 * s1 + c->a3 * v3;
        s1 = 2 * v1 - s1;
        s2 = 2 * v2 - s2;
        b[i] = c->m0 * x + c->m1 * v1 + c->m2 * v2;
    }
    st[0] = s1;
    st[1] = s2;
}

static inline void flush(float *v) { if (fabsf(*v) < 1e-15f) *v = 0; }

/* ---- eq ---- */
struct ref_eq { svf band[5]; float st[10]; long t; };

static double qbw_digital(double bw, double w0) { return 1 / (2 * sinh(log(2) / 2 * bw * w0 / sin(w0))); }

static svf peak(double f, double gain, double bw) {
    double w0 = 2 * M_PI * f / SR, a = pow(10, gain / 40), q = qbw_digital(bw, w0), k = 1 / (q * a);
    return svf_make(tan(w0 / 2), k, 1, k * (a * a - 1), 0);
}

ref_eq *ref_eq_new(void) {
    ref_eq *e = calloc(1, sizeof *e);
    e->band[0] = svf_make(tan(M_PI * 90 / SR), sqrt(2.0), 1, -sqrt(2.0), -1);
    e->band[1] = peak(300, -3, 1);
    e->band[2] = peak(1000, 2, 1);
    e->band[3] = peak(3000, 3, 1);
    double a = pow(10, 2.0 / 40), k = sqrt(2.0);
    e->band[4] = svf_make(tan(M_PI * 10000 / SR) * sqrt(a), k, a * a, k * (1 - a) * a, 1 - a * a);
    return e;
}

void ref_eq_block(ref_eq *e, const float *in, float *out, int n) {
    memcpy(out, in, sizeof(float) * (size_t)n);
    int i = 0;
    while (i < n) {
        int phase = (int)(e->t % GRID);
        int end = i + GRID - phase;
        if (end > n) end = n;
        for (int b = 0; b < 5; b++) svf_run(&e->band[b], out + i, end - i, e->st + 2 * b);
        e->t += end - i;
        if (e->t % GRID == 0) for (int j = 0; j < 10; j++) flush(&e->st[j]);
        i = end;
    }
}

/* ---- fast dB ---- */
#ifndef REF_LIKE_SWIFT
/* As the first pass of the Swift units had them (and as run.sh's reference keeps them). */
static inline float fast_log2(float x) {
    union { float f; uint32_t u; } v = {x};
    int32_t ex = (int32_t)((v.u >> 23) & 0xff) - 127;
    v.u = (v.u & 0x007fffff) | 0x3f800000;
    float m = v.f;
    if (m > 1.4142135f) { m *= 0.5f; ex += 1; }
    float t = (m - 1) / (m + 1), t2 = t * t;
    float s = t * (1 + t2 * (0.33333333f + t2 * (0.2f + t2 * 0.14285714f)));
    return (float)ex + 2.88539008f * s;
}

static inline float fast_exp2(float x) {
    float c = x < -126 ? -126 : (x > 126 ? 126 : x);
#else
/* -DREF_LIKE_SWIFT: the same two rewrites as the Swift units' second pass (README): the
 * exponent/mantissa split in integers, and no clamp in exp2 (the gains are bounded far
 * inside ±126). Same output bit for bit; run.sh reports it as the like-for-like column. */
static inline float fast_log2(float x) {
    union { float f; int32_t i; } v = {x};
    int32_t ex = (v.i - 0x3f3504f4) >> 23;
    v.i -= ex * (1 << 23);
    float m = v.f;
    float t = (m - 1) / (m + 1), t2 = t * t;
    float s = t * (1 + t2 * (0.33333333f + t2 * (0.2f + t2 * 0.14285714f)));
    return (float)ex + 2.88539008f * s;
}

static inline float fast_exp2(float x) {
    float c = x;
#endif
    float nf = (c + 12582912.0f) - 12582912.0f;
    float f = (c - nf) * 0.69314718f;
    float p = 1 + f * (1 + f * (0.5f + f * (0.16666667f + f * (0.041666668f + f * (0.008333334f + f * 0.001388889f)))));
    union { uint32_t u; float f; } s = {(uint32_t)((int32_t)nf + 127) << 23};
    return p * s.f;
}

static inline float p2db(float p) { return p >= 1e-30f ? 3.0102999566f * fast_log2(p) : -300; }
static inline float db2g(float db) { return fast_exp2(db * 0.1660964047f); }
static float coef(double s) { return (float)(1 - exp(-1 / (s * SR))); }

/* ---- dynamics ---- */
struct ref_dyn {
    float T, slope, W, Te, es, H, makeup, att, rel, det, gdet;
    float power, comp, expn, open, gpower;
};

ref_dyn *ref_dyn_new(void) {
    ref_dyn *d = calloc(1, sizeof *d);
    d->T = -20; d->slope = 1.0f / 3 - 1; d->W = 6; d->Te = -60; d->es = 1; d->H = 4; d->makeup = 0;
    d->att = coef(0.01); d->rel = coef(0.15); d->det = coef(0.001); d->gdet = coef(0.01);
    d->expn = 1; d->open = 1;
    return d;
}

static inline float compression(const ref_dyn *d, float level) {
    float over = level - d->T;
    if (2 * over < -d->W) return 0;
    if (2 * over >= d->W) return d->slope * over;
    float x = over + 0.5f * d->W;
    return d->slope * x * x / (2 * d->W);
}

void ref_dyn_block(ref_dyn *d, const float *in, float *out, int n) {
    float power = d->power, comp = d->comp, expn = d->expn, open = d->open, gpower = d->gpower;
    for (int i = 0; i < n; i++) {
        float x = in[i], sq = x * x;
        power += d->det * (sq - power);
        if (power < 1e-30f) power = 0;
        gpower += d->gdet * (sq - gpower);
        if (gpower < 1e-30f) gpower = 0;
        float level = p2db(power), glevel = p2db(gpower);
        float gc = compression(d, level);
        comp += (gc < comp ? d->att : d->rel) * (gc - comp);
        if (gc == 0 && comp > -1e-9f) comp = 0;
        if (open != 0) { if (glevel < d->Te - d->H) open = 0; }
        else if (glevel > d->Te) open = 1;
        float target = 1;
        if (open == 0) {
            float ge = (glevel - d->Te) * d->es;
            target = db2g(ge < -120 ? -120 : ge);
        }
        expn += (target < expn ? d->rel : d->att) * (target - expn);
        if (target == 1 && expn > 0.9999999f) expn = 1;
        float y = x * db2g(comp + d->makeup) * expn;
        if (fabsf(y) < 1e-30f) y = 0;
        out[i] = y;
    }
    d->power = power; d->comp = comp; d->expn = expn; d->open = open; d->gpower = gpower;
}

/* ---- deesser ---- */
struct ref_deess { svf c; float st[6]; float power, change, det, att, rel, T, range; long t; float high[4096], low[4096]; };

ref_deess *ref_deess_new(void) {
    ref_deess *d = calloc(1, sizeof *d);
    d->c = svf_make(tan(M_PI * 6000 / SR), sqrt(2.0), 0, 0, 1);
    d->det = coef(0.001); d->att = coef(0.001); d->rel = coef(0.06); d->T = -30; d->range = 6;
    return d;
}

static inline void tick(const svf *c, float x, float *s1, float *s2, float *band, float *low) {
    float v3 = x - *s2;
    float v1 = c->a1 * *s1 + c->a2 * v3;
    float v2 = *s2 + c->a2 * *s1 + c->a3 * v3;
    *s1 = 2 * v1 - *s1;
    *s2 = 2 * v2 - *s2;
    *band = v1;
    *low = v2;
}

void ref_deess_block(ref_deess *d, const float *in, float *out, int n) {
    const float k = 1.41421356f;
    int i = 0;
    while (i < n) {
        int phase = (int)(d->t % GRID);
        int end = i + GRID - phase;
        if (end > n) end = n;
        float *s = d->st;
        for (int j = i; j < end; j++) {
            float x = in[j], b1, l1, b2, l2, b3, l3;
            tick(&d->c, x, &s[0], &s[1], &b1, &l1);
            float hp1 = x - k * b1 - l1;
            tick(&d->c, hp1, &s[2], &s[3], &b2, &l2);
            d->high[j] = hp1 - k * b2 - l2;
            tick(&d->c, l1, &s[4], &s[5], &b3, &l3);
            d->low[j] = l3;
        }
        d->t += end - i;
        if (d->t % GRID == 0) for (int j = 0; j < 6; j++) flush(&s[j]);
        i = end;
    }
    float power = d->power, change = d->change;
    for (int j = 0; j < n; j++) {
        float h = d->high[j];
        power += d->det * (h * h - power);
        if (power < 1e-30f) power = 0;
        float level = p2db(power);
        float target = d->T - level;
        if (target > 0) target = 0;
        if (target < -d->range) target = -d->range;
        change += (target < change ? d->att : d->rel) * (target - change);
        if (target == 0 && change > -1e-9f) change = 0;
        out[j] = d->low[j] + db2g(change) * h;
    }
    d->power = power;
    d->change = change;
}
