/*
 * aenv-vmm-jail: puts the calling process in a VMM jail, then execs the VMM.
 *
 * Run as root by the aenv daemon (never setuid); the exec'd program keeps
 * this process's pid, so the daemon's child is the VMM itself. Steps, in
 * order (any failure prints "aenv-vmm-jail: <step>: <reason>" and exits
 * 127 before the VMM runs):
 *   1. --netns PATH       setns into that network namespace;
 *   2. --cgroup FILE      write our pid into each cgroup.procs file, so the
 *                         VMM is limited from its first instruction;
 *   3. --tap NAME:FD      open the tap NAME of that namespace (as root, so
 *                         /dev/net/tun can stay root-only) and leave it
 *                         open on descriptor FD for `-netdev tap,fd=FD`;
 *   4. a private mount namespace (nothing propagates back to the host);
 *      --hide DIR         covers DIR with an empty read-only tmpfs;
 *      --bind PATH / --bind-ro PATH
 *                         mounts PATH (opened before anything was hidden)
 *                         back at the same place, read-only for --bind-ro;
 *   5. --groups G --gid G --uid U: supplementary groups, then gid, then uid
 *      (all of real, effective and saved), after the bounding set was
 *      emptied; then no_new_privs and no inheritable capabilities;
 *   6. --pdeathsig: SIGKILL when the daemon dies (set after the uid change,
 *      which clears it);
 *   7. chdir("/") and exec the program after "--".
 * The namespace dies with the VMM: no mount outlives it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_ITEMS 64

struct bind {
  const char *path;
  int readonly;
  int fd;
};

static void die(const char *step, const char *what) {
  fprintf(stderr, "aenv-vmm-jail: %s%s%s: %s\n", step, what ? " " : "", what ? what : "",
          strerror(errno));
  exit(127);
}

static void usage(const char *why) {
  fprintf(stderr, "aenv-vmm-jail: %s\n", why);
  exit(127);
}

static long number(const char *s) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0) usage("bad number");
  return v;
}

static void enter_netns(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open netns", path);
  if (setns(fd, CLONE_NEWNET) != 0) die("setns", path);
  close(fd);
}

static void join_cgroup(const char *procs) {
  char pid[32];
  int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  int fd = open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("open cgroup", procs);
  if (write(fd, pid, (size_t)n) != n) die("join cgroup", procs);
  close(fd);
}

static void open_tap(const char *spec) {
  const char *colon = strrchr(spec, ':');
  if (colon == NULL || (size_t)(colon - spec) >= IFNAMSIZ) usage("--tap wants NAME:FD");
  int target = (int)number(colon + 1);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  memcpy(ifr.ifr_name, spec, (size_t)(colon - spec));
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
  int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) die("open", "/dev/net/tun");
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) die("attach tap", ifr.ifr_name);
  if (fd == target) {
    if (fcntl(fd, F_SETFD, 0) != 0) die("keep tap open", NULL);
    return;
  }
  if (dup2(fd, target) != target) die("dup tap", NULL); /* the copy has no CLOEXEC */
  close(fd);
}

static void mkdirs(char *path) {
  for (char *p = path + 1; *p != '\0'; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) die("mkdir", path);
    *p = '/';
  }
}

static void mount_back(struct bind *b) {
  struct stat st;
  char src[64], *path = strdup(b->path);
  if (path == NULL) die("strdup", NULL);
  if (fstat(b->fd, &st) != 0) die("stat", b->path);
  mkdirs(path);
  free(path);
  if (S_ISDIR(st.st_mode)) {
    if (mkdir(b->path, 0755) != 0 && errno != EEXIST) die("mkdir", b->path);
  } else {
    int fd = open(b->path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno != ENXIO && errno != EEXIST) die("mountpoint", b->path);
    if (fd >= 0) close(fd);
  }
  snprintf(src, sizeof src, "/proc/self/fd/%d", b->fd);
  if (mount(src, b->path, NULL, MS_BIND | MS_REC, NULL) != 0) die("bind", b->path);
  unsigned long ro = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (b->readonly ? MS_RDONLY : 0);
  if (mount(NULL, b->path, NULL, ro, NULL) != 0) die("remount", b->path);
}

/* Whether `path` is `dir` or lies below it. */
static int within(const char *path, const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* Decodes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s) {
  char *out = s;
  for (char *in = s; *in; in++, out++) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] && in[3]) {
      *out = (char)(((in[1] - '0') << 6) | ((in[2] - '0') << 3) | (in[3] - '0'));
      in += 3;
    } else {
      *out = *in;
    }
  }
  *out = '\0';
}

/*
 * Detaches, in this new namespace, every mount below a hidden directory that
 * holds none of the bound-back files. The namespace starts as a copy of the
 * daemon's: without this, a filesystem the daemon loop-mounts for a moment
 * (an image being converted) stays mounted here for the VM's whole life, so
 * the daemon's unmount neither releases nor flushes it, and the image file
 * it then reads is stale.
 */
