/**
 * Crash points: named places in the sandbox lifecycle where the daemon can
 * be made to die at once (`SIGKILL` to itself, synchronously), to prove that
 * a crash at any step leaks nothing and loses nothing acknowledged
 * (`packages/cli/test/crash-points.vm.test.ts`).
 *
 * Contract: `AENV_CRASH_POINT=<name>` is read once, when this module loads;
 * {@link crashPoint} kills the process when its name equals it, and is a
 * single string comparison otherwise. The names form a closed list
 * ({@link CRASH_POINTS}); an unknown name in the variable is refused at
 * load, so a typo cannot silently test nothing. Each name is
 * `<operation>.<step>`, placed *after* that step has completed:
 *
 * | name                        | where                                                       |
 * | --------------------------- | ----------------------------------------------------------- |
 * | `launch.slot-taken`         | a fresh launch (create, resume, fork child) leased its slot |
 * | `launch.upper-created`      | …and exported its rootfs disk with a fresh upper            |
 * | `create.vmm-started`        | VMM restored (guest running, envd not asked yet)            |
 * | `create.envd-initialized`   | envd answered `/init`; record not stored                    |
 * | `create.recorded`           | record stored as running; before the answer (not a child)   |
 * | `pause.vm-paused`           | guest vCPUs stopped                                         |
 * | `pause.state-written`       | memory + device state saved, VMM stopped; disk not sealed   |
 * | `pause.recorded`            | record stored as paused, snapshot recorded                  |
 * | `pause.before-answer`       | old snapshot released; before the answer                    |
 * | `resume.vmm-restored`       | VMM restored from the pause snapshot                        |
 * | `resume.envd-initialized`   | envd answered `/init`; record not stored                    |
 * | `resume.recorded`           | record stored as running; before the answer                 |
 * | `snapshot.state-written`    | checkpoint (memory, device state, sealed disk) written      |
 * | `snapshot.recorded`         | snapshot recorded; before the answer                        |
 * | `fork.checkpointed`         | fork snapshot recorded, no child started                    |
 * | `fork.child-recorded`       | the first child stored as running, its siblings mid-way     |
 * | `kill.vm-stopped`           | VMM, disk, slot, directory released; record not removed     |
 * | `kill.record-removed`       | record removed; snapshots not released yet                  |
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Every crash point, in lifecycle order (see the module table). */
export const CRASH_POINTS = [
  'launch.slot-taken',
  'launch.upper-created',
  'create.vmm-started',
  'create.envd-initialized',
  'create.recorded',
  'pause.vm-paused',
  'pause.state-written',
  'pause.recorded',
  'pause.before-answer',
  'resume.vmm-restored',
  'resume.envd-initialized',
  'resume.recorded',
  'snapshot.state-written',
  'snapshot.recorded',
  'fork.checkpointed',
  'fork.child-recorded',
  'kill.vm-stopped',
  'kill.record-removed',
] as const;

/** One of {@link CRASH_POINTS}. */
export type CrashPointName = (typeof CRASH_POINTS)[number];

/** The environment variable naming the armed crash point. */
export const CRASH_POINT_ENV = 'AENV_CRASH_POINT';

/**
 * Parses the variable's value: undefined when unset or empty.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` for a name outside {@link CRASH_POINTS}.
 */
export function parseCrashPoint(value: string | undefined): CrashPointName | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(CRASH_POINTS as readonly string[]).includes(value)) {
    throw new AenvError(
      'CONFIG_INVALID_VALUE',
      `${CRASH_POINT_ENV}=${value} is not a crash point (one of ${CRASH_POINTS.join(', ')})`,
      { fields: { key: CRASH_POINT_ENV } },
    );
  }
  return value as CrashPointName;
}

const armed = parseCrashPoint(process.env[CRASH_POINT_ENV]);

/** Kills this process with `SIGKILL`, without returning, when `name` is the armed crash point. */
export function crashPoint(name: CrashPointName): void {
  if (armed !== name) return;
  process.kill(process.pid, 'SIGKILL');
}

/** The crash point after a started machine's record is stored. */
export function recordedPoint(op: 'create' | 'resume', forkChild: boolean): CrashPointName {
  if (op === 'resume') return 'resume.recorded';
  return forkChild ? 'fork.child-recorded' : 'create.recorded';
}
