/* The player's transpose criteria (as Tests/StagePlayerTests/PlayerTransposeTests measure
   them) for one librubberband setting (transpose_options.h), shifted as the player's disk
   thread does (TrackTransposer: the preferred start pad fed as zeros, the start delay
   dropped, 1024-frame blocks, output as long as the input). At +-1, +-2, +-5 semitones:
   - pitch: a 440 Hz sine (left) and a harmonic tone on 220 Hz (right), 4 s, measured from
     1.5 to 3.5 s (Goertzel scan, golden-section refinement), cents from 2^(n/12) times;
   - level: the sine's RMS there against the file's, dB;
   - length: 54 clicks over 15 s, each one's offset from the file's by envelope
     cross-correlation (64-frame RMS, 4-frame steps), the line through them in ms a minute,
     and their mean offset (ms).
   Usage: transpose_quality VARIANT. Prints one line a shift. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "transpose_options.h"

#define RATE 48000.0
#define BLOCK 1024

/* Shifts n frames of l, r by `semitones` into ol, or (n frames each, aligned to the input). */
static void shift(long options, int semitones, const float *l, const float *r, float *ol, float *or_, int n) {
    RubberBandState s = rubberband_new((unsigned)RATE, 2, (RubberBandOptions)options, 1.0, pow(2.0, semitones / 12.0));
    rubberband_set_max_process_size(s, BLOCK);
    static float zeros[BLOCK], tl[BLOCK], tr[BLOCK];
    int pad = (int)rubberband_get_preferred_start_pad(s);
    int discard = (int)rubberband_get_start_delay(s);
    while (pad > 0) {
        int k = pad < BLOCK ? pad : BLOCK;
        const float *in[2] = {zeros, zeros};
        rubberband_process(s, in, k, 0);
        pad -= k;
    }
    int done = 0;
    for (int pos = 0; done < n; pos += BLOCK) {
        int k = pos >= n ? 0 : (n - pos < BLOCK ? n - pos : BLOCK);
        if (pos < n) {
            const float *in[2] = {l + pos, r + pos};
            rubberband_process(s, in, k, pos + k >= n);
        }
        int avail;
        while ((avail = rubberband_available(s)) > 0 && done < n) {
            float *out[2] = {tl, tr};
            int got = (int)rubberband_retrieve(s, out, avail < BLOCK ? avail : BLOCK);
            for (int f = 0; f < got && done < n; f++) {
                if (discard > 0) { discard--; continue; }
                ol[done] = tl[f];
                or_[done] = tr[f];
                done++;
            }
        }
        if (pos >= n && avail <= 0) break;
    }
    for (; done < n; done++) ol[done] = or_[done] = 0;
    rubberband_delete(s);
}

static double magnitude(double f, const float *x, int n) {
    double w = 2 * M_PI * f / RATE, c = 2 * cos(w), s1 = 0, s2 = 0, ws = 0;
    for (int i = 0; i < n; i++) {
        double win = 0.5 - 0.5 * cos(2 * M_PI * i / (n - 1));
        ws += win;
        double s0 = x[i] * win + c * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    double p = s1 * s1 + s2 * s2 - c * s1 * s2;
    return 2 * sqrt(p > 0 ? p : 0) / ws;
}

static double dominant(const float *x, int n, double low, double high) {
    double best = low, bestMag = -1, step = pow(2, 1.0 / 48);
    for (double f = low; f <= high; f *= step) {
        double m = magnitude(f, x, n);
        if (m > bestMag) { bestMag = m; best = f; }
    }
    double a = best / step, b = best * step, g = (sqrt(5.0) - 1) / 2;
    for (int i = 0; i < 40; i++) {
        double c = b - g * (b - a), d = a + g * (b - a);
        if (magnitude(c, x, n) > magnitude(d, x, n)) b = d; else a = c;
    }
    return (a + b) / 2;
}

static double rms(const float *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s / n);
}

/* The envelope of x (64-frame RMS every 4 frames, mean removed) into e; its length. */
static int envelope(const float *x, int n, double *e) {
    double sum = 0, mean = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        sum += (double)x[i] * x[i];
        if (i >= 64) sum -= (double)x[i - 64] * x[i - 64];
        if (i % 4 == 0) e[m++] = sqrt((sum > 0 ? sum : 0) / 64);
    }
    for (int i = 0; i < m; i++) mean += e[i];
    mean /= m;
    for (int i = 0; i < m; i++) e[i] -= mean;
    return m;
}

