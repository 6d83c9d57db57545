// Floor of this machine's disk: what one durable commit costs, timed in C.
//   barrier DIRECTORY N FRAMES  N times: append FRAMES frames of 4,120 bytes (a WAL frame: a
//                               24-byte header and a 4 KiB page) to a file in DIRECTORY, then
//                               fdatasync(2) it; prints nanoseconds per append+fdatasync, one
//                               line each
// orchd's `--sync always` barrier is one fdatasync of the WAL after a commit's frames: this is
// that barrier without SQLite or orchd.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: barrier DIRECTORY N FRAMES\n"); return 64; }
    int n = atoi(argv[2]), frames = atoi(argv[3]);
    char path[4096];
    snprintf(path, sizeof path, "%s/barrier-floor.wal", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) { perror(path); return 1; }
    static char frame[4120];
    memset(frame, 0x5a, sizeof frame);
    off_t offset = 0;
    for (int i = 0; i < n; i++) {
        long long start = now_ns();
        for (int f = 0; f < frames; f++, offset += sizeof frame) {
            if (pwrite(fd, frame, sizeof frame, offset) != (ssize_t)sizeof frame) { perror("pwrite"); return 1; }
        }
        if (fdatasync(fd) != 0) { perror("fdatasync"); return 1; }
        printf("%lld\n", now_ns() - start);
    }
    close(fd);
    unlink(path);
    return 0;
}
