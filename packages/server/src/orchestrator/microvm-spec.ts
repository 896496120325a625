/**
 * What a sandbox's microVM is made of, as the VMM driver takes it: the
 * rootfs drive (the sandbox's disk) and the read-only tools drive, the
 * slot's namespace and tap with the fixed guest MAC, and the run directory
 * and serial log inside the machine's directory. Pure; shared by the
 * launcher's boots and restores and by prepared restores of the pool, so
 * a pooled machine is exactly what a launch would have started.
 *
 * @module
 */
import { join } from 'node:path';
import type { GuestArtifacts } from '@aenv/guest';
import { GUEST_MAC, type Slot } from '@aenv/network';
import type { DriveSpec, RestoreSpec } from '@aenv/vmm';
import type { SandboxDisk } from '../storage/sandbox-disk.js';

/** The drives of a sandbox VM: its rootfs disk, then the tools image. */
export function machineDrives(artifacts: GuestArtifacts, disk: SandboxDisk): DriveSpec[] {
  return [
    { id: artifacts.driveIds.rootfs, source: disk.source, readOnly: false },
    {
      id: artifacts.driveIds.tools,
      source: { kind: 'file', path: artifacts.toolsImage, format: 'raw' },
      readOnly: true,
    },
  ];
}

/** What a machine runs with. */
export interface MachineParts {
  readonly slot: Slot;
  readonly disk: SandboxDisk;
  /** The machine's directory (run directory, serial log, upper). */
  readonly dir: string;
}

/** The spec boots and restores share: id, drives, network, run directory, serial log. */
export function machineSpec(
  artifacts: GuestArtifacts,
  id: string,
  parts: MachineParts,
): RestoreSpec {
  return {
    id,
    drives: machineDrives(artifacts, parts.disk),
    network: { netns: parts.slot.netnsPath, tap: parts.slot.tapName, mac: GUEST_MAC },
    runDir: join(parts.dir, 'run'),
    serialLog: join(parts.dir, 'serial.log'),
  };
}
