/*
 * aenv-private-ram: an LD_PRELOAD interposer that makes QEMU map one guest-RAM
 * file copy-on-write while QEMU believes it is shared.
 *
 * Why (docs/snapshots.md has the measurements): QEMU 7.2 leaves guest RAM out
 * of a migration stream (x-ignore-shared) only when the RAM block is
 * share=on, and its discard path (virtio-balloon free-page reporting) punches
 * holes into a share=off RAM file, which would destroy a snapshot that other
 * VMs map. A restored aenv VM therefore runs with
 *   -object memory-backend-file,mem-path=<base>,share=on
 * and this library, given AENV_PRIVATE_RAM=<base>, changes exactly three
 * things for that one file:
 *   - open: the file is opened read-only (never O_CREAT/O_TRUNC), so nothing
 *     QEMU does through its descriptor can modify it;
 *   - mmap: MAP_SHARED becomes MAP_PRIVATE: guest writes land in anonymous
 *     copy-on-write pages, which the host finds in /proc/<pid>/pagemap;
 *   - fallocate(PUNCH_HOLE) becomes madvise(MADV_DONTNEED) on the mapping,
 *     which drops the private copy (the memory goes back to the host) and
 *     leaves the file alone; any other fallocate or an ftruncate that changes
 *     the size fails with EPERM.
 * Every other file and call passes through unchanged. Without the variable
 * the library does nothing.
 *
 * Built by @aenv/vmm with `cc -shared -fPIC -O2` (see private-ram-helper.ts).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static const char *target;
static dev_t target_dev;
static ino_t target_ino;
static off_t target_size;
/* the (single) mapping of the target, for translating hole punches */
static char *map_base;
static size_t map_len;
static off_t map_off;

__attribute__((constructor)) static void aenv_private_ram_init(void) {
  struct stat st;
  const char *path = getenv("AENV_PRIVATE_RAM");
  if (path == NULL || path[0] == '\0' || stat(path, &st) != 0) return;
  target = path;
  target_dev = st.st_dev;
  target_ino = st.st_ino;
  target_size = st.st_size;
}

static int is_target_fd(int fd) {
  struct stat st;
  return target != NULL && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == target_dev &&
         st.st_ino == target_ino;
}

static int read_only_flags(const char *path, int flags) {
  if (target != NULL && path != NULL && strcmp(path, target) == 0)
    return (flags & ~(O_ACCMODE | O_CREAT | O_TRUNC | O_EXCL)) | O_RDONLY;
  return flags;
}

#define REAL(name)                               \
  static __typeof__(name) *real_##name;          \
  if (real_##name == NULL) real_##name = dlsym(RTLD_NEXT, #name)

#define MODE_ARG(flags, mode)                                      \
  mode_t mode = 0;                                                 \
  if ((flags) & (O_CREAT | __O_TMPFILE)) {                         \
    va_list ap;                                                    \
    va_start(ap, flags);                                           \
    mode = va_arg(ap, mode_t);                                     \
    va_end(ap);                                                    \
  }

int open(const char *path, int flags, ...) {
  REAL(open);
  MODE_ARG(flags, mode);
  return real_open(path, read_only_flags(path, flags), mode);
}

int open64(const char *path, int flags, ...) {
  REAL(open64);
  MODE_ARG(flags, mode);
  return real_open64(path, read_only_flags(path, flags), mode);
}

int openat(int dir, const char *path, int flags, ...) {
  REAL(openat);
  MODE_ARG(flags, mode);
  return real_openat(dir, path, read_only_flags(path, flags), mode);
}

int openat64(int dir, const char *path, int flags, ...) {
  REAL(openat64);
  MODE_ARG(flags, mode);
  return real_openat64(dir, path, read_only_flags(path, flags), mode);
}

/* the _FORTIFY_SOURCE entry points */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dir, const char *path, int flags);
int __openat64_2(int dir, const char *path, int flags);

int __open_2(const char *path, int flags) {
  REAL(__open_2);
  return real___open_2(path, read_only_flags(path, flags));
}

int __open64_2(const char *path, int flags) {
  REAL(__open64_2);
  return real___open64_2(path, read_only_flags(path, flags));
}

int __openat_2(int dir, const char *path, int flags) {
  REAL(__openat_2);
  return real___openat_2(dir, path, read_only_flags(path, flags));
}

int __openat64_2(int dir, const char *path, int flags) {
  REAL(__openat64_2);
  return real___openat64_2(dir, path, read_only_flags(path, flags));
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  REAL(mmap64);
  int hit = (flags & MAP_TYPE) != MAP_PRIVATE && is_target_fd(fd);
  if (hit) flags = (flags & ~(MAP_TYPE | MAP_SYNC)) | MAP_PRIVATE;
  void *mapped = real_mmap64(addr, len, prot, flags, fd, off);
  if (hit && mapped != MAP_FAILED) {
    map_base = mapped;
    map_len = len;
    map_off = off;
  }
  return mapped;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap64(addr, len, prot, flags, fd, off);
}

int fallocate64(int fd, int mode, off_t off, off_t len) {
  REAL(fallocate64);
  if (!is_target_fd(fd)) return real_fallocate64(fd, mode, off, len);
  if ((mode & FALLOC_FL_PUNCH_HOLE) && map_base != NULL && off >= map_off && len >= 0 &&
      off + len <= map_off + (off_t)map_len)
    return madvise(map_base + (off - map_off), (size_t)len, MADV_DONTNEED);
  errno = EPERM;
  return -1;
}

int fallocate(int fd, int mode, off_t off, off_t len) { return fallocate64(fd, mode, off, len); }

int ftruncate64(int fd, off_t len) {
  REAL(ftruncate64);
  if (!is_target_fd(fd)) return real_ftruncate64(fd, len);
  if (len == target_size) return 0;
  errno = EPERM;
  return -1;
}

int ftruncate(int fd, off_t len) { return ftruncate64(fd, len); }
