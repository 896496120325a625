/**
 * The guest artifact cache: one directory per artifact, named after its
 * kind and a digest of everything that goes into it.
 *
 * Contract:
 * - `<root>/<kind>-<key>/` where `key` is the SHA-256 (first 24 hex digits)
 *   of the canonical JSON of the build inputs (package versions and
 *   digests, source digests, recipe version): an input change gives a new
 *   directory, an unchanged input finds the old one, nothing is rebuilt;
 * - the directory holds the output files and `artifact.json` (inputs, the
 *   SHA-256 and size of each output file, build metadata); it appears by an
 *   atomic rename of a finished work directory, so it is complete or absent;
 * - builds of one key are serialized across processes by a lock file
 *   holding the builder's pid; a lock whose pid is gone is stale and taken
 *   over; waiting longer than `lockTimeoutMs` fails with `GUEST_CACHE_BUSY`;
 * - a failed build leaves nothing (its work directory is removed, never
 *   through a mount point: see `remove-tree.ts`).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AenvError } from '@aenv/shared';
import { removeTree } from './remove-tree.js';

/** One output file of an artifact. */
export interface ArtifactFile {
  /** Absolute path. */
  readonly path: string;
  readonly bytes: number;
  /** `sha256:<hex>`. */
  readonly sha256: string;
}

/** A built artifact. */
export interface Artifact {
  readonly kind: string;
  readonly key: string;
  readonly dir: string;
  /** Output files by name relative to `dir`. */
  readonly files: Readonly<Record<string, ArtifactFile>>;
  /** What the build reported (versions, sizes). */
  readonly meta: Readonly<Record<string, unknown>>;
  readonly createdAt: string;
  readonly buildMs: number;
}

/** What a build function returns. */
export interface BuildResult {
  /** Output files, relative to the work directory. */
  readonly files: readonly string[];
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** Options of {@link ArtifactStore}. */
export interface ArtifactStoreOptions {
  /** How long to wait for another builder of the same artifact. @default 20 min */
  readonly lockTimeoutMs?: number;
  readonly pollMs?: number;
}

const RECORD = 'artifact.json';

/** Canonical JSON (sorted keys), so equal inputs hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const obj = value as Record<string, unknown>;
    return `{${keys
      .filter((k) => obj[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of a file, `sha256:<hex>`. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** See the module comment. */
export class ArtifactStore {
  readonly root: string;
  readonly #lockTimeoutMs: number;
  readonly #pollMs: number;

  constructor(root: string, options: ArtifactStoreOptions = {}) {
    this.root = root;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 20 * 60_000;
    this.#pollMs = options.pollMs ?? 200;
  }

  /** The cache key of `inputs`. */
  keyOf(inputs: unknown): string {
    return createHash('sha256').update(canonicalJson(inputs)).digest('hex').slice(0, 24);
  }

  /** The artifact for `inputs`, if built and intact. */
  async get(kind: string, inputs: unknown): Promise<Artifact | undefined> {
    return this.#load(join(this.root, `${kind}-${this.keyOf(inputs)}`));
  }

  /** Every intact artifact of `kind`, newest first (for offline fallbacks). */
  async list(kind: string): Promise<Artifact[]> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const found: Artifact[] = [];
    for (const name of names) {
      if (!name.startsWith(`${kind}-`) || name.endsWith('.lock')) continue;
      const a = await this.#load(join(this.root, name));
      if (a?.kind === kind) found.push(a);
    }
    return found.sort((a, b) =>
      a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0,
    );
  }

  async #load(dir: string): Promise<Artifact | undefined> {
    let record: Artifact;
    try {
      record = JSON.parse(await readFile(join(dir, RECORD), 'utf8')) as Artifact;
    } catch {
      return undefined;
    }
    for (const [name, f] of Object.entries(record.files)) {
      const s = await stat(join(dir, name)).catch(() => undefined);
      if (s?.size !== f.bytes) return undefined;
    }
    // the record stores names; paths are re-rooted so a moved cache still works
    const files = Object.fromEntries(
      Object.entries(record.files).map(([name, f]) => [name, { ...f, path: join(dir, name) }]),
    );
    return { ...record, dir, files };
  }

  /**
   * Returns the artifact for `inputs`, building it with `build(workDir)` if needed.
   * @throws {AenvError} `GUEST_CACHE_BUSY`, or whatever `build` throws.
   */
  async ensure(
    kind: string,
    inputs: unknown,
    build: (workDir: string) => Promise<BuildResult>,
  ): Promise<{ artifact: Artifact; cached: boolean }> {
    const found = await this.get(kind, inputs);
    if (found !== undefined) return { artifact: found, cached: true };
    await mkdir(this.root, { recursive: true });
    const key = this.keyOf(inputs);
    const release = await this.#lock(join(this.root, `${kind}-${key}.lock`));
    try {
      const raced = await this.get(kind, inputs);
      if (raced !== undefined) return { artifact: raced, cached: true };
      return { artifact: await this.#build(kind, key, inputs, build), cached: false };
    } finally {
      await release();
    }
  }

  async #build(
    kind: string,
    key: string,
    inputs: unknown,
    build: (workDir: string) => Promise<BuildResult>,
  ): Promise<Artifact> {
    const prefix = `.tmp-${kind}-${key}-`;
    // leftovers of builders that died holding this key's lock
    for (const name of await readdir(this.root)) {
      if (name.startsWith(prefix)) await removeTree(join(this.root, name));
    }
    const work = join(this.root, `${prefix}${process.pid}-${Date.now().toString(36)}`);
    const dir = join(this.root, `${kind}-${key}`);
    await mkdir(work);
    try {
      const started = performance.now();
      const result = await build(work);
      const files: Record<string, ArtifactFile> = {};
      for (const name of result.files) {
        const path = join(work, name);
        files[name] = {
          path: join(dir, name),
          bytes: (await stat(path)).size,
          sha256: await sha256File(path),
        };
      }
      const record = {
        kind,
        key,
        dir,
        files,
        meta: result.meta ?? {},
        inputs,
        createdAt: new Date().toISOString(),
        buildMs: Math.round(performance.now() - started),
      };
      await writeFile(join(work, RECORD), `${JSON.stringify(record, null, 2)}\n`);
      await rm(dir, { recursive: true, force: true });
      await rename(work, dir);
      return record;
    } catch (err) {
      await removeTree(work);
      throw err;
    }
  }

  async #lock(path: string): Promise<() => Promise<void>> {
    const deadline = performance.now() + this.#lockTimeoutMs;
    for (;;) {
      try {
        const fh = await open(path, 'wx');
        await fh.writeFile(String(process.pid));
        await fh.close();
        return () => rm(path, { force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (await this.#isStale(path)) {
        await rm(path, { force: true });
        continue;
      }
      if (performance.now() > deadline) {
        throw new AenvError(
          'GUEST_CACHE_BUSY',
          `another process is still building ${path.replace(/\.lock$/, '')}`,
          {
            fields: { lock: path },
          },
        );
      }
      await sleep(this.#pollMs);
    }
  }

  async #isStale(path: string): Promise<boolean> {
    const [text, info] = await Promise.all([
      readFile(path, 'utf8').catch(() => undefined),
      stat(path).catch(() => undefined),
    ]);
    if (text === undefined || info === undefined) return false; // released meanwhile: retry
    const pid = Number(text);
    // an empty lock is a builder between create and write, unless it has been so for long
    if (!Number.isSafeInteger(pid) || pid <= 0) return Date.now() - info.mtimeMs > 10_000;
    return !isAlive(pid);
  }
}
