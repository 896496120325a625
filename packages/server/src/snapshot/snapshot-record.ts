/**
 * A snapshot as the node records it: a machine captured at one moment
 * (VMM state + memory directory, and the disk's sealed layers), with what a
 * sandbox created from it inherits. Templates, paused sandboxes and user
 * snapshots are all snapshots; `kind` says which.
 *
 * @module
 */
import type { ImageSpec } from '@aenv/storage';

/** Why a snapshot exists. */
export type SnapshotKind = 'template' | 'pause' | 'user';

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
  readonly createdAt: string;
}
