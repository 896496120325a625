/**
 * Starting a sandbox's machine, shared by create and resume: launch (boot
 * or restore) → wait for envd → `/init` with the sandbox's env vars, token,
 * the current time and fresh entropy. Returns the machine and per-stage
 * timings; on failure or abort, whatever was started is stopped.
 *
 * @module
 */
import { Cleanup, toAenvError } from '@aenv/shared';
import { crashPoint } from './crash-point.js';
import { ENVD_PORT, initEnvd, waitForEnvd } from './envd-client.js';
import type { LaunchedSandbox, LaunchSource, SandboxLauncher } from './launcher.js';
import type { SandboxRecord } from './sandbox.js';
import { noSpaceOr } from '../storage/no-space.js';

/** What {@link startMachine} needs. */
export interface StartMachineOptions {
  readonly launcher: SandboxLauncher;
  readonly record: SandboxRecord;
  readonly source: LaunchSource;
  readonly envdReadyTimeoutMs: number;
  /** The token envd holds already (a snapshot of an initialized sandbox). */
  readonly currentToken: string | undefined;
  readonly signal: AbortSignal;
  /** Which operation starts it (names its crash points). */
  readonly op: 'create' | 'resume';
  readonly onLateError: (err: unknown, label: string) => void;
}

/** A started machine and how long each stage took (ms). */
export interface StartedMachine {
  readonly machine: LaunchedSandbox;
  readonly timings: Record<string, number>;
}

/**
 * Starts the machine of `record` from `source`.
 * @throws {AenvError} `SBX_START_TIMEOUT`, `SBX_ENVD_FAILED`, launcher errors,
 *   or the abort reason.
 */
export async function startMachine(o: StartMachineOptions): Promise<StartedMachine> {
  const { record, signal } = o;
  const started = performance.now();
  await using cleanup = new Cleanup({ onLateError: o.onLateError });
  try {
    const machine = await o.launcher.launch(
      {
        sandboxId: record.id,
        vcpus: record.vcpus,
        memoryMiB: record.memoryMiB,
        egress: record.network.egress,
        source: o.source,
      },
      signal,
    );
    cleanup.add('stop machine', () => machine.stop());
    crashPoint(o.op === 'create' ? 'create.vmm-started' : 'resume.vmm-restored');
    const envd = machine.address(ENVD_PORT);
    await waitForEnvd(envd, o.envdReadyTimeoutMs, signal);
    const envdReadyAt = performance.now();
    const defaults = record.envdDefaults;
    await initEnvd(envd, {
      envVars: { ...defaults?.envVars, ...record.envVars },
      accessToken: record.envdAccessToken,
      currentToken: o.currentToken,
      defaultUser: defaults?.user,
      defaultWorkdir: defaults?.workdir,
    });
    crashPoint(o.op === 'create' ? 'create.envd-initialized' : 'resume.envd-initialized');
    signal.throwIfAborted();
    const timings = await stageTimings(machine, started, envdReadyAt);
    cleanup.move();
    return { machine, timings };
  } catch (err) {
    const reason: unknown = signal.aborted ? signal.reason : err;
    // A full disk (a directory, the upper, the VMM's files) is 507, not a failed start.
    throw noSpaceOr(
      toAenvError(reason, 'SBX_START_FAILED', 'the sandbox machine failed to start'),
      'starting the sandbox',
    );
  }
}

async function stageTimings(
  machine: LaunchedSandbox,
  started: number,
  envdReadyAt: number,
): Promise<Record<string, number>> {
  const { marks } = machine;
  const initAt = await Promise.race([marks.initStartedAt, Promise.resolve(undefined)]);
  const round = (ms: number): number => Math.round(ms * 10) / 10;
  const now = performance.now();
  const out: Record<string, number> = {
    vmmSpawn: round(marks.vmmRunningAt - marks.startedAt),
    envdInit: round(now - envdReadyAt),
    total: round(now - started),
  };
  if (initAt === undefined) {
    out.guestToEnvdReady = round(envdReadyAt - marks.vmmRunningAt);
  } else {
    out.kernelToInit = round(initAt - marks.vmmRunningAt);
    out.initToEnvdReady = round(envdReadyAt - initAt);
  }
  return out;
}
