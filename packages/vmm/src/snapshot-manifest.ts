/**
 * The VM snapshot manifest: `manifest.json` in a snapshot directory, beside
 * the memory file and the device-state file it names. Documented in
 * `docs/vmm.md` ("Snapshot format").
 *
 * Contract (style R5): a magic string and a `formatVersion`; a SHA-256
 * checksum over the canonical JSON of every other field; a size limit on
 * load; written last and atomically (temp file + rename), so a directory
 * without a valid manifest is never a snapshot. It records what a restore
 * must match: driver, virtualization mode, VMM version, machine shape, boot
 * files (with their digests), drive ids and the MAC, and how its memory is
 * made up (a full file, or a base file plus a diff: docs/snapshots.md).
 * Optional fields are written by the drivers that have them; readers that
 * need one refuse a manifest without it.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AenvError } from '@aenv/shared';
import type { VirtualizationMode, VmmDriverKind } from './driver.js';

/** `magic` of every manifest. */
export const SNAPSHOT_MAGIC = 'aenv-vm-snapshot';
/** The format this code writes and reads. */
export const SNAPSHOT_FORMAT_VERSION = 1;
/** The manifest's file name in a snapshot directory. */
export const MANIFEST_FILE = 'manifest.json';
/** Manifests larger than this are refused unread. */
export const MAX_MANIFEST_BYTES = 64 * 1024;

/** A snapshot's manifest. */
export interface SnapshotManifest {
  readonly magic: typeof SNAPSHOT_MAGIC;
  readonly formatVersion: typeof SNAPSHOT_FORMAT_VERSION;
  /** ISO time of the snapshot. */
  readonly createdAt: string;
  /** Id of the VM it was taken from. */
  readonly vmId: string;
  readonly driver: VmmDriverKind;
  readonly mode: VirtualizationMode;
  /** The VMM's version string; a restore needs the same. */
  readonly vmmVersion: string;
  readonly machine: {
    readonly vcpus: number;
    readonly memoryMiB: number;
    /** CPU model the guest saw (`default` for the VMM's default). */
    readonly cpuModel: string;
  };
  /** Boot files and command line: the restored VMM is started with the same. */
  readonly boot: {
    readonly kernel: string;
    readonly initrd: string | null;
    readonly cmdline: string;
    /** `sha256:<hex>` of the kernel file (qemu). */
    readonly kernelDigest?: string;
    /** `sha256:<hex>` of the initrd file, null without one (qemu). */
    readonly initrdDigest?: string | null;
  };
  /** Drive ids in attachment order. */
  readonly drives: readonly { readonly id: string; readonly readOnly: boolean }[];
  /** The network device, if the VM had one. */
  readonly network: { readonly mac: string } | null;
  /**
   * Guest memory: `file` names the memory file in the directory, which
   * restores map copy-on-write; null means the memory is inside the state
   * file. `diff`, when present, holds the pages that differ from `file`
   * (qemu: a VM that was itself restored is saved as its base file, hard
   * linked, plus a diff). `baseId` names the base file: snapshots with the
   * same `baseId` share it (hard links, one copy on disk and in the page cache).
   */
  readonly memory: {
    readonly file: string | null;
    readonly bytes: number;
    readonly diff?: { readonly file: string; readonly bytes: number; readonly pages: number };
    readonly baseId?: string;
  };
  /**
   * The snapshot directory the VM was restored from, null for a booted VM
   * (lineage, informational: a snapshot never needs another directory).
   */
  readonly parent?: string | null;
  /** The device-state (migration stream) file. */
  readonly state: { readonly file: string; readonly bytes: number };
  /** Driver-specific settings a restore must repeat (e.g. QEMU migration capabilities). */
  readonly vmm: Readonly<Record<string, string | number | boolean>>;
  /** `sha256:<hex>` over the canonical JSON of all other fields. */
  readonly checksum: string;
}

/** A manifest before sealing. */
export type ManifestBody = Omit<SnapshotManifest, 'checksum'>;

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function checksumOf(body: object): string {
  return `sha256:${createHash('sha256').update(canonical(body)).digest('hex')}`;
}

