/**
 * The cases of the VMM driver conformance suite (registered in order by
 * `vmm-driver-suite.ts`). They build on each other, as a VM's life does:
 * one booted VM is paused, then snapshotted; the snapshot is restored into
 * a new VM, into several clones and through a prepared restore. A case
 * whose prerequisite is missing (an earlier case failed or was skipped)
 * skips itself and says which.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DriveSpec } from '@aenv/vmm';
import {
  DISK_FILE,
  MEMORY_FILE,
  READ_FINGERPRINT,
  START_COUNTER,
  START_MEMORY_HOLDER,
  TMPFS_FILE,
  parseFingerprint,
  parseMemoryHolder,
  writeState,
  type GuestFingerprint,
} from './guest-programs.js';
import { counterRate, measurePause, type PauseWindow } from './pause-window.js';
import { SuiteVm, type PreparedSuiteVm, type SuiteVmContext } from './suite-vm.js';

/** State the cases share. */
export interface SuiteState {
  readonly ctx: SuiteVmContext;
  /** Every VM made, for the final checks and cleanup. */
  readonly vms: SuiteVm[];
  readonly prepared: PreparedSuiteVm[];
  readonly clones: number;
  readonly pauseMs: number;
  source?: SuiteVm;
  pause?: PauseWindow;
  snapshotDir?: string;
  /** The source's disk as of the snapshot. */
  snapshotDisk?: DriveSpec;
  /** The guest as the snapshot caught it. */
  fingerprint?: GuestFingerprint;
}

/** A suite case. */
export type SuiteCase = (s: SuiteState, t: TestContext) => Promise<void>;

/** `value`, or undefined after marking the test skipped for want of `what`. */
function need<T>(t: TestContext, value: T | undefined, what: string): T | undefined {
  if (value === undefined) t.skip(`needs ${what} (an earlier case failed or was skipped)`);
  return value;
}

async function fingerprint(v: SuiteVm): Promise<GuestFingerprint> {
  return parseFingerprint(await v.sh(READ_FINGERPRINT));
}

async function memoryRound(v: SuiteVm): Promise<number> {
  const m = parseMemoryHolder(await v.sh(`cat ${MEMORY_FILE} 2>/dev/null || echo none`));
  assert.ok(m?.ok === true, `${v.label}: the memory holder reports ${JSON.stringify(m)}`);
  return m.round;
}

/** Boots a VM, waits for envd and runs commands through it. */
export const bootCase: SuiteCase = async (s, t) => {
  const t0 = performance.now();
  const v = await SuiteVm.boot(s.ctx, 'src');
  s.vms.push(v);
  assert.equal(v.vm.state, 'running');
  assert.equal(v.vm.driver, s.ctx.driver.kind);
  assert.ok(typeof v.pid === 'number' && v.pid > 0, 'the VMM process runs');
  await v.waitForEnvd();
  t.diagnostic(
    `boot() ${Math.round(v.startMs)} ms; to envd healthy ${Math.round(performance.now() - t0)} ms`,
  );
  assert.equal(await v.sh('echo hello from $(id -un)'), 'hello from root\n');
  assert.equal((await v.sh('uname -n')).trim(), v.net.guest.hostname, 'boot parameters applied');
  await v.sh(START_COUNTER);
  s.source = v;
};

async function pauseWindow(s: SuiteState, t: TestContext): Promise<PauseWindow | undefined> {
  const v = need(t, s.source, 'the booted VM');
  if (v === undefined) return undefined;
  if (s.pause !== undefined) return s.pause;
  await v.sh(`until [ -s /tmp/aenv-counter ]; do sleep 0.1; done`);
  s.pause = await measurePause(v, s.pauseMs);
  const w = s.pause;
  t.diagnostic(
    `paused ${Math.round(w.pausedMs)} ms; guest could run ${Math.round(w.runningMaxMs)} ms around it`,
  );
  assert.equal(w.answeredWhilePaused, false, 'envd answered while the VM was paused');
  return w;
}

/** Pausing stops guest processes: a counter does not count through the pause. */
export const processesFrozenCase: SuiteCase = async (s, t) => {
  const w = await pauseWindow(s, t);
  if (w === undefined) return;
  const rate = counterRate(w);
  const counted = w.after.count - w.before.count;
  const bound = rate * w.runningMaxMs * 1.5 + 2;
  t.diagnostic(`counter: +${counted} across the pause, ${(rate * 1000).toFixed(1)}/s running`);
  // a counter that ran through the pause shows rate × (running + paused): it must exceed the bound
  assert.ok(
    rate * (w.runningMaxMs + w.pausedMs) > bound + 2,
    `the counter runs too slowly (${(rate * 1000).toFixed(2)}/s) to tell a pause`,
  );
  assert.ok(counted <= bound, `the counter advanced ${counted} (at most ${bound.toFixed(1)})`);
  assert.ok(w.later.count > w.after.count, 'the counter runs again after the resume');
};