static void detach_hidden_mounts(const char **hide, int nhide, struct bind *binds, int nbinds) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL) die("open", "/proc/self/mountinfo");
  static char points[1024][512];
  int n = 0;
  char line[4096];
  while (n < 1024 && fgets(line, sizeof line, f) != NULL) {
    char *field = strtok(line, " ");
    for (int k = 0; k < 4 && field != NULL; k++) field = strtok(NULL, " ");
    if (field == NULL || strlen(field) >= sizeof points[0]) continue;
    unescape(field);
    int hidden = 0, needed = 0;
    for (int i = 0; i < nhide; i++) hidden |= within(field, hide[i]) && strcmp(field, "/") != 0;
    for (int i = 0; i < nbinds; i++) needed |= within(binds[i].path, field);
    if (hidden && !needed) snprintf(points[n++], sizeof points[0], "%s", field);
  }
  fclose(f);
  /* deepest first: mountinfo lists parents before children */
  for (int i = n - 1; i >= 0; i--) umount2(points[i], MNT_DETACH);
}

static void build_mounts(const char **hide, int nhide, struct bind *binds, int nbinds) {
  if (unshare(CLONE_NEWNS) != 0) die("unshare", "mount namespace");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("make private", "/");
  detach_hidden_mounts(hide, nhide, binds, nbinds);
  for (int i = 0; i < nbinds; i++) {
    binds[i].fd = open(binds[i].path, O_PATH | O_CLOEXEC);
    if (binds[i].fd < 0) die("open", binds[i].path);
  }
  for (int i = 0; i < nhide; i++) {
    struct stat st;
    if (stat(hide[i], &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (mount("tmpfs", hide[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") != 0)
      die("hide", hide[i]);
  }
  for (int i = 0; i < nbinds; i++) mount_back(&binds[i]);
  for (int i = 0; i < nbinds; i++) close(binds[i].fd);
  for (int i = 0; i < nhide; i++) {
    /* empty and read-only once the binds below it are in place */
    struct stat st;
    if (stat(hide[i], &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    mount(NULL, hide[i], NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  }
}

static void drop_privileges(long uid, long gid, const gid_t *groups, int ngroups) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("drop bounding cap", NULL);
  }
  if (setgroups((size_t)ngroups, groups) != 0) die("setgroups", NULL);
  if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) die("setresgid", NULL);
  if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) die("setresuid", NULL);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs", NULL);
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) die("capset", NULL);
}

int main(int argc, char **argv) {
  const char *netns = NULL, *tap = NULL, *hide[MAX_ITEMS], *cgroups[MAX_ITEMS];
  struct bind binds[MAX_ITEMS];
  gid_t groups[MAX_ITEMS];
  int nhide = 0, nbinds = 0, ncg = 0, ngroups = 0, pdeath = 0, i = 1;
  long uid = -1, gid = -1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    const char *opt = argv[i];
    if (strcmp(opt, "--pdeathsig") == 0) {
      pdeath = 1;
      continue;
    }
    if (i + 1 >= argc) usage("option without a value");
    const char *val = argv[++i];
    if (nhide >= MAX_ITEMS || nbinds >= MAX_ITEMS || ncg >= MAX_ITEMS || ngroups >= MAX_ITEMS)
      usage("too many options");
    if (strcmp(opt, "--netns") == 0) netns = val;
    else if (strcmp(opt, "--tap") == 0) tap = val;
    else if (strcmp(opt, "--cgroup") == 0) cgroups[ncg++] = val;
    else if (strcmp(opt, "--hide") == 0) hide[nhide++] = val;
    else if (strcmp(opt, "--bind") == 0) binds[nbinds++] = (struct bind){val, 0, -1};
    else if (strcmp(opt, "--bind-ro") == 0) binds[nbinds++] = (struct bind){val, 1, -1};
    else if (strcmp(opt, "--uid") == 0) uid = number(val);
    else if (strcmp(opt, "--gid") == 0) gid = number(val);
    else if (strcmp(opt, "--groups") == 0) groups[ngroups++] = (gid_t)number(val);
    else usage("unknown option");
  }
  if (i + 1 >= argc) usage("no program after --");
  if (uid <= 0 || gid <= 0) usage("--uid and --gid of a non-root user are required");
  pid_t parent = getppid();
  if (netns != NULL) enter_netns(netns);
  for (int c = 0; c < ncg; c++) join_cgroup(cgroups[c]);
  if (tap != NULL) open_tap(tap);
  build_mounts(hide, nhide, binds, nbinds);
  drop_privileges(uid, gid, groups, ngroups);
  if (pdeath) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die("pdeathsig", NULL);
    if (getppid() != parent) usage("the daemon is gone");
  }
  if (chdir("/") != 0) die("chdir", "/");
  execvp(argv[i + 1], &argv[i + 1]);
  die("exec", argv[i + 1]);
  return 127;
}