/* Frames by which y's envelope lags x's, 0 ... maxLag (as PitchMeasure.envelopeDelay). */
static double envelopeDelay(const float *y, int ny, const float *x, int nx, int maxLag) {
    static double ex[20000], ey[20000], v[1000];
    int mx = envelope(x, nx, ex), my = envelope(y, ny, ey), best = 0, lags = maxLag / 4 + 1;
    for (int lag = 0; lag < lags; lag++) {
        double s = 0;
        for (int i = 0; i < mx && i + lag < my; i++) s += ex[i] * ey[i + lag];
        v[lag] = s;
        if (s > v[best]) best = lag;
    }
    double off = 0;
    if (best > 0 && best < lags - 1) {
        double den = v[best - 1] - 2 * v[best] + v[best + 1];
        if (den < 0) off = 0.5 * (v[best - 1] - v[best + 1]) / den;
    }
    return (best + off) * 4;
}

int main(int argc, char **argv) {
    long options = variantOptions(argc > 1 ? argv[1] : "r3");
    if (options < 0) { fprintf(stderr, "no such variant\n"); return 2; }
    int nt = (int)(4 * RATE), nc = (int)(15 * RATE);
    float *l = calloc(nt, 4), *r = calloc(nt, 4), *ol = calloc(nc, 4), *or_ = calloc(nc, 4);
    float *c = calloc(nc, 4);
    double amps[4] = {0.2, 0.1, 0.06, 0.04};
    for (int i = 0; i < nt; i++) {
        l[i] = (float)(0.3 * sin(2 * M_PI * 440 * i / RATE));
        for (int k = 0; k < 4; k++) r[i] += (float)(amps[k] * sin(2 * M_PI * 220 * (k + 1) * i / RATE));
    }
    for (int s = 0; s < 4 * 15 - 6; s++) {
        int at = (int)((s / 4.0 + 0.5) * RATE);
        for (int i = 0; i < 2400; i++) {
            double t = i / RATE;
            c[at + i] = (float)(exp(-t / 0.004) * (0.5 * sin(2 * M_PI * 1500 * t) + 0.3 * sin(2 * M_PI * 5000 * t)));
        }
    }
    int from = (int)(1.5 * RATE), len = (int)(2 * RATE), margin = 480, win = (int)(0.17 * RATE);
    int shifts[6] = {1, -1, 2, -2, 5, -5};
    for (int j = 0; j < 6; j++) {
        int n = shifts[j];
        double factor = pow(2, n / 12.0), f0 = 220 * factor;
        shift(options, n, l, r, ol, or_, nt);
        double sine = 1200 * log2(dominant(ol + from, len, 300, 700) / (440 * factor));
        double tone = 1200 * log2(dominant(or_ + from, len, f0 * 0.9, f0 * 1.1) / f0);
        double level = 20 * log10(rms(ol + from, len) / rms(l + from, len));
        shift(options, n, c, c, ol, or_, nc);
        double st = 0, so = 0, stt = 0, sto = 0, offs[54], worst = 0;
        for (int k = 0; k < 54; k++) {
            double t = k / 4.0 + 0.5;
            int a = (int)((t - 0.05) * RATE);
            offs[k] = (envelopeDelay(ol + a - margin, win + margin, c + a, win, 2 * margin) - margin) / RATE * 1000;
            st += t; so += offs[k]; stt += t * t; sto += t * offs[k];
        }
        double slope = (sto - st * so / 54) / (stt - st * st / 54), mean = so / 54;
        for (int k = 0; k < 54; k++) if (fabs(offs[k] - mean) > worst) worst = fabs(offs[k] - mean);
        printf("%-18s %+d  sine %+8.4f c  tone %+8.4f c  level %+6.3f dB  length %+6.2f ms/min  clicks at %+6.2f ms (+-%.2f)\n",
            argv[1], n, sine, tone, level, slope * 60, mean, worst);
    }
    return 0;
}
