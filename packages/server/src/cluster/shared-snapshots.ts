/**
 * Snapshots in the cluster's shared store, so that another node can
 * restore them: a paused sandbox taken over after its node is lost or
 * full, a template built on one node, a user snapshot forks spread from.
 *
 * Layout (keys of the store this class is given, `cluster/` of the shared
 * blob store in practice):
 *
 * - `snapshots/<id>/files/<name>`: every file of the VMM directory but the
 *   memory file (`vmstate`, `memory.diff`, `manifest.json`, ...);
 * - `snapshots/<id>/snapshot.json`: the {@link SnapshotExport} descriptor,
 *   written last (a snapshot without it is not exported);
 * - `bases/<baseId>.json` + `layers/sha256/<hex>`: the memory file, stored
 *   once per `memory.baseId` as a storage-engine layer (all-zero blocks
 *   left out, optionally deflated) and shared by every snapshot restored
 *   from the same base: a pause costs its device state and RAM diff, not
 *   its RAM.
 *
 * Disk layers are already in the shared blob store (the node's storage
 * engine writes them there); the descriptor carries their digests.
 * Importing rebuilds the directory under a temporary name and renames it
 * into place; a memory base the node already holds is hard-linked, not
 * downloaded.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import {
  chmod,
  copyFile,
  link,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
} from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AenvError, toAenvError } from '@aenv/shared';
import {
  ImageDevice,
  exportRawImage,
  importRawImage,
  type BlobStore,
  type LayerCompression,
} from '@aenv/storage';
import { MANIFEST_FILE } from '@aenv/vmm';
import type { SandboxDoc } from '../orchestrator/sandbox.js';
import type { SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { TemplateRecord } from '../template/template-record.js';

/** The format tag of a descriptor. */
export const SNAPSHOT_EXPORT_FORMAT = 'aenv-cluster-snapshot/1';

/** What an export records about one snapshot. */
export interface SnapshotExport {
  readonly format: typeof SNAPSHOT_EXPORT_FORMAT;
  /** The record as the exporting node had it (`dir` is that node's path). */
  readonly snapshot: SnapshotRecord;
  /** The paused sandbox it holds (pause snapshots). */
  readonly sandbox?: SandboxDoc | undefined;
  /** The template it is the snapshot of (template exports). */
  readonly template?: TemplateRecord | undefined;
  /** Files of the VMM directory, memory file excepted. */
  readonly files: readonly { readonly name: string; readonly bytes: number }[];
  /** The memory file: its name in the directory and its base. */
  readonly memory?: { readonly file: string; readonly baseId: string; readonly bytes: number };
  readonly node: string;
  readonly compat: string;
  readonly exportedAt: string;
}

/** A memory base in the store. */
interface BaseEntry {
  readonly digest: string;
  readonly virtualSize: number;
  readonly blockSize: number;
  readonly dataBytes: number;
}

/** What the shared snapshots need. */
export interface SharedSnapshotsOptions {
  /** The shared store (already under the cluster prefix). */
  readonly store: BlobStore;
  /** Scratch space on the snapshots' filesystem (imports are renamed from it). */
  readonly workDir: string;
  readonly node: string;
  readonly compat: string;
  readonly compression: LayerCompression;
  /** A local memory file with this base id, if the node holds one. */
  readonly localBase: (baseId: string) => Promise<string | undefined>;
}

function transferFailed(message: string, cause?: unknown): AenvError {
  return toAenvError(cause ?? new Error(message), 'CLUSTER_TRANSFER_FAILED', message);
}

/** Exports and imports snapshots through the shared store. */
export class SharedSnapshots {
  readonly #o: SharedSnapshotsOptions;
  /** Base uploads in progress (pauses of clones of one template share one). */
  readonly #uploading = new Map<string, Promise<void>>();

  constructor(options: SharedSnapshotsOptions) {
    this.#o = options;
  }