/** Pausing stops the guest clock: its uptime advances only while it runs. */
export const clockFrozenCase: SuiteCase = async (s, t) => {
  const w = await pauseWindow(s, t);
  if (w === undefined) return;
  const advanced = w.after.uptimeMs - w.before.uptimeMs;
  const running = w.later.uptimeMs - w.after.uptimeMs;
  t.diagnostic(`guest clock: +${advanced} ms across a ${Math.round(w.pausedMs)} ms pause`);
  assert.ok(
    advanced <= w.runningMaxMs * 1.1 + 50,
    `the guest clock advanced ${advanced} ms, the guest ran at most ${Math.round(w.runningMaxMs)} ms`,
  );
  assert.ok(
    running >= s.pauseMs * 0.8 && running <= w.laterMaxMs * 1.1 + 50,
    `the running guest's clock advanced ${running} ms in ${s.pauseMs}..${Math.round(w.laterMaxMs)} ms`,
  );
};

/** State on disk, in tmpfs and in a process's memory, then a snapshot that ends the VM. */
export const snapshotCase: SuiteCase = async (s, t) => {
  const v = need(t, s.source, 'the booted VM');
  if (v === undefined) return;
  const token = `token-${Date.now().toString(36)}`;
  await v.sh(writeState(token, 8));
  await v.sh(START_MEMORY_HOLDER);
  await v.sh(`until [ -s ${MEMORY_FILE} ]; do sleep 0.1; done`);
  const f = await fingerprint(v);
  assert.equal(f.diskToken, token);
  assert.ok(f.memory?.ok === true && f.counterPid !== undefined, JSON.stringify(f));
  await v.vm.pause();
  const dir = `${s.ctx.workDir}/snapshot`;
  const t0 = performance.now();
  const m = await v.vm.snapshot({ dir });
  t.diagnostic(`snapshot: ${Math.round(performance.now() - t0)} ms, state ${m.state.bytes} bytes`);
  assert.equal(m.driver, s.ctx.driver.kind);
  assert.equal(m.mode, s.ctx.driver.mode);
  assert.equal(m.machine.memoryMiB, s.ctx.memoryMiB);
  const toolsId = s.ctx.guest.driveIds?.tools ?? 'tools';
  assert.deepEqual(
    m.drives.map((d) => d.id),
    [v.rootfs.id, toolsId],
  );
  assert.equal((await v.vm.wait()).reason, 'snapshot');
  assert.equal(v.vm.state, 'stopped');
  assert.equal(v.vm.pid, undefined);
  Object.assign(s, { snapshotDir: dir, snapshotDisk: v.rootfs, fingerprint: f });
};

/** Checks that `v` is the snapshot's guest, still running its processes with their memory. */
async function assertSameGuest(v: SuiteVm, f0: GuestFingerprint): Promise<void> {
  const f = await fingerprint(v);
  assert.equal(f.hostname, f0.hostname, `${v.label}: hostname`);
  assert.equal(f.diskToken, f0.diskToken, `${v.label}: the file on disk`);
  assert.equal(f.tmpfsDigest, f0.tmpfsDigest, `${v.label}: the file in tmpfs (guest RAM)`);
  assert.equal(f.counterPid, f0.counterPid, `${v.label}: the counter process`);
  assert.equal(f.memory?.pid, f0.memory?.pid, `${v.label}: the memory holder process`);
  assert.equal(f.memory?.digest, f0.memory?.digest, `${v.label}: the memory holder's bytes`);
  const round = await memoryRound(v);
  await sleep(1200);
  assert.ok((await memoryRound(v)) > round, `${v.label}: the memory holder runs on`);
}

/** A restore into a new VM (new id, network, disk) is the snapshot's guest. */
export const restoreCase: SuiteCase = async (s, t) => {
  const dir = need(t, s.snapshotDir, 'the snapshot');
  const f0 = need(t, s.fingerprint, 'the snapshot');
  if (dir === undefined || f0 === undefined) return;
  const v = await SuiteVm.restore(s.ctx, 'restored', dir, s.snapshotDisk as DriveSpec);
  s.vms.push(v);
  assert.equal(v.vm.state, 'running');
  assert.equal(v.vm.id, `${s.ctx.idPrefix}-restored`);
  const envdMs = await v.waitForEnvd();
  t.diagnostic(
    `restore() ${Math.round(v.startMs)} ms; then envd healthy after ${Math.round(envdMs)} ms`,
  );
  await assertSameGuest(v, f0);
};

