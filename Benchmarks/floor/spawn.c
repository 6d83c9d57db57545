// Floor of this machine: posix_spawn + wait of a program, timed in C.
//   spawn seq N PROGRAM [ARG]  N spawns one after another; prints nanoseconds per spawn+wait
//   spawn par N K PROGRAM N spawns with K in flight; prints total nanoseconds, then the
//                         children's CPU (user + system, getrusage(2)) per spawn in µs, then
//                         the spawner's own CPU per spawn in µs: user, system
//   spawn cgpar N K PROGRAM CGROUP
//                         the same, each child started in a new cgroup under CGROUP (a
//                         writable cgroup2 directory) as orchd starts a job: mkdir(2), then
//                         clone3(2) with CLONE_INTO_CGROUP and CLONE_PIDFD, then waitid(2)
//                         on the pidfd and rmdir(2) once it was reaped
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

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

static double microseconds(struct timeval t) { return t.tv_sec * 1e6 + t.tv_usec; }

// The children's CPU per spawn, then the spawner's own (user, system), in µs.
static void print_cpu(long long elapsed, int n) {
    struct rusage children, self;
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_SELF, &self);
    printf("%lld %.1f %.1f %.1f\n", elapsed, (microseconds(children.ru_utime) + microseconds(children.ru_stime)) / n,
           microseconds(self.ru_utime) / n, microseconds(self.ru_stime) / n);
}

// One child in its own new cgroup: the cgroup's path and the child's pidfd.
struct cgchild { char path[4096]; int pidfd; };

static void cgstart(struct cgchild *child, const char *parent, int index, const char *program) {
    snprintf(child->path, sizeof(child->path), "%s/floor-%d", parent, index);
    if (mkdir(child->path, 0755) != 0) { fprintf(stderr, "mkdir %s: %s\n", child->path, strerror(errno)); exit(1); }
    int group = open(child->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (group < 0) { fprintf(stderr, "open %s: %s\n", child->path, strerror(errno)); exit(1); }
    struct clone_args args;
    memset(&args, 0, sizeof(args));
    args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
    args.pidfd = (unsigned long long)(unsigned long)&child->pidfd;
    args.cgroup = (unsigned long long)group;
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof(args));
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        char *argv[] = {(char *)program, NULL};
        execve(program, argv, environ);
        _exit(127);
    }
    if (pid < 0) { fprintf(stderr, "clone3: %s\n", strerror(errno)); exit(1); }
    close(group);
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
        print_cpu(now_ns() - t0, n);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "cgpar") == 0) {
        int n = atoi(argv[2]), k = atoi(argv[3]), started = 0, running = 0;
        if (k < 1 || k > 64) { fprintf(stderr, "K must be 1 to 64\n"); return 64; }
        struct cgchild children[64];
        struct pollfd polls[64];
        long long t0 = now_ns();
        while (started < n || running > 0) {
            while (running < k && started < n) { cgstart(&children[running], argv[5], started, argv[4]); started++; running++; }
            for (int i = 0; i < running; i++) polls[i] = (struct pollfd){.fd = children[i].pidfd, .events = POLLIN};
            if (poll(polls, running, -1) < 0 && errno != EINTR) { perror("poll"); return 1; }
            for (int i = running - 1; i >= 0; i--) {
                if (!(polls[i].revents & POLLIN)) continue;
                siginfo_t info;
                if (waitid((idtype_t)P_PIDFD, (id_t)children[i].pidfd, &info, WEXITED) != 0) { perror("waitid"); return 1; }
                close(children[i].pidfd);
                if (rmdir(children[i].path) != 0) { fprintf(stderr, "rmdir %s: %s\n", children[i].path, strerror(errno)); return 1; }
                children[i] = children[--running];
            }
        }
        print_cpu(now_ns() - t0, n);
        return 0;
    }
    fprintf(stderr, "usage: spawn seq N PROGRAM [ARG] | spawn par N K PROGRAM | spawn cgpar N K PROGRAM CGROUP\n");
    return 64;
}
