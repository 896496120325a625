/*
 * aenv-init: PID 1 of an aenv guest after the initramfs switched root.
 *
 * Usage: aenv-init PROGRAM [ARGS...]
 *
 * Contract:
 * - runs PROGRAM (envd) as a supervised service: in its own session, with a
 *   fixed environment, stdio on the console; when it exits it is started
 *   again after a back-off (100 ms doubling to 5 s, reset once a run lasted
 *   10 s);
 * - reaps every child, including orphans reparented to PID 1, so no zombie
 *   accumulates (a shell as PID 1 does not do this reliably);
 * - on SIGTERM, SIGINT (Ctrl-Alt-Del) or SIGPWR: TERM to every process, KILL
 *   after 3 s, sync, power off (reboot if power-off returns; the VMM runs
 *   with -no-reboot, so either ends the VM);
 * - never exits (PID 1 exiting panics the kernel).
 * Prints "aenv-init: started <program> (pid N)" on each start.
 *
 * Built by @aenv/guest with `gcc -static -O2 -s`, so it runs in any image.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define STABLE_RUN_MS 10000
#define SHUTDOWN_GRACE_MS 3000

static char *const service_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=/root",
    "USER=root",
    "LANG=C.UTF-8",
    "AENV_TOOLS_DIR=/run/aenv/tools",
    NULL,
};

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pid_t start_service(char **argv, const sigset_t *child_mask) {
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "aenv-init: fork: %s\n", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, child_mask, NULL);
    setsid();
    execve(argv[0], argv, service_env);
    fprintf(stderr, "aenv-init: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  printf("aenv-init: started %s (pid %d)\n", argv[0], (int)pid);
  fflush(stdout);
  return pid;
}

/* Waits for a signal in `set` for at most `ms` (forever if ms < 0); 0 on timeout. */
static int wait_signal(const sigset_t *set, long long ms) {
  if (ms < 0) return sigwaitinfo(set, NULL);
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  int sig = sigtimedwait(set, NULL, &ts);
  return (sig < 0 && errno == EAGAIN) ? 0 : sig;
}

static void reap_all(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

static void shutdown_guest(const sigset_t *set) {
  printf("aenv-init: shutting down\n");
  fflush(stdout);
  kill(-1, SIGTERM);
  long long deadline = now_ms() + SHUTDOWN_GRACE_MS;
  for (;;) {
    reap_all();
    if (kill(-1, 0) < 0 && errno == ESRCH) break; /* nothing left */
    long long left = deadline - now_ms();
    if (left <= 0) break;
    wait_signal(set, left < 100 ? left : 100);
  }
  kill(-1, SIGKILL);
  reap_all();
  sync();
  reboot(RB_POWER_OFF);
  reboot(RB_AUTOBOOT);
  for (;;) pause();
}

int main(int argc, char **argv) {
  sigset_t all, orig;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &orig);
  if (chdir("/") != 0) perror("aenv-init: chdir /");
  if (getpid() == 1) reboot(RB_DISABLE_CAD); /* Ctrl-Alt-Del becomes SIGINT */

  char **service = argc > 1 ? argv + 1 : NULL;
  if (service == NULL) fprintf(stderr, "aenv-init: no service given; only reaping\n");
  pid_t svc = service ? start_service(service, &orig) : -1;
  long long started = now_ms(), restart_at = -1, backoff = BACKOFF_MIN_MS;
  if (service && svc < 0) restart_at = now_ms() + backoff;

  for (;;) {
    long long now = now_ms();
    long long wait_ms = restart_at < 0 ? -1 : (restart_at > now ? restart_at - now : 0);
    int sig = wait_signal(&all, wait_ms);
    if (sig == 0) { /* back-off elapsed */
      svc = start_service(service, &orig);
      started = now_ms();
      restart_at = svc < 0 ? now_ms() + BACKOFF_MAX_MS : -1;
      continue;
    }
    if (sig == SIGTERM || sig == SIGINT || sig == SIGPWR) shutdown_guest(&all);
    if (sig != SIGCHLD) continue;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != svc) continue;
      if (now_ms() - started >= STABLE_RUN_MS) backoff = BACKOFF_MIN_MS;
      long long delay = backoff;
      backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
      printf("aenv-init: %s exited (%s %d), restarting in %lld ms\n", service[0],
             WIFSIGNALED(status) ? "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
             delay);
      fflush(stdout);
      svc = -1;
      restart_at = now_ms() + delay;
    }
  }
}
