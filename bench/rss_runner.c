/*
 * rss_runner REPORT CMD [ARG...]: run CMD, then write
 * "<wait status> <ru_maxrss KiB> <user s> <sys s> <wall s>" to REPORT.
 *
 * Why not just os.wait4() from Python: Linux folds the pre-exec memory of a
 * child into its ru_maxrss, and a child spawned from the benchmark inherits
 * the whole Python process (tens of MB).  readelf's real peak is only a few
 * MB, so it must be started from a tiny process like this one.
 * Built on demand by bench/_common.py.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
    return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    struct rusage ru;
    int status;
    pid_t pid;
    FILE *report;

    if (argc < 3) {
        fprintf(stderr, "usage: %s REPORT CMD [ARG...]\n", argv[0]);
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("wait4");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    report = fopen(argv[1], "w");
    if (!report) {
        perror(argv[1]);
        return 2;
    }
    fprintf(report, "%d %ld %.6f %.6f %.9f\n", status, ru.ru_maxrss, seconds(ru.ru_utime),
            seconds(ru.ru_stime), (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return fclose(report) == 0 ? 0 : 2;
}