/** Clones of one snapshot run at once and independently. */
export const clonesCase: SuiteCase = async (s, t) => {
  const dir = need(t, s.snapshotDir, 'the snapshot');
  const f0 = need(t, s.fingerprint, 'the snapshot');
  if (dir === undefined || f0 === undefined) return;
  const labels = Array.from({ length: s.clones }, (_, i) => `clone${i}`);
  const t0 = performance.now();
  const clones = await Promise.all(
    labels.map((l) => SuiteVm.restore(s.ctx, l, dir, s.snapshotDisk as DriveSpec)),
  );
  s.vms.push(...clones);
  await Promise.all(clones.map((c) => c.waitForEnvd()));
  const slowest = Math.max(...clones.map((c) => c.startMs));
  t.diagnostic(
    `${s.clones} clones at once: slowest restore() ${Math.round(slowest)} ms; all envd healthy ${Math.round(performance.now() - t0)} ms after the start (networks and disks included)`,
  );
  assert.equal(new Set(clones.map((c) => c.pid)).size, clones.length, 'one VMM process each');
  await Promise.all(
    clones.map((c) =>
      c.sh(`echo ${c.label} > ${DISK_FILE}.own && echo ${c.label} > ${TMPFS_FILE}.own`),
    ),
  );
  const [first] = clones as [SuiteVm];
  await first.sh(`kill ${f0.memory?.pid}`);
  for (const c of clones) {
    const own = await c.sh(`cat ${DISK_FILE}.own ${TMPFS_FILE}.own`);
    assert.equal(own, `${c.label}\n${c.label}\n`, `${c.label} sees only its own writes`);
    assert.equal((await fingerprint(c)).tmpfsDigest, f0.tmpfsDigest);
  }
  const gone = await first.sh(`kill -0 ${f0.memory?.pid} 2>/dev/null && echo alive || echo gone`);
  assert.equal(gone.trim(), 'gone');
  for (const c of clones.slice(1)) await memoryRound(c);
  await Promise.all(clones.map((c) => c.close()));
};

/** A prepared restore runs no guest code until completed, and can be cancelled. */
export const preparedRestoreCase: SuiteCase = async (s, t) => {
  const dir = need(t, s.snapshotDir, 'the snapshot');
  const f0 = need(t, s.fingerprint, 'the snapshot');
  if (dir === undefined || f0 === undefined) return;
  const disk = s.snapshotDisk as DriveSpec;
  if (!s.ctx.driver.capabilities.has('prepared-restore')) {
    await assert.rejects(
      s.ctx.driver.prepareRestore({ dir }, { id: 'x', drives: [], runDir: s.ctx.workDir }),
      (e: Error & { code?: string }) => e.code === 'VMM_NOT_SUPPORTED',
    );
    t.diagnostic('no prepared-restore capability: VMM_NOT_SUPPORTED, as documented');
    return;
  }
  const [kept, dropped] = await Promise.all([
    SuiteVm.prepare(s.ctx, 'prepared', dir, disk),
    SuiteVm.prepare(s.ctx, 'dropped', dir, disk),
  ]);
  s.prepared.push(kept, dropped);
  assert.equal(kept.prepared.state, 'waiting');
  assert.ok((kept.prepared.pid ?? 0) > 0, 'the VMM process waits');
  await sleep(500);
  assert.equal(await envdAnswers(kept), false, 'a prepared guest does not run');
  const droppedPid = dropped.prepared.pid as number;
  await dropped.close();
  assert.equal(dropped.prepared.state, 'cancelled');
  assert.equal(alive(droppedPid), false, 'a cancelled prepared restore leaves no process');
  const v = await kept.take('taken');
  s.vms.push(v);
  const envdMs = await v.waitForEnvd();
  t.diagnostic(
    `complete() ${Math.round(v.startMs)} ms; then envd healthy after ${Math.round(envdMs)} ms`,
  );
  assert.equal(v.vm.id, `${s.ctx.idPrefix}-taken`);
  assert.equal(kept.prepared.state, 'completed');
  await assert.rejects(
    kept.prepared.complete(),
    (e: Error & { code?: string }) => e.code === 'VMM_INVALID_STATE',
  );
  await assertSameGuest(v, f0);
};

async function envdAnswers(p: PreparedSuiteVm): Promise<boolean> {
  return p.net.envd.fetch('GET', '/health', { timeoutMs: 500 }).then(
    () => true,
    () => false,
  );
}

/** Whether a process exists. */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stopping is idempotent and leaves no VMM process. */
export const stopCase: SuiteCase = async (s) => {
  assert.ok(s.vms.length > 0, 'no VM was made');
  for (const v of s.vms) {
    const first = await v.vm.stop();
    assert.deepEqual(await v.vm.stop(), first, `${v.label}: a second stop answers the same`);
    assert.equal(v.vm.state, 'stopped');
    assert.equal(alive(v.pid), false, `${v.label}: VMM process ${v.pid} is gone`);
    await v.close();
  }
};
