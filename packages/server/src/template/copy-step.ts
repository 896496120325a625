/**
 * The COPY step: files from an uploaded tar (the e2b SDK's files-hash
 * upload, or a Dockerfile build's context) into the build machine.
 *
 * Which entries and where (Docker's rules): a literal source that is a
 * file goes to `dest` (into it when `dest` ends in `/`); a directory's
 * contents go into `dest`; `.` is the whole archive; a glob (`*`, `?`,
 * `**`) copies each match (a file into `dest/`, a directory's contents into
 * `dest`). Files are written through envd's `/files`; directories,
 * symlinks, modes (the archive's, or the step's `mode`) and the owner (the
 * step's user, else the build's current user) are then applied by one
 * short script run with the tools image's node, so images without a shell
 * or coreutils work too.
 *
 * @module
 */
import { posix } from 'node:path';
import { TOOLS_LAYOUT, TOOLS_MOUNT } from '@aenv/guest';
import { AenvError, newId } from '@aenv/shared';
import type { GuestAddress } from '../orchestrator/sandbox.js';
import { openLayerStream } from '../image/layer-stream.js';
import { readTar } from '../image/tar-reader.js';
import { runGuestCommand, writeGuestFile } from './envd-rpc.js';

/** How to run JavaScript inside the machine (the tools image's node). */
export interface GuestNode {
  readonly cmd: string;
  /** Arguments before `-e <script>`. */
  readonly args: readonly string[];
}

/** The tools image's node inside every aenv guest (its own loader and libraries). */
export const TOOLS_NODE: GuestNode = {
  cmd: `${TOOLS_MOUNT}/${TOOLS_LAYOUT.loader}`,
  args: [
    '--library-path',
    `${TOOLS_MOUNT}/${TOOLS_LAYOUT.nodeLib}`,
    `${TOOLS_MOUNT}/${TOOLS_LAYOUT.node}`,
  ],
};

/** What a COPY needs. */
export interface CopyRequest {
  readonly envd: GuestAddress;
  readonly node: GuestNode;
  /** The uploaded archive (tar, tar.gz or tar.zst). */
  readonly archive: string;
  readonly src: string;
  /** Absolute destination (variables expanded, resolved against WORKDIR). */
  readonly dest: string;
  /** `user[:group]` owning what is copied. */
  readonly owner: string;
  readonly mode: number | undefined;
  readonly timeoutMs: number;
  /** A writable directory of the machine for the step's manifest (and its cwd). */
  readonly scratchDir: string;
}

interface PlacedEntry {
  readonly path: string;
  readonly type: 'dir' | 'file' | 'symlink';
  readonly mode?: number;
  readonly target?: string;
}

function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * Where an archive entry goes for `COPY src dest`, or undefined when the
 * source does not select it.
 */
export function copyTarget(
  entry: string,
  isDir: boolean,
  src: string,
  dest: string,
): string | undefined {
  const s = posix
    .normalize(src)
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  if (s === '.' || s === '') return entry === '' ? dest : posix.join(dest, entry);
  if (!/[*?[]/.test(s)) {
    if (entry === s) {
      if (isDir || !dest.endsWith('/')) return dest;
      return posix.join(dest, posix.basename(entry));
    }
    if (entry.startsWith(`${s}/`)) return posix.join(dest, entry.slice(s.length + 1));
    return undefined;
  }
  const re = globRegExp(s);
  const parts = entry.split('/');
  for (let n = 1; n <= parts.length; n++) {
    const prefix = parts.slice(0, n).join('/');
    if (!re.test(prefix)) continue;
    if (prefix === entry) return isDir ? dest : posix.join(dest, posix.basename(entry));
    return posix.join(dest, entry.slice(prefix.length + 1));
  }
  return undefined;
}

// Runs in the machine with the tools node: makes directories and symlinks,
// then applies owner and modes. argv[1] is the manifest, deleted at the end.
const APPLY_SCRIPT = `
const fs = require('fs'), path = require('path');
const m = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const look = (file, name) => { try { for (const l of fs.readFileSync(file, 'utf8').split('\\n')) { const f = l.split(':'); if (f[0] === name) return f; } } catch {} };
const [u, g] = m.owner.split(':');
let uid, gid;
if (/^\\d+$/.test(u)) { uid = +u; gid = uid; } else { const f = look('/etc/passwd', u); if (!f) throw new Error('no user ' + u + ' in /etc/passwd'); uid = +f[2]; gid = +f[3]; }
if (g) { if (/^\\d+$/.test(g)) gid = +g; else { const f = look('/etc/group', g); if (!f) throw new Error('no group ' + g); gid = +f[2]; } }
for (const e of m.entries) {
  if (e.type === 'dir') fs.mkdirSync(e.path, { recursive: true });
  else if (e.type === 'symlink') { fs.mkdirSync(path.dirname(e.path), { recursive: true }); fs.rmSync(e.path, { force: true }); fs.symlinkSync(e.target, e.path); }
  fs.lchownSync(e.path, uid, gid);
  if (e.type !== 'symlink' && e.mode !== undefined) fs.chmodSync(e.path, e.mode);
}
fs.rmSync(process.argv[1], { force: true });
`;

/**
 * Copies the selected entries of an archive into the machine.
 * @returns how many entries were copied.
 * @throws {AenvError} `BUILD_STEP_FAILED` (nothing selected, the apply script failed),
 *   `IMAGE_INVALID` (not a tar), `SBX_ENVD_FAILED`.
 */
export async function copyIntoMachine(r: CopyRequest): Promise<number> {
  const placed: PlacedEntry[] = [];
  const stream = await openLayerStream(r.archive);
  try {
    for await (const { entry, body } of readTar(stream.chunks)) {
      const isDir = entry.type === 'directory';
      const target = copyTarget(entry.path, isDir, r.src, r.dest);
      if (target === undefined) continue;
      if (isDir) placed.push({ path: target, type: 'dir', mode: r.mode ?? entry.mode });
      else if (entry.type === 'symlink')
        placed.push({ path: target, type: 'symlink', target: entry.linkname });
      else if (entry.type === 'file') {
        await writeGuestFile(r.envd, target, body, 'root');
        placed.push({ path: target, type: 'file', mode: r.mode ?? entry.mode });
      }
    }
  } finally {
    stream.close();
  }
  if (placed.length === 0) {
    throw new AenvError('BUILD_STEP_FAILED', `COPY ${r.src}: no uploaded file matches`);
  }
  const manifest = `${r.scratchDir}/.aenv-copy-${newId()}.json`;
  await writeGuestFile(
    r.envd,
    manifest,
    Buffer.from(JSON.stringify({ owner: r.owner, entries: placed })),
    'root',
  );
  let stderr = '';
  const end = await runGuestCommand(
    r.envd,
    {
      cmd: r.node.cmd,
      args: [...r.node.args, '-e', APPLY_SCRIPT, manifest],
      envs: {},
      user: 'root',
      cwd: r.scratchDir,
    },
    {
      timeoutMs: r.timeoutMs,
      onOutput: (s, d) => void (s === 'stderr' && (stderr = (stderr + d.toString()).slice(-1000))),
    },
  );
  if (end.exitCode !== 0) {
    throw new AenvError(
      'BUILD_STEP_FAILED',
      `COPY ${r.src}: setting owners and modes failed: ${stderr.trim() || end.status}`,
    );
  }
  return placed.length;
}
