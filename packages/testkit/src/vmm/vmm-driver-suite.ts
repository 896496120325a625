/**
 * `runVmmDriverSuite`: the conformance suite every VMM driver runs (style
 * R4), as `node:test` cases against real guests: boot → commands through
 * the real envd → pause (guest processes and the guest clock frozen) →
 * resume → snapshot → restore into a new VM with identical state (a file on
 * disk, a file in tmpfs, a running process and its memory) → several clones
 * of one snapshot running independently → a prepared restore → stop, with
 * nothing left running.
 *
 * A driver that deviates says so in `skip` (`{ reason, tests }`), so every
 * deviation is written down next to the driver; a host that cannot run the
 * suite at all says why through `unavailable`, and every case is reported
 * skipped with that reason.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SuiteSkip } from '@aenv/storage/testing';
import type { VmmDriver } from '@aenv/vmm';
import type { VmmSuiteGuest } from './suite-vm.js';
import {
  bootCase,
  clockFrozenCase,
  clonesCase,
  preparedRestoreCase,
  processesFrozenCase,
  restoreCase,
  snapshotCase,
  stopCase,
  type SuiteCase,
  type SuiteState,
} from './vmm-suite-cases.js';

/** The suite's cases by key; `skip` lists name them by these titles. */
export const VMM_SUITE_TESTS = {
  boot: 'boots and runs commands through envd',
  processesFrozen: 'a paused guest runs no processes',
  clockFrozen: "a paused guest's clock stands still",
  snapshot: 'a snapshot captures disk, tmpfs and processes and ends the VM',
  restore: 'a restore into a new VM is the same guest: files, memory, running processes',
  clones: 'clones of one snapshot run at once and independently',
  prepared: 'a prepared restore runs no guest code until completed',
  stop: 'stop is idempotent and leaves no VMM process',
} as const;

/** The title of one case. */
export type VmmSuiteTest = (typeof VMM_SUITE_TESTS)[keyof typeof VMM_SUITE_TESTS];

const CASES: readonly (readonly [VmmSuiteTest, SuiteCase])[] = [
  [VMM_SUITE_TESTS.boot, bootCase],
  [VMM_SUITE_TESTS.processesFrozen, processesFrozenCase],
  [VMM_SUITE_TESTS.clockFrozen, clockFrozenCase],
  [VMM_SUITE_TESTS.snapshot, snapshotCase],
  [VMM_SUITE_TESTS.restore, restoreCase],
  [VMM_SUITE_TESTS.clones, clonesCase],
  [VMM_SUITE_TESTS.prepared, preparedRestoreCase],
  [VMM_SUITE_TESTS.stop, stopCase],
];

/** A guest for the suite, with what to release after it. */
export interface VmmSuiteGuestSetup extends VmmSuiteGuest {
  /** Called once every VM has stopped (remove networks, disks). */
  readonly close?: () => Promise<void>;
}

/** Options of {@link runVmmDriverSuite}. */
export interface VmmDriverSuiteOptions {
  /** Shown in the suite's title. */
  readonly name: string;
  /** The driver under test. */
  readonly createDriver: () => Promise<VmmDriver>;
  /** The guest (artifacts, disks, networks); `workDir` is the suite's own temporary directory. */
  readonly guest: (workDir: string) => Promise<VmmSuiteGuestSetup>;
  /** Why this host cannot run the suite at all, or undefined when it can. */
  readonly unavailable?: () => Promise<string | undefined>;
  /** Cases the driver deviates from, each with the reason. */
  readonly skip?: readonly SuiteSkip[];
  /** Clones restored at once. @default 3 */
  readonly clones?: number;
  /** @default 1 */
  readonly vcpus?: number;
  /** @default 512 */
  readonly memoryMiB?: number;
  /** How long the pause cases keep the guest paused. @default 3000 */
  readonly pauseMs?: number;
  /** @default 900 000 */
  readonly timeoutMs?: number;
}

function skipReasonOf(skips: readonly SuiteSkip[] | undefined, test: string): string | undefined {
  return skips?.find((s) => s.tests.includes(test))?.reason;
}

/** Registers the VMM driver conformance suite for one driver. */
export function runVmmDriverSuite(o: VmmDriverSuiteOptions): void {
  describe(`VMM driver conformance: ${o.name}`, { timeout: o.timeoutMs ?? 900_000 }, async () => {
    const unavailable = await o.unavailable?.();
    let work: string | undefined;
    let guest: VmmSuiteGuestSetup | undefined;
    let state: SuiteState | undefined;

    before(async () => {
      if (unavailable !== undefined) return;
      work = await mkdtemp(join(tmpdir(), 'aenv-vmm-suite-'));
      const driver = await o.createDriver();
      guest = await o.guest(work);
      state = {
        ctx: {
          driver,
          guest,
          workDir: work,
          idPrefix: `vs${process.pid}`,
          vcpus: o.vcpus ?? 1,
          memoryMiB: o.memoryMiB ?? 512,
        },
        vms: [],
        prepared: [],
        clones: o.clones ?? 3,
        pauseMs: o.pauseMs ?? 3000,
      };
    });

    after(async () => {
      for (const p of state?.prepared ?? []) await p.close().catch(() => undefined);
      for (const v of state?.vms ?? []) await v.close().catch(() => undefined);
      await guest?.close?.();
      if (work !== undefined) await rm(work, { recursive: true, force: true });
    });

    for (const [title, fn] of CASES) {
      const skip = unavailable ?? skipReasonOf(o.skip, title);
      it(title, skip === undefined ? {} : { skip }, async (t) => {
        if (state === undefined) throw new Error('the suite did not start (see before)');
        await fn(state, t);
      });
    }
  });
}