/** Adds the checksum. */
export function sealManifest(body: ManifestBody): SnapshotManifest {
  return { ...body, checksum: checksumOf(body) };
}

/** Writes `manifest.json` atomically into `dir`. */
export async function writeManifest(dir: string, manifest: SnapshotManifest): Promise<void> {
  const path = join(dir, MANIFEST_FILE);
  await writeFile(`${path}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`, { flag: 'wx' });
  await rename(`${path}.tmp`, path);
}

function invalid(dir: string, why: string, cause?: unknown): AenvError {
  return new AenvError('VMM_SNAPSHOT_INVALID', `snapshot ${dir}: ${why}`, {
    cause,
    fields: { dir },
  });
}

const isStr = (v: unknown): boolean => typeof v === 'string';
const isNum = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isDigest = (v: unknown): boolean => typeof v === 'string' && /^sha256:[0-9a-f]{64}$/.test(v);

/** Field checks of a parsed manifest: [dotted path, predicate]. */
const SHAPE: readonly [string, (v: unknown) => boolean][] = [
  ['createdAt', isStr],
  ['vmId', isStr],
  ['driver', isStr],
  ['mode', (v) => v === 'kvm' || v === 'tcg'],
  ['vmmVersion', isStr],
  ['machine.vcpus', isNum],
  ['machine.memoryMiB', isNum],
  ['machine.cpuModel', isStr],
  ['boot.kernel', isStr],
  ['boot.initrd', (v) => v === null || isStr(v)],
  ['boot.cmdline', isStr],
  ['boot.kernelDigest', (v) => v === undefined || isDigest(v)],
  ['boot.initrdDigest', (v) => v === undefined || v === null || isDigest(v)],
  [
    'drives',
    (v) =>
      Array.isArray(v) &&
      v.every((d) => isObj(d) && isStr(d.id) && typeof d.readOnly === 'boolean'),
  ],
  ['network', (v) => v === null || (isObj(v) && isStr(v.mac))],
  ['memory.file', (v) => v === null || isStr(v)],
  ['memory.bytes', isNum],
  [
    'memory.diff',
    (v) => v === undefined || (isObj(v) && isStr(v.file) && isNum(v.bytes) && isNum(v.pages)),
  ],
  ['memory.baseId', (v) => v === undefined || isStr(v)],
  ['parent', (v) => v === undefined || v === null || isStr(v)],
  ['state.file', isStr],
  ['state.bytes', isNum],
  ['vmm', isObj],
];

function at(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), obj);
}

/**
 * Reads and verifies `dir/manifest.json`.
 * @throws {AenvError} `VMM_SNAPSHOT_INVALID` when missing, too large, not
 *   JSON, of another magic or format version, malformed, or its checksum fails.
 */
export async function readManifest(dir: string): Promise<SnapshotManifest> {
  let text: Buffer;
  try {
    text = await readFile(join(dir, MANIFEST_FILE));
  } catch (err) {
    throw invalid(dir, `no readable ${MANIFEST_FILE}`, err);
  }
  if (text.length > MAX_MANIFEST_BYTES)
    throw invalid(dir, `${MANIFEST_FILE} is larger than ${MAX_MANIFEST_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.toString('utf8'));
  } catch (err) {
    throw invalid(dir, `${MANIFEST_FILE} is not JSON`, err);
  }
  if (!isObj(parsed) || parsed.magic !== SNAPSHOT_MAGIC)
    throw invalid(dir, 'not an aenv VM snapshot');
  if (parsed.formatVersion !== SNAPSHOT_FORMAT_VERSION) {
    throw invalid(
      dir,
      `format version ${String(parsed.formatVersion)} is not ${SNAPSHOT_FORMAT_VERSION}`,
    );
  }
  for (const [path, ok] of SHAPE) {
    if (!ok(at(parsed, path))) throw invalid(dir, `field ${path} is missing or malformed`);
  }
  const { checksum, ...body } = parsed;
  if (checksum !== checksumOf(body))
    throw invalid(dir, 'checksum mismatch (the manifest was modified)');
  return parsed as unknown as SnapshotManifest;
}
