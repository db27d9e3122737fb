/* The player's transpose as its disk thread runs it (Sources/StagePlayer/TrackTransposer):
   librubberband in real-time mode with one of the settings of transpose_options.h (R3,
   R3's short window, R2 and its options), stereo, channels together, one thread, fed
   1024-frame blocks, output retrieved as it comes. Input: SECONDS of a stereo mix (a 440 Hz sine, a
   harmonic tone on 220 Hz, a click every 250 ms). Usage: transpose_bench VARIANT SEMITONES
   (0: the copy alone, the baseline). Built by run.sh with gcc -O2 into .build/; counted
   by callgrind. Prints: semitones frames */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "transpose_options.h"

#define RATE 48000
#define SECONDS 4
#define BLOCK 1024
#define TOTAL (RATE * SECONDS)

static float left[TOTAL], right[TOTAL], outL[BLOCK], outR[BLOCK];

int main(int argc, char **argv) {
    long options = variantOptions(argc > 1 ? argv[1] : "r3");
    int semitones = argc > 2 ? atoi(argv[2]) : 5;
    if (options < 0) { fprintf(stderr, "no such variant: %s\n", argv[1]); return 2; }
    for (int i = 0; i < TOTAL; i++) {
        double t = (double)i / RATE;
        double click = fmod(t, 0.25) < 0.05 ? exp(-fmod(t, 0.25) / 0.004) * sin(2 * M_PI * 1500 * t) : 0;
        left[i] = (float)(0.3 * sin(2 * M_PI * 440 * t) + 0.3 * click);
        right[i] = (float)(0.2 * sin(2 * M_PI * 220 * t) + 0.1 * sin(2 * M_PI * 440 * t) + 0.3 * click);
    }
    double sink = 0;
    long produced = 0;
    if (semitones == 0) {
        for (int i = 0; i < TOTAL; i++) sink += left[i] + right[i];
        produced = TOTAL;
    } else {
        RubberBandState s = rubberband_new(RATE, 2, (RubberBandOptions)options, 1.0, pow(2.0, semitones / 12.0));
        rubberband_set_max_process_size(s, BLOCK);
        for (int pos = 0; pos < TOTAL; pos += BLOCK) {
            const float *in[2] = {left + pos, right + pos};
            rubberband_process(s, in, BLOCK, pos + BLOCK >= TOTAL);
            int avail;
            while ((avail = rubberband_available(s)) > 0) {
                float *out[2] = {outL, outR};
                int got = (int)rubberband_retrieve(s, out, avail < BLOCK ? avail : BLOCK);
                for (int f = 0; f < got; f++) sink += outL[f];
                produced += got;
            }
        }
        rubberband_delete(s);
    }
    printf("%d %ld %g\n", semitones, produced, sink > 1e30 ? sink : 0.0);
    return 0;
}
