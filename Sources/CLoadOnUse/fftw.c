/* FFTW in single precision, opened when a feedback unit is made (stage_load_fftw). Only
 * fftwf_execute_dft_r2c runs on the render thread: through a pointer resolved before the
 * unit was handed to it. The functions StageRack calls, with the header's prototypes. */
#include <fftw3.h>

#include "load_on_use.h"
#include "loader.h"

#define FFTW(F, V)                                                                                \
    F(fftwf_complex *, fftwf_alloc_complex, (size_t n), (n))                                      \
    F(float *, fftwf_alloc_real, (size_t n), (n))                                                 \
    V(fftwf_destroy_plan, (fftwf_plan p), (p))                                                    \
    V(fftwf_execute_dft_r2c, (const fftwf_plan p, float *in, fftwf_complex *out), (p, in, out))   \
    V(fftwf_free, (void *p), (p))                                                                 \
    F(fftwf_plan, fftwf_plan_dft_r2c_1d, (int n, float *in, fftwf_complex *out, unsigned flags),  \
      (n, in, out, flags))

STAGE_LIBRARY(fftw, FFTW, "FFTW", "the feedback unit", "libfftw3-single3", "libfftw3f.so.3")
