/**
 * A snapshot as the node records it: a machine captured at one moment
 * (VMM state + memory directory, and the disk's sealed layers), with what a
 * sandbox created from it inherits. Templates, paused sandboxes and user
 * snapshots are all snapshots; `kind` says which.
 *
 * @module
 */
import type { ImageSpec } from '@aenv/storage';
import type { EnvdDefaults } from '../orchestrator/envd-client.js';

/**
 * Why a snapshot exists: a template's, a paused sandbox's, one a user took
 * (`POST /sandboxes/{id}/snapshots`), the checkpoint a fork's children
 * start from, or the disk-only start of a sandbox cold-started from an
 * image (released with the sandbox).
 */
export type SnapshotKind = 'template' | 'pause' | 'user' | 'fork' | 'cold';

/** One snapshot. */
export interface SnapshotRecord {
  readonly id: string;
  readonly kind: SnapshotKind;
  /** A user-given name (user snapshots), unique on the node. */
  readonly name?: string | undefined;
  /** The sandbox it was taken from (pause and user snapshots). */
  readonly sandboxId?: string | undefined;
  /** The template the machine came from, originally. */
  readonly templateId: string;
  /** VMM state + memory; undefined for a disk-only snapshot (resumes by boot). */
  readonly dir: string | undefined;
  /** The disk at that moment. */
  readonly image: ImageSpec;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
  readonly envdVersion: string;
  /** The token envd held when captured (a restore's /init must present it). */
  readonly envdAccessToken?: string | undefined;
  /** Defaults of the template it descends from (env, user, workdir), re-sent at every `/init`. */
  readonly envdDefaults?: EnvdDefaults | undefined;
  /** Snapshots the captured machine descended from, then this one (oldest first). */
  readonly lineage?: readonly string[] | undefined;
  /** Deleted by a user but still referenced: hidden, removed once unreferenced. */
  readonly deleted?: boolean | undefined;
  readonly createdAt: string;
  /** The tenant that owns it (the sandbox's); absent = `default`. */
  readonly tenant?: string | undefined;
}
