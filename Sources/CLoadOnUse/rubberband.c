/* librubberband, opened when a player unit transposes a track (stage_load_rubberband). Its
 * functions run on the player's disk thread, never the render thread. The functions
 * StageRack calls, with the header's prototypes. */
#include <rubberband/rubberband-c.h>

#include "load_on_use.h"
#include "loader.h"

#define RUBBERBAND(F, V)                                                                          \
    F(int, rubberband_available, (const RubberBandState state), (state))                          \
    V(rubberband_delete, (RubberBandState state), (state))                                        \
    F(unsigned int, rubberband_get_preferred_start_pad, (const RubberBandState state), (state))   \
    F(unsigned int, rubberband_get_start_delay, (const RubberBandState state), (state))           \
    F(RubberBandState, rubberband_new,                                                            \
      (unsigned int sampleRate, unsigned int channels, RubberBandOptions options, double initialTimeRatio, \
       double initialPitchScale),                                                                 \
      (sampleRate, channels, options, initialTimeRatio, initialPitchScale))                       \
    V(rubberband_process, (RubberBandState state, const float *const *input, unsigned int samples, int final), \
      (state, input, samples, final))                                                             \
    F(unsigned int, rubberband_retrieve, (const RubberBandState state, float *const *output, unsigned int samples), \
      (state, output, samples))                                                                   \
    V(rubberband_set_max_process_size, (RubberBandState state, unsigned int samples), (state, samples))

STAGE_LIBRARY(rubberband, RUBBERBAND, "librubberband", "transposing a backing track", "librubberband2",
              "librubberband.so.3", "librubberband.so.2")
