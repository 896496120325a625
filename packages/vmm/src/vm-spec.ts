/**
 * Validation of {@link VmSpec} and {@link RestoreSpec}, shared by every
 * driver: ids, sizes, drive ids and sources, MAC and paths. Pure; throws
 * `INVALID_ARGUMENT` naming the field, before anything is started.
 *
 * @module
 */
import { isAbsolute } from 'node:path';
import type { DriveSpec, NetworkSpec, RestoreSpec, VmSpec } from './driver.js';
import { invalidSpec } from './errors.js';

const VM_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const DRIVE_ID = /^[a-z0-9][a-z0-9-]{0,19}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;
const IFNAME = /^[A-Za-z0-9_.-]{1,15}$/;
/** Longest unix socket path (`sun_path` is 108 bytes with the NUL). */
export const MAX_SOCKET_PATH = 107;

function assertAbsolute(field: string, path: string): void {
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw invalidSpec(field, `must be an absolute path, got ${JSON.stringify(path)}`);
  }
}

function assertIntIn(field: string, value: number, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidSpec(field, `must be an integer in [${min}, ${max}], got ${value}`);
  }
}

/** Checks drive ids (unique, serial-safe) and sources. */
export function validateDrives(drives: readonly DriveSpec[]): void {
  const seen = new Set<string>();
  drives.forEach((d, i) => {
    const field = `drives[${i}]`;
    if (!DRIVE_ID.test(d.id))
      throw invalidSpec(`${field}.id`, `must match ${DRIVE_ID}, got ${JSON.stringify(d.id)}`);
    if (seen.has(d.id)) throw invalidSpec(`${field}.id`, `${d.id} is used twice`);
    seen.add(d.id);
    if (d.source.kind === 'file') {
      assertAbsolute(`${field}.source.path`, d.source.path);
      if (d.source.format !== 'raw' && d.source.format !== 'qcow2') {
        throw invalidSpec(`${field}.source.format`, `must be raw or qcow2`);
      }
    } else {
      assertAbsolute(`${field}.source.socket`, d.source.socket);
      if (d.source.export === '') throw invalidSpec(`${field}.source.export`, 'must not be empty');
    }
  });
}

/** Checks the network interface. */
export function validateNetwork(net: NetworkSpec): void {
  if (!IFNAME.test(net.tap))
    throw invalidSpec('network.tap', `is not an interface name: ${JSON.stringify(net.tap)}`);
  if (!MAC.test(net.mac))
    throw invalidSpec('network.mac', `is not a MAC address: ${JSON.stringify(net.mac)}`);
  if (net.netns !== undefined && !(isAbsolute(net.netns) || /^[A-Za-z0-9_.-]+$/.test(net.netns))) {
    throw invalidSpec(
      'network.netns',
      `must be a namespace name or an absolute path, got ${JSON.stringify(net.netns)}`,
    );
  }
}

/**
 * Checks a VM id.
 * @throws {AenvError} `INVALID_ARGUMENT`.
 */
export function validateVmId(id: string): void {
  if (!VM_ID.test(id)) throw invalidSpec('id', `must match ${VM_ID}, got ${JSON.stringify(id)}`);
}

function validateCommon(spec: VmSpec | RestoreSpec, longestRunFile: string): void {
  validateVmId(spec.id);
  assertAbsolute('runDir', spec.runDir);
  if (Buffer.byteLength(`${spec.runDir}/${longestRunFile}`) > MAX_SOCKET_PATH) {
    throw invalidSpec(
      'runDir',
      `is too long for unix sockets inside it (${MAX_SOCKET_PATH} bytes)`,
    );
  }
  if (spec.serialLog !== undefined) assertAbsolute('serialLog', spec.serialLog);
  if (spec.serialLogMaxBytes !== undefined)
    assertIntIn('serialLogMaxBytes', spec.serialLogMaxBytes, 4096, 2 ** 40);
  validateDrives(spec.drives);
  if (spec.network !== undefined) validateNetwork(spec.network);
}

/**
 * Validates a boot spec.
 * @param longestRunFile the longest socket name the driver creates in `runDir`
 * @throws {AenvError} `INVALID_ARGUMENT`.
 */
export function validateVmSpec(spec: VmSpec, longestRunFile = 'serial.sock'): void {
  validateCommon(spec, longestRunFile);
  assertIntIn('vcpus', spec.vcpus, 1, 64);
  assertIntIn('memoryMiB', spec.memoryMiB, 64, 262_144);
  assertAbsolute('kernel', spec.kernel);
  if (spec.initrd !== undefined) assertAbsolute('initrd', spec.initrd);
}

/**
 * Validates a restore spec.
 * @throws {AenvError} `INVALID_ARGUMENT`.
 */
export function validateRestoreSpec(spec: RestoreSpec, longestRunFile = 'serial.sock'): void {
  validateCommon(spec, longestRunFile);
}
