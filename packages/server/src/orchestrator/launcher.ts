/**
 * The seam between the orchestrator and what actually runs a sandbox.
 *
 * The orchestrator owns records, TTLs and the envd handshake; a launcher
 * owns the machine: network slot, disk and the VMM process. A machine
 * starts either by booting a disk image or by restoring a snapshot
 * (memory + device state + the disk layers sealed with it), and it can be
 * suspended into a new snapshot. The microVM launcher
 * (`microvm-launcher.ts`) is the real one.
 *
 * @module
 */
import type { EgressPolicy } from '@aenv/network';
import type { ImageSpec } from '@aenv/storage';
import type { GuestAddress } from './sandbox.js';

/** A machine captured at one moment: VMM state + memory in `dir`, the disk as `image`. */
export interface MachineSnapshot {
  /** The VMM snapshot directory; absent for a disk-only snapshot (resume = boot). */
  readonly dir: string | undefined;
  /** The disk's layers at that moment. */
  readonly image: ImageSpec;
}

/** Where a machine starts from. */
export type LaunchSource =
  | { readonly kind: 'boot'; readonly image: ImageSpec }
  | { readonly kind: 'restore'; readonly snapshot: MachineSnapshot };

/** What a launcher needs to start one sandbox. */
export interface LaunchSpec {
  readonly sandboxId: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** Egress policy in force from the first packet. */
  readonly egress: EgressPolicy;
  readonly source: LaunchSource;
}

/** How a launched sandbox ended, when it ends by itself. */
export interface LaunchExit {
  readonly reason: string;
}

/** When the launch stages finished, as `performance.now()` timestamps. */
export interface LaunchMarks {
  /** The launch began. */
  readonly startedAt: number;
  /** The VMM runs the guest. */
  readonly vmmRunningAt: number;
  /** The guest init reported that it started envd (boots only; undefined otherwise). */
  readonly initStartedAt: Promise<number | undefined>;
}

/** Options of {@link LaunchedSandbox.suspend}. */
export interface SuspendOptions {
  /** Where the VMM state and memory go (must not exist). */
  readonly dir: string;
  /** false: keep only the disk (resume boots it). */
  readonly keepMemory: boolean;
}

/** A running machine. */
export interface LaunchedSandbox {
  /** Stage timestamps of the launch, for per-stage latency. */
  readonly marks: LaunchMarks;
  /** Where a guest port is reachable from this host. */
  address(guestPort: number): GuestAddress;
  /** Resolves if the machine dies without being stopped or suspended. */
  readonly exited: Promise<LaunchExit>;
  /** Replaces the egress policy atomically; established allowed flows continue. */
  applyEgress(policy: EgressPolicy): Promise<void>;
  /**
   * Suspends the machine into a snapshot: guest paused, memory and device
   * state saved (when `keepMemory`), the VMM stopped, the disk sealed, and
   * everything the machine held (slot, export, upper) released. If it fails
   * before the VMM is gone, the machine runs on as before.
   */
  suspend(options: SuspendOptions): Promise<MachineSnapshot>;
  /**
   * Captures the machine into a snapshot and lets it run on: guest paused
   * for the capture only, memory and device state saved into `dir`, the
   * disk sealed (the machine continues on a fresh upper). The snapshot is
   * what forks and user snapshots restore from.
   */
  checkpoint(dir: string): Promise<MachineSnapshot>;
  /** Stops the machine and releases everything it held. Idempotent. */
  stop(): Promise<void>;
}

/** Starts machines. */
export interface SandboxLauncher {
  launch(spec: LaunchSpec, signal: AbortSignal): Promise<LaunchedSandbox>;
  /** Releases shared resources (pools, servers). */
  close(): Promise<void>;
}
