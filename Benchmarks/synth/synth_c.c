/* C reference for Benchmarks/synth: libfluidsynth driven directly, the way a C program
 * would: its own MIDI file player (sample timing), fluid_synth_write_float in 64-frame
 * blocks into memory, effects off, threadsafe API off. Prints the CPU time of the render
 * loop and of the SoundFont load.
 *
 * Usage: synth_c FONT.sf2 SONG.mid SECONDS            (render)
 *        synth_c --load FONT.sf2                      (load time only)
 *        synth_c --first-block FONT.sf2               (start, load, one block, exit)
 */
#include <fluidsynth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

static double cpu_now(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}
static double wall_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void quiet(int level, const char *message, void *data) { (void)level; (void)message; (void)data; }

int main(int argc, char **argv) {
    for (int l = FLUID_PANIC; l <= FLUID_DBG; l++) fluid_set_log_function(l, quiet, NULL);
    int load_only = argc == 3 && strcmp(argv[1], "--load") == 0;
    int first_block = argc == 3 && strcmp(argv[1], "--first-block") == 0;
    if (first_block) load_only = 1;
    if (!load_only && argc != 4) {
        fprintf(stderr, "usage: synth_c FONT SONG SECONDS | synth_c --load FONT\n");
        return 2;
    }
    const char *font = load_only ? argv[2] : argv[1];
    fluid_settings_t *s = new_fluid_settings();
    fluid_settings_setint(s, "synth.threadsafe-api", 0);
    fluid_settings_setint(s, "synth.cpu-cores", 1);
    fluid_settings_setnum(s, "synth.sample-rate", 48000);
    fluid_settings_setint(s, "synth.reverb.active", 0);
    fluid_settings_setint(s, "synth.chorus.active", 0);
    fluid_settings_setstr(s, "player.timing-source", "sample");
    fluid_synth_t *synth = new_fluid_synth(s);
    double c0 = cpu_now(), w0 = wall_now();
    if (fluid_synth_sfload(synth, font, 1) == FLUID_FAILED) { fprintf(stderr, "cannot load %s\n", font); return 1; }
    double load_cpu = cpu_now() - c0, load_wall = wall_now() - w0;
    if (first_block) {
        float l[64], r[64];
        fluid_synth_noteon(synth, 0, 60, 100);
        fluid_synth_write_float(synth, 64, l, 0, 1, r, 0, 1);
        return l[63] == 0;
    }
    if (load_only) {
        printf("load_cpu %.6f load_wall %.6f\n", load_cpu, load_wall);
        return 0;
    }
    fluid_player_t *player = new_fluid_player(synth);
    if (fluid_player_add(player, argv[2]) != FLUID_OK) { fprintf(stderr, "cannot read %s\n", argv[2]); return 1; }
    fluid_player_play(player);
    long frames = (long)(atof(argv[3]) * 48000);
    float *left = malloc(64 * sizeof(float)), *right = malloc(64 * sizeof(float));
    double energy = 0;
    double r0 = cpu_now();
    for (long done = 0; done < frames; done += 64) {
        fluid_synth_write_float(synth, 64, left, 0, 1, right, 0, 1);
        energy += left[0] * left[0] + right[63] * right[63];
    }
    double render_cpu = cpu_now() - r0;
    printf("render_cpu %.6f frames %ld load_cpu %.6f check %.3g\n", render_cpu, frames, load_cpu, energy);
    delete_fluid_player(player);
    delete_fluid_synth(synth);
    delete_fluid_settings(s);
    free(left);
    free(right);
    return 0;
}
