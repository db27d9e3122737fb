/* C -O2 reference delays for the delay benchmark (never part of the product). */
#ifndef REF_DELAY_H
#define REF_DELAY_H

typedef struct ref_delay ref_delay;

/* kind 0 "plain": integer feedback delay: y = line[w-D]; line[w] = x + fb*y; out = dry*x + wet*y
 *   (the PEERS.md "C feedback delay").
 * kind 1 "same": StageRack's delay algorithm in its steady state written the obvious way in C:
 *   + one-pole low-pass in the loop (one sample at a time), soft saturation of the
 *   recirculated part, gate of the line (under 2^-24, NaN, Inf) and flush of the output. */
ref_delay *ref_delay_new(int kind, int channels, int tap, float cutoff_hz, float feedback, float wet);
void ref_delay_free(ref_delay *d);
/* One block of n frames; in and out are arrays of channel pointers. */
void ref_delay_block(ref_delay *d, const float *const *in, float *const *out, int n);

#endif
