/* Rubber Band's real-time latency at 48 kHz for a +3 semitone shift, R2 (faster) and R3
   (finer) engines: what the library reports (rubberband_get_start_delay), and what a live
   host sees when it streams 256-frame blocks and plays output as soon as it is available
   (onset of a tone burst in, onset out). Built by run.sh with gcc -O2 into .build/, never
   shipped. Prints: engine reported_frames measured_frames */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <rubberband/rubberband-c.h>

#define RATE 48000
#define BLOCK 256
#define TOTAL (RATE * 2)
#define ONSET RATE

static float out_fifo[TOTAL * 2];

static void measure(const char *name, int options) {
    RubberBandState s = rubberband_new(RATE, 1, options, 1.0, pow(2.0, 3.0 / 12.0));
    static float in[TOTAL];
    for (int i = 0; i < TOTAL; i++)
        in[i] = i >= ONSET ? 0.5f * (float)sin(2 * M_PI * 220.0 * (i - ONSET) / RATE) : 0.0f;
    int written = 0;   /* frames the host has played */
    int produced = 0;  /* frames retrieved from the stretcher */
    int out_onset = -1;
    float tmp[4096];
    for (int pos = 0; pos < TOTAL; pos += BLOCK) {
        const float *ptr[1] = {in + pos};
        rubberband_process(s, ptr, BLOCK, 0);
        int avail;
        while ((avail = rubberband_available(s)) > 0) {
            if (avail > 4096) avail = 4096;
            float *optr[1] = {tmp};
            int got = (int)rubberband_retrieve(s, optr, (unsigned)avail);
            memcpy(out_fifo + produced, tmp, sizeof(float) * (size_t)got);
            produced += got;
        }
        /* The host plays BLOCK frames now: from the fifo if there, else silence. Output
           produced late is played late, so host time = max(written, index in stream). */
        for (int i = 0; i < BLOCK; i++) {
            int t = pos + i; /* host playback time of this frame */
            int k = written; /* next stretcher frame to play */
            if (k < produced) {
                if (out_onset < 0 && fabsf(out_fifo[k]) > 0.05f) out_onset = t;
                written++;
            }
        }
    }
    printf("%s %u %d\n", name, rubberband_get_start_delay(s), out_onset < 0 ? -1 : out_onset - ONSET);
    rubberband_delete(s);
}

int main(void) {
    measure("R2", RubberBandOptionProcessRealTime | RubberBandOptionEngineFaster);
    measure("R3", RubberBandOptionProcessRealTime | RubberBandOptionEngineFiner);
    return 0;
}
