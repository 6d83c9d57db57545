// Floor of this machine: posix_spawn + wait of a program, timed in C.
//   spawn seq N PROGRAM [ARG]  N spawns one after another; prints nanoseconds per spawn+wait
//   spawn par N K PROGRAM N spawns with K in flight; prints total nanoseconds, then the
//                         children's CPU (user + system, getrusage(2)) per spawn in µs
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// The child's standard output goes to /dev/null (orchctl --version prints), as for every
// program here, so the spawner's own output is only its timings.
static posix_spawn_file_actions_t quiet;

static pid_t start(const char *program, const char *arg) {
    pid_t pid;
    char *argv[] = {(char *)program, (char *)arg, NULL};
    int rc = posix_spawn(&pid, program, &quiet, NULL, argv, environ);
    if (rc != 0) { fprintf(stderr, "posix_spawn %s: %s\n", program, strerror(rc)); exit(1); }
    return pid;
}

int main(int argc, char **argv) {
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "seq") == 0) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            long long t0 = now_ns();
            pid_t pid = start(argv[3], argc == 5 ? argv[4] : NULL);
            int status;
            waitpid(pid, &status, 0);
            printf("%lld\n", now_ns() - t0);
        }
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "par") == 0) {
        int n = atoi(argv[2]), k = atoi(argv[3]), started = 0, running = 0;
        long long t0 = now_ns();
        while (started < n || running > 0) {
            while (running < k && started < n) { start(argv[4], NULL); started++; running++; }
            int status;
            if (wait(&status) > 0) running--;
        }
        long long elapsed = now_ns() - t0;
        struct rusage children;
        getrusage(RUSAGE_CHILDREN, &children);
        double cpu_us = (children.ru_utime.tv_sec + children.ru_stime.tv_sec) * 1e6
            + children.ru_utime.tv_usec + children.ru_stime.tv_usec;
        printf("%lld %.1f\n", elapsed, cpu_us / n);
        return 0;
    }
    fprintf(stderr, "usage: spawn seq N PROGRAM [ARG] | spawn par N K PROGRAM\n");
    return 64;
}