  /**
   * Copies a snapshot (its VMM directory, memory base once) to the store.
   * @throws {AenvError} `CLUSTER_TRANSFER_FAILED`.
   */
  async export(
    record: SnapshotRecord,
    extra: { sandbox?: SandboxDoc; template?: TemplateRecord } = {},
  ): Promise<SnapshotExport> {
    try {
      const { files, memory } =
        record.dir === undefined ? { files: [] } : await this.#upload(record);
      const descriptor: SnapshotExport = {
        format: SNAPSHOT_EXPORT_FORMAT,
        snapshot: record,
        ...(extra.sandbox === undefined ? {} : { sandbox: extra.sandbox }),
        ...(extra.template === undefined ? {} : { template: extra.template }),
        files,
        ...(memory === undefined ? {} : { memory }),
        node: this.#o.node,
        compat: this.#o.compat,
        exportedAt: new Date().toISOString(),
      };
      const body = Buffer.from(JSON.stringify(descriptor));
      await this.#o.store.put(descriptorKey(record.id), body);
      return descriptor;
    } catch (err) {
      throw transferFailed(`exporting snapshot ${record.id} failed`, err);
    }
  }

  /**
   * The descriptor of an exported snapshot.
   * @throws {AenvError} `SNAPSHOT_NOT_FOUND` when it was never exported,
   *   `CLUSTER_TRANSFER_FAILED` when it cannot be read.
   */
  async read(snapshotId: string): Promise<SnapshotExport> {
    let text: string;
    try {
      text = await readAll(await this.#o.store.get(descriptorKey(snapshotId)));
    } catch (err) {
      if (err instanceof AenvError && err.code === 'BLOB_NOT_FOUND') {
        throw new AenvError('SNAPSHOT_NOT_FOUND', `snapshot ${snapshotId} was not exported`, {
          cause: err,
          fields: { snapshotId },
        });
      }
      throw transferFailed(`reading exported snapshot ${snapshotId} failed`, err);
    }
    const parsed = JSON.parse(text) as SnapshotExport;
    if (parsed.format !== SNAPSHOT_EXPORT_FORMAT) {
      throw transferFailed(`exported snapshot ${snapshotId} has format ${String(parsed.format)}`);
    }
    return parsed;
  }

  /**
   * Rebuilds an exported snapshot's VMM directory at `dir` (which must not
   * exist) and returns its descriptor with the record pointing there.
   * @throws {AenvError} `SNAPSHOT_NOT_FOUND`, `VMM_SNAPSHOT_INCOMPATIBLE`
   *   (exported by a node of another compat key), `CLUSTER_TRANSFER_FAILED`.
   */
  async import(snapshotId: string, dir: string): Promise<SnapshotExport> {
    const exp = await this.read(snapshotId);
    if (exp.compat !== this.#o.compat) {
      throw new AenvError(
        'VMM_SNAPSHOT_INCOMPATIBLE',
        `snapshot ${snapshotId} comes from node ${exp.node}, whose VMM, kernel or tools differ from this node's`,
        { fields: { snapshotId, node: exp.node } },
      );
    }
    if (exp.snapshot.dir === undefined)
      return { ...exp, snapshot: { ...exp.snapshot, dir: undefined } };
    const tmp = join(this.#o.workDir, `import-${snapshotId}-${randomUUID()}`);
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    try {
      for (const f of exp.files)
        await this.#download(fileKey(snapshotId, f.name), join(tmp, f.name), f.bytes);
      if (exp.memory !== undefined) await this.#placeMemory(exp.memory, join(tmp, exp.memory.file));
      await rename(tmp, dir);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw transferFailed(`importing snapshot ${snapshotId} failed`, err);
    }
    return { ...exp, snapshot: { ...exp.snapshot, dir } };
  }

  /** Removes an exported snapshot (its memory base stays: others share it). Idempotent. */
  async remove(snapshotId: string): Promise<void> {
    await this.#o.store.delete(descriptorKey(snapshotId));
    const keys: string[] = [];
    for await (const b of this.#o.store.list(`snapshots/${snapshotId}/`)) keys.push(b.key);
    for (const k of keys) await this.#o.store.delete(k);
  }

  async #upload(record: SnapshotRecord): Promise<Pick<SnapshotExport, 'files' | 'memory'>> {
    const dir = record.dir as string;
    const manifest = await readMemoryManifest(dir);
    const memoryFile = manifest.memory?.file ?? undefined;
    const files: { name: string; bytes: number }[] = [];
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (!e.isFile() || e.name === memoryFile) continue;
      const path = join(dir, e.name);
      const { size } = await stat(path);
      await this.#o.store.put(fileKey(record.id, e.name), { path });
      files.push({ name: e.name, bytes: size });
    }
    if (memoryFile === undefined) return { files };
    const baseId = manifest.memory?.baseId ?? `snapshot-${record.id}`;
    const path = join(dir, memoryFile);
    await this.#uploadBase(baseId, path);
    return { files, memory: { file: memoryFile, baseId, bytes: (await stat(path)).size } };
  }

  async #uploadBase(baseId: string, path: string): Promise<void> {
    const running = this.#uploading.get(baseId);
    if (running !== undefined) return running;
    const upload = (async () => {
      if ((await this.#o.store.head(baseKey(baseId))) !== undefined) return;
      await mkdir(this.#o.workDir, { recursive: true, mode: 0o700 });
      const imported = await importRawImage(path, {
        store: this.#o.store,
        workDir: this.#o.workDir,
        compression: this.#o.compression,
      });
      const entry: BaseEntry = {
        digest: imported.digest,
        virtualSize: imported.image.virtualSize,
        blockSize: imported.image.blockSize,
        dataBytes: imported.dataBytes,
      };
      await this.#o.store.put(baseKey(baseId), Buffer.from(JSON.stringify(entry)));
    })();
    this.#uploading.set(baseId, upload);
    try {
      await upload;
    } finally {
      this.#uploading.delete(baseId);
    }
  }

  async #placeMemory(memory: NonNullable<SnapshotExport['memory']>, path: string): Promise<void> {
    const local = await this.#o.localBase(memory.baseId);
    if (local !== undefined) {
      try {
        await link(local, path);
        return;
      } catch {
        await copyFile(local, path);
        return;
      }
    }
    const entry = JSON.parse(
      await readAll(await this.#o.store.get(baseKey(memory.baseId))),
    ) as BaseEntry;
    const device = await ImageDevice.open({
      image: { virtualSize: entry.virtualSize, blockSize: entry.blockSize, layers: [entry.digest] },
      store: this.#o.store,
    });
    try {
      await exportRawImage(device, path);
    } finally {
      await device.close();
    }
    if ((await stat(path)).size !== memory.bytes) {
      throw transferFailed(`memory base ${memory.baseId} has the wrong size`);
    }
    // Like the VMM's own snapshots: nobody writes into a memory file.
    await chmod(path, 0o440);
  }

  async #download(key: string, path: string, bytes: number): Promise<void> {
    await pipeline(await this.#o.store.get(key), createWriteStream(path, { mode: 0o600 }));
    const { size } = await stat(path);
    if (size !== bytes) throw transferFailed(`${key}: expected ${bytes} bytes, got ${size}`);
  }
}

/** The memory part of a VMM manifest; none for directories without one (test stand-ins). */
async function readMemoryManifest(
  dir: string,
): Promise<{ memory?: { file?: string | null; baseId?: string } }> {
  try {
    return JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as {
      memory?: { file?: string | null; baseId?: string };
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

function descriptorKey(id: string): string {
  return `snapshots/${id}/snapshot.json`;
}

function fileKey(id: string, name: string): string {
  return `snapshots/${id}/files/${name}`;
}

function baseKey(baseId: string): string {
  return `bases/${baseId}.json`;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
