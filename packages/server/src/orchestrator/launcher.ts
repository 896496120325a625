/**
 * The seam between the orchestrator and what actually runs a sandbox.
 *
 * The orchestrator owns records, TTLs and the envd handshake; a launcher
 * owns the machine: network slot, drives and the VMM process. The microVM
 * launcher (`microvm-launcher.ts`) is the real one.
 *
 * @module
 */
import type { EgressPolicy } from '@aenv/network';
import type { GuestAddress } from './sandbox.js';

/** What a launcher needs to start one sandbox. */
export interface LaunchSpec {
  readonly sandboxId: string;
  readonly templateId: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  /** Egress policy in force from the first packet. */
  readonly egress: EgressPolicy;
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
  /** The guest init reported that it started envd (undefined if it never said so). */
  readonly initStartedAt: Promise<number | undefined>;
}

/** A running machine. */
export interface LaunchedSandbox {
  /** Stage timestamps of the launch, for per-stage latency. */
  readonly marks: LaunchMarks;
  /** Where a guest port is reachable from this host. */
  address(guestPort: number): GuestAddress;
  /** Resolves if the machine dies without being stopped. */
  readonly exited: Promise<LaunchExit>;
  /** Replaces the egress policy atomically; established allowed flows continue. */
  applyEgress(policy: EgressPolicy): Promise<void>;
  /** Stops the machine and releases everything it held. Idempotent. */
  stop(): Promise<void>;
}

/** Starts machines. */
export interface SandboxLauncher {
  launch(spec: LaunchSpec, signal: AbortSignal): Promise<LaunchedSandbox>;
  /** Releases shared resources (pools, servers). */
  close(): Promise<void>;
}
