/**
 * `aenv cp SRC DST`: copies files and directory trees between this machine
 * and a sandbox; the sandbox side is written `ID:PATH` (relative paths are
 * from the sandbox user's home). `-` as the local side is stdin or stdout
 * (files only). Contents stream both ways; symlinks are skipped with a
 * warning; file modes are not kept.
 *
 * @module
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileNotFoundError, type Sandbox } from '@aenv/sdk';
import { expectOperands } from '../args.js';
import type { CliContext } from '../cli-context.js';
import { CliError, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command-spec.js';

/** One side of a copy. */
export type CopyLocation =
  | { readonly kind: 'local'; readonly path: string }
  | { readonly kind: 'remote'; readonly id: string; readonly path: string };

/**
 * `ID:PATH` is a sandbox path; anything else is local. A local path with a
 * colon before its first slash needs a `./` in front.
 */
export function parseLocation(word: string): CopyLocation {
  const m = /^([A-Za-z0-9][A-Za-z0-9_-]*):(.*)$/s.exec(word);
  if (m === null) return { kind: 'local', path: word };
  const path = m[2] ?? '';
  if (path === '') throw new UsageError(`'${word}' names no path in the sandbox (ID:PATH)`);
  return { kind: 'remote', id: m[1] ?? '', path };
}

interface Totals {
  files: number;
  bytes: number;
}

async function remoteIsDir(sandbox: Sandbox, path: string): Promise<boolean> {
  try {
    return (await sandbox.files.getInfo(path)).type === 'dir';
  } catch (err) {
    if (err instanceof FileNotFoundError) return false;
    throw err;
  }
}

async function readAll(ctx: CliContext): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve) => {
    ctx.stdin.on('data', (c: Buffer) => chunks.push(c));
    ctx.stdin.on('end', resolve);
    ctx.stdin.resume();
  });
  return Buffer.concat(chunks);
}

async function uploadTree(
  ctx: CliContext,
  sandbox: Sandbox,
  local: string,
  remote: string,
  totals: Totals,
): Promise<void> {
  const info = await lstat(local);
  if (info.isSymbolicLink()) {
    ctx.err(`aenv cp: skipped symlink ${local}`);
  } else if (info.isDirectory()) {
    await sandbox.files.makeDir(remote);
    for (const name of (await readdir(local)).sort()) {
      await uploadTree(ctx, sandbox, join(local, name), posix.join(remote, name), totals);
    }
  } else if (info.isFile()) {
    const body = Readable.toWeb(createReadStream(local)) as unknown as ReadableStream<Uint8Array>;
    await sandbox.files.write(remote, body);
    totals.files += 1;
    totals.bytes += info.size;
  } else {
    ctx.err(`aenv cp: skipped ${local} (not a file or directory)`);
  }
}

async function upload(
  ctx: CliContext,
  sandbox: Sandbox,
  local: string,
  remote: string,
): Promise<Totals> {
  const totals = { files: 0, bytes: 0 };
  if (local === '-') {
    const data = await readAll(ctx);
    await sandbox.files.write(remote, data);
    return { files: 1, bytes: data.length };
  }
  try {
    await lstat(local);
  } catch {
    throw new CliError(`no such file or directory: ${local}`);
  }
  const into = remote.endsWith('/') || (await remoteIsDir(sandbox, remote));
  await uploadTree(
    ctx,
    sandbox,
    local,
    into ? posix.join(remote, basename(local)) : remote,
    totals,
  );
  return totals;
}

async function downloadTree(
  ctx: CliContext,
  sandbox: Sandbox,
  remote: string,
  local: string,
  totals: Totals,
): Promise<void> {
  const info = await sandbox.files.getInfo(remote);
  if (info.type === 'symlink') {
    ctx.err(`aenv cp: skipped symlink ${remote}`);
  } else if (info.type === 'dir') {
    await mkdir(local, { recursive: true });
    for (const entry of await sandbox.files.list(remote)) {
      await downloadTree(ctx, sandbox, entry.path, join(local, entry.name), totals);
    }
  } else {
    const stream = await sandbox.files.readStream(remote);
    await pipeline(Readable.fromWeb(stream), createWriteStream(local));
    totals.files += 1;
    totals.bytes += info.size;
  }
}

async function localIsDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function download(
  ctx: CliContext,
  sandbox: Sandbox,
  remote: string,
  local: string,
): Promise<Totals> {
  const totals = { files: 0, bytes: 0 };
  const info = await sandbox.files.getInfo(remote);
  if (local === '-') {
    if (info.type !== 'file') throw new UsageError(`'-' takes a file; ${remote} is a ${info.type}`);
    const stream = await sandbox.files.readStream(remote);
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>)
      ctx.stdout.write(chunk);
    return { files: 1, bytes: info.size };
  }
  const target = local.endsWith('/') || (await localIsDir(local)) ? join(local, info.name) : local;
  await mkdir(dirname(target), { recursive: true });
  await downloadTree(ctx, sandbox, info.path, target, totals);
  return totals;
}

function kib(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** The command. */
export const cpCommand: CommandSpec = {
  name: 'cp',
  summary: 'Copy files between this machine and a sandbox.',
  usage: 'cp [options] SRC DST',
  description:
    'One of SRC and DST is ID:PATH, a path in sandbox ID; the other is a local path, or - for ' +
    'stdin/stdout. Directories are copied recursively; a DST that is a directory (or ends with /) ' +
    'receives SRC inside it.',
  operands: ['file', 'file'],
  options: [],
  examples: [
    'aenv cp ./data.csv 4kq2m9x8a1b2c3d4e5f6:/home/user/',
    'aenv cp 4kq2m9x8a1b2c3d4e5f6:/home/user/results ./results',
    'aenv cp 4kq2m9x8a1b2c3d4e5f6:/etc/os-release -',
  ],
  async run(ctx, args) {
    const [srcWord, dstWord] = expectOperands(args, ['SRC', 'DST']);
    const src = parseLocation(srcWord ?? '');
    const dst = parseLocation(dstWord ?? '');
    if (src.kind === dst.kind) {
      throw new UsageError(
        'one of SRC and DST must be ID:PATH (in a sandbox), the other a local path',
      );
    }
    const remote = src.kind === 'remote' ? src : (dst as Extract<CopyLocation, { kind: 'remote' }>);
    const client = await ctx.client();
    const sandbox = await client.sandboxes.connect(remote.id);
    const totals =
      src.kind === 'local'
        ? await upload(ctx, sandbox, src.path, remote.path)
        : await download(ctx, sandbox, remote.path, (dst as { path: string }).path);
    const where =
      src.kind === 'local' ? `to ${remote.id}:${remote.path}` : `from ${remote.id}:${remote.path}`;
    ctx.err(
      `aenv cp: copied ${totals.files} file${totals.files === 1 ? '' : 's'} (${kib(totals.bytes)}) ${where}`,
    );
    return 0;
  },
};
