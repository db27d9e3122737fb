/* The C reference reverb of Benchmarks/reverb (see freeverb.c). */
#ifndef FREEVERB_BENCH_H
#define FREEVERB_BENCH_H

typedef struct freeverb freeverb_t;

/* room 0…1 (feedback 0.7…0.98), damp 0…1, wet and dry levels as Freeverb's knobs. */
freeverb_t *freeverb_new(float room, float damp, float wet, float dry);
/* Mono in, mono out, n frames. */
void freeverb_process(freeverb_t *f, const float *in, float *out, int n);

#endif
