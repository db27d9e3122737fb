/* C -O2 references for the channel-strip benchmark (never part of the product): the
 * `eq`, `dynamics` and `deesser` algorithms written plainly in C, mono, 48 kHz. */
#ifndef REF_STRIP_H
#define REF_STRIP_H

typedef struct ref_eq ref_eq;
typedef struct ref_dyn ref_dyn;
typedef struct ref_deess ref_deess;

/* Five bands as the benchmark's `eq` rack sets them (high-pass 90 Hz, peaks, high shelf). */
ref_eq *ref_eq_new(void);
void ref_eq_block(ref_eq *e, const float *in, float *out, int n);

/* Compressor threshold -20, ratio 3, knee 6, attack 10 ms, release 150 ms, expander -60 / 2 / 4 dB. */
ref_dyn *ref_dyn_new(void);
void ref_dyn_block(ref_dyn *d, const float *in, float *out, int n);

/* Split mode at 6 kHz, threshold -30, range 6. */
ref_deess *ref_deess_new(void);
void ref_deess_block(ref_deess *d, const float *in, float *out, int n);

#endif
