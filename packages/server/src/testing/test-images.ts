/**
 * Test images, built here from scratch into one OCI image layout with
 * umoci (which computes digests, diff_ids and manifests; the layer tars are
 * made with GNU tar, so whiteouts are exactly what the test wants):
 *
 * - `base`: a busybox-only root (static busybox and its applets), users,
 *   files with owners and modes (setuid, sticky, 0640 of uid 1000), a hard
 *   link, a symlink, files later layers delete;
 * - `multi` = base + `whiteouts` (a `.wh.` file, a `.wh..wh..opq` directory
 *   with a new entry, a new file) + a top layer; config Env, WorkingDir, Cmd;
 * - `sibling` = base + `whiteouts` + another top layer (shares two layers with `multi`);
 * - `musl`: busybox + Debian's musl loader + a dynamically linked musl program.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The layout and what is in it. */
export interface TestImages {
  /** The OCI layout directory (`oci:<layout>:<tag>` for skopeo). */
  readonly layout: string;
  readonly tags: readonly string[];
}

const BUSYBOX = '/bin/busybox';

function tarDir(dir: string, out: string, members: string[] = ['.']): void {
  execFileSync('tar', [
    '--numeric-owner',
    '--sort=name',
    '--format=pax',
    '-C',
    dir,
    '-cf',
    out,
    ...members,
  ]);
}

function write(path: string, text: string, mode = 0o644, owner?: [number, number]): void {
  writeFileSync(path, text);
  chmodSync(path, mode);
  if (owner !== undefined) chownSync(path, owner[0], owner[1]);
}

function busyboxRoot(root: string): void {
  for (const d of ['bin', 'etc', 'root', 'tmp', 'home/user', 'opt', 'data', 'opaque']) {
    mkdirSync(join(root, d), { recursive: true });
  }
  execFileSync('cp', [BUSYBOX, join(root, 'bin/busybox')]);
  for (const applet of execFileSync(BUSYBOX, ['--list']).toString().split('\n')) {
    if (applet !== '' && applet !== 'busybox') symlinkSync('busybox', join(root, 'bin', applet));
  }
  write(
    join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n',
  );
  write(join(root, 'etc/group'), 'root:x:0:\nuser:x:1000:\n');
  chmodSync(join(root, 'root'), 0o700);
  chmodSync(join(root, 'tmp'), 0o1777);
  chownSync(join(root, 'home/user'), 1000, 1000);
  chmodSync(join(root, 'home/user'), 0o750);
}

function baseLayer(work: string): string {
  const root = join(work, 'l-base');
  busyboxRoot(root);
  write(join(root, 'home/user/owned.txt'), 'owned by user\n', 0o640, [1000, 1000]);
  write(join(root, 'opt/setuid'), '#!/bin/sh\necho setuid\n', 0o755);
  chmodSync(join(root, 'opt/setuid'), 0o4755);
  linkSync(join(root, 'opt/setuid'), join(root, 'opt/hardlink'));
  symlinkSync('/opt/setuid', join(root, 'opt/symlink'));
  for (const f of ['data/keep', 'data/gone', 'opaque/a', 'opaque/b'])
    write(join(root, f), `${f}\n`);
  const out = join(work, 'base.tar');
  tarDir(root, out);
  return out;
}

function whiteoutLayer(work: string): string {
  const root = join(work, 'l-wh');
  mkdirSync(join(root, 'data'), { recursive: true });
  mkdirSync(join(root, 'opaque'));
  write(join(root, 'data/.wh.gone'), '');
  write(join(root, 'opaque/.wh..wh..opq'), '');
  write(join(root, 'opaque/c'), 'opaque/c\n');
  write(join(root, 'added.txt'), 'added by layer 2\n', 0o600, [1000, 1000]);
  const out = join(work, 'whiteouts.tar');
  tarDir(root, out);
  return out;
}

function oneFileLayer(work: string, name: string, text: string): string {
  const root = join(work, `l-${name}`);
  mkdirSync(root);
  write(join(root, name), text);
  const out = join(work, `${name}.tar`);
  tarDir(root, out, [name]);
  return out;
}

function muslLayer(work: string): string {
  const root = join(work, 'l-musl');
  busyboxRoot(root);
  mkdirSync(join(root, 'lib'));
  mkdirSync(join(root, 'usr/bin'), { recursive: true });
  execFileSync('cp', ['/usr/lib/x86_64-linux-musl/libc.so', join(root, 'lib/ld-musl-x86_64.so.1')]);
  const src = join(work, 'hello.c');
  writeFileSync(src, '#include <stdio.h>\nint main(void){puts("hello from musl");return 0;}\n');
  execFileSync('musl-gcc', ['-O2', '-o', join(root, 'usr/bin/hello-musl'), src]);
  const out = join(work, 'musl.tar');
  tarDir(root, out);
  return out;
}

function umoci(...args: string[]): void {
  execFileSync('umoci', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Why the musl image cannot be built here, or undefined. */
export function muslUnavailable(): string | undefined {
  try {
    execFileSync(
      'sh',
      ['-c', 'command -v musl-gcc && test -f /usr/lib/x86_64-linux-musl/libc.so'],
      { stdio: 'ignore' },
    );
    return undefined;
  } catch {
    return 'musl-gcc or musl is not installed (Debian packages musl, musl-tools)';
  }
}

/** Builds the test images into `work/oci` (needs root: files owned by uid 1000). */
export function buildTestImages(work: string, options: { musl?: boolean } = {}): TestImages {
  const layout = join(work, 'oci');
  const base = baseLayer(work);
  const wh = whiteoutLayer(work);
  umoci('init', '--layout', layout);
  umoci('new', '--image', `${layout}:base`);
  umoci('raw', 'add-layer', '--image', `${layout}:base`, base);
  umoci('raw', 'add-layer', '--image', `${layout}:base`, '--tag', 'mid', wh);
  umoci(
    'raw',
    'add-layer',
    '--image',
    `${layout}:mid`,
    '--tag',
    'multi',
    oneFileLayer(work, 'top.txt', 'multi top\n'),
  );
  umoci(
    'raw',
    'add-layer',
    '--image',
    `${layout}:mid`,
    '--tag',
    'sibling',
    oneFileLayer(work, 'other.txt', 'sibling top\n'),
  );
  umoci(
    'config',
    '--image',
    `${layout}:multi`,
    '--config.env',
    'PATH=/usr/bin:/bin',
    '--config.env',
    'GREETING=hello from the image',
    '--config.workingdir',
    '/data',
    '--config.cmd',
    '/bin/sh',
  );
  const tags = ['base', 'mid', 'multi', 'sibling'];
  if (options.musl === true) {
    umoci('new', '--image', `${layout}:musl`);
    umoci('raw', 'add-layer', '--image', `${layout}:musl`, muslLayer(work));
    umoci('config', '--image', `${layout}:musl`, '--config.env', 'PATH=/usr/bin:/bin');
    tags.push('musl');
  }
  return { layout, tags };
}
