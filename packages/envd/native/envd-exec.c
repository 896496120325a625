/*
 * envd-exec: runs a command as another user, with that user's supplementary
 * groups. envd (root) starts pipe-mode processes through it because Node's
 * spawn options can set uid/gid but drop every supplementary group.
 *
 *   envd-exec UID GID GROUPS -- COMMAND [ARG...]
 *
 * GROUPS is a comma-separated list of gids (may be empty). Exit status 126
 * when the switch fails, 127 when COMMAND cannot be executed, else the
 * command's own. Built static so it runs in any image (glibc, musl, none).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_id(const char *text, unsigned long *out) {
  char *end = NULL;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value > 0xfffffffeUL) return -1;
  *out = value;
  return 0;
}

int main(int argc, char **argv) {
  unsigned long uid, gid, id;
  if (argc < 6 || strcmp(argv[4], "--") != 0 || parse_id(argv[1], &uid) != 0 || parse_id(argv[2], &gid) != 0) {
    fprintf(stderr, "usage: envd-exec UID GID GROUPS -- COMMAND [ARG...]\n");
    return 126;
  }
  size_t count = 0;
  gid_t *groups = calloc(strlen(argv[3]) / 2 + 2, sizeof(gid_t));
  if (groups == NULL) return 126;
  for (char *tok = strtok(argv[3], ","); tok != NULL; tok = strtok(NULL, ",")) {
    if (parse_id(tok, &id) != 0) {
      fprintf(stderr, "envd-exec: bad group id '%s'\n", tok);
      return 126;
    }
    groups[count++] = (gid_t)id;
  }
  if (setgroups(count, groups) != 0 || setgid((gid_t)gid) != 0 || setuid((uid_t)uid) != 0) {
    perror("envd-exec: cannot switch user");
    return 126;
  }
  execvp(argv[5], &argv[5]);
  fprintf(stderr, "envd-exec: %s: %s\n", argv[5], strerror(errno));
  return 127;
}
