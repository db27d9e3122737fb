// A probe of snd-aloop as a clock, for Tests/e2e/aloop-clock.sh (built by it with gcc,
// run in the VM): captures hw:Loopback,1,1 and plays hw:Loopback,0,0 in one process,
// 1024-frame periods; at each capture wake-up prints "NANOSECONDS CAPTURED PLAYED":
// the capture card's position and the playback card's (written minus queued) at the same
// instant, and CLOCK_MONOTONIC. Usage: aloop-pair SECONDS
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static snd_pcm_t *open_card(const char *name, int playback) {
    snd_pcm_t *h;
    int e = snd_pcm_open(&h, name, playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE, 0);
    if (e >= 0) e = snd_pcm_set_params(h, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 0, 4LL * 1024 * 1000000 / 48000);
    if (e < 0) {
        fprintf(stderr, "%s: %s\n", name, snd_strerror(e));
        exit(1);
    }
    return h;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    snd_pcm_t *cap = open_card("hw:Loopback,1,1", 0), *play = open_card("hw:Loopback,0,0", 1);
    snd_pcm_uframes_t buffer, period, cap_buffer, cap_period;
    snd_pcm_get_params(play, &buffer, &period);
    snd_pcm_get_params(cap, &cap_buffer, &cap_period);
    static short frames[8192 * 2];
    long long written = snd_pcm_writei(play, frames, buffer), captured = 0;
    snd_pcm_start(cap);
    snd_pcm_start(play);
    long long t0 = now_ns();
    while (now_ns() - t0 < seconds * 1e9) {
        snd_pcm_wait(cap, 1000);
        long long t = now_ns();
        snd_pcm_sframes_t ca = snd_pcm_avail_update(cap), pa = snd_pcm_avail_update(play);
        if (ca < 0 || pa < 0) {
            printf("%lld xrun\n", t - t0);
            return 2;
        }
        printf("%lld %lld %lld\n", t - t0, captured + ca, written - (long long)(buffer - pa));
        while (ca >= (snd_pcm_sframes_t)cap_period) {
            snd_pcm_sframes_t n = snd_pcm_readi(cap, frames, cap_period);
            if (n < 0) break;
            captured += n;
            ca -= n;
        }
        while (pa > 0) {
            snd_pcm_sframes_t n = snd_pcm_writei(play, frames, pa > 4096 ? 4096 : pa);
            if (n < 0) break;
            written += n;
            pa -= n;
        }
    }
    return 0;
}
