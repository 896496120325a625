/*
 * envd-entropy: mixes bytes read from stdin into the kernel's entropy pool
 * and reseeds the kernel's random number generator at once; with `--time`,
 * also sets the system clock first (one process for both: a process start
 * costs ~100 ms in an emulated guest, and /init runs after every restore).
 *
 *   envd-entropy [--time UNIX_MS] < bytes   (0 to 512 bytes, at least 1
 *                                            without --time; root)
 *
 * Why: clones restored from one snapshot start with the same RNG state. A
 * plain write to /dev/urandom mixes bytes into the input pool but the
 * generator keeps its key until its next scheduled reseed (up to a minute
 * later on Linux 5.18+), so clones would go on producing the same bytes.
 * RNDADDENTROPY mixes (and credits) the host's bytes, RNDRESEEDCRNG makes
 * the generator take a new key from the pool now. envd runs this on every
 * /init that carries `entropy`.
 *
 * Exit status 0 on success, 1 with a message on stderr otherwise. Built
 * static so it runs in any image.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_BYTES 512

/* Sets CLOCK_REALTIME to `arg` milliseconds since the epoch. */
static int set_clock(const char *arg) {
  char *end = NULL;
  errno = 0;
  long long ms = strtoll(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || ms < 0) {
    fprintf(stderr, "envd-entropy: --time: not milliseconds: %s\n", arg);
    return 1;
  }
  struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
  if (clock_settime(CLOCK_REALTIME, &ts) != 0) {
    perror("envd-entropy: clock_settime");
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int timed = 0;
  if (argc == 3 && strcmp(argv[1], "--time") == 0) {
    if (set_clock(argv[2]) != 0) return 1;
    timed = 1;
  } else if (argc != 1) {
    fprintf(stderr, "usage: envd-entropy [--time UNIX_MS] < bytes\n");
    return 2;
  }
  struct {
    struct rand_pool_info info;
    unsigned char buf[MAX_BYTES];
  } req;
  size_t got = 0;
  while (got < MAX_BYTES) {
    ssize_t n = read(STDIN_FILENO, req.buf + got, MAX_BYTES - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      perror("envd-entropy: read");
      return 1;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  if (got == 0) {
    if (timed) return 0;
    fprintf(stderr, "envd-entropy: no bytes on stdin\n");
    return 1;
  }
  int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    perror("envd-entropy: /dev/urandom");
    return 1;
  }
  req.info.entropy_count = (int)(got * 8);
  req.info.buf_size = (int)got;
  if (ioctl(fd, RNDADDENTROPY, &req.info) != 0) {
    perror("envd-entropy: RNDADDENTROPY");
    return 1;
  }
  if (ioctl(fd, RNDRESEEDCRNG) != 0) {
    perror("envd-entropy: RNDRESEEDCRNG");
    return 1;
  }
  close(fd);
  return 0;
}
