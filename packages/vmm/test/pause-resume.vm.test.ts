/**
 * The daemon's hot path with a real guest under TCG, twenty times over:
 * restore → pause → snapshot (the VM ends into it) → restore of that
 * snapshot → ..., each time checking a file on disk, a file in guest
 * memory (tmpfs), and a long-running counter process that also verifies a
 * block of its own memory against a checksum. Each snapshot of a restored
 * VM is the template's base file (hard link) plus a RAM diff; the previous
 * snapshot directory is deleted after each restore, so nothing depends on
 * a parent directory. Costs are printed (not asserted).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import {
  createVmmDriver,
  vmmConfigSchema,
  type DriveSpec,
  type Vm,
  type VmmDriver,
} from '../src/index.js';
import { writeEnvdStandIn } from './fixtures/envd-stand-in.js';
import { guestArtifacts, type TestGuestArtifacts } from './fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, httpInNetns, waitForHttp } from './fixtures/netns.js';

const run = promisify(execFile);
const CYCLES = 20;
const NS = `aenvp-${process.pid}`;
const GUEST = '10.207.0.2';
const MAC = '02:00:00:00:00:02';
const url = (path: string): string => `http://${GUEST}:49983${path}`;

async function exec(cmd: string): Promise<string> {
  const a = await httpInNetns(NS, url('/exec'), { method: 'POST', body: cmd, timeoutMs: 30_000 });
  assert.equal(a.status, 200, `exec: ${a.status} ${a.body}`);
  const r = JSON.parse(a.body) as { code: number; stdout: string; stderr: string };
  assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
  return r.stdout;
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

// Runs in the guest: counts forever, and checks 8 MiB of its own memory
// against the checksum it took at the start.
const COUNTER = `python3 -c '
import hashlib, os, time
blob = os.urandom(8 << 20)
want = hashlib.sha256(blob).hexdigest()
n = 0
while True:
    n += 1
    ok = hashlib.sha256(blob).hexdigest() == want
    with open("/tmp/counter.tmp", "w") as f:
        f.write("%d %s\\n" % (n, "ok" if ok else "CORRUPT"))
    os.rename("/tmp/counter.tmp", "/tmp/counter")
    time.sleep(0.1)
' >/dev/null 2>&1 &`;

/** What the guest reports: counter value and state, the disk file, the tmpfs file's digest. */
interface GuestView {
  readonly count: number;
  readonly state: string;
  readonly file: string;
  readonly shm: string;
}

async function look(): Promise<GuestView> {
  const out = await exec('cat /tmp/counter /root/file; sha256sum /dev/shm/blob | cut -c1-16');
  const [counter = '', file = '', shm = ''] = out.trim().split('\n');
  const [count, state = ''] = counter.split(' ');
  return { count: Number(count), state, file, shm };
}

describe('pause and resume through snapshots, twenty times', { timeout: 900_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-vmm-cycle-'));
  const cacheDir = process.env.AENV_TEST_CACHE ?? join(work, 'cache');
  const standIn = await writeEnvdStandIn(join(work, 'envd-stand-in'));
  const guest = await guestArtifacts(cacheDir, standIn.dir);
  const skip = typeof guest === 'string' ? guest : false;
  const art = guest as TestGuestArtifacts;
  let driver: VmmDriver;
  let vm: Vm | undefined;

  before(async () => {
    if (skip !== false) return;
    await createNetns(NS, '10.207.0.1/30');
    const env = { AENV_QEMU_HELPER_DIR: join(work, 'helpers') };
    driver = (await createVmmDriver(loadConfig(vmmConfigSchema, { env }))).driver;
  });

  after(async () => {
    await vm?.stop({ graceMs: 0 }).catch(() => undefined);
    await deleteNetns(NS);
    await rm(work, { recursive: true, force: true });
  });

  it('keeps files, memory and a running process across every cycle', { skip }, async () => {
    const disk = join(work, 'rootfs.qcow2');
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', art.baseImage, '-F', 'raw', disk]);
    const drives: DriveSpec[] = [
      { id: 'rootfs', source: { kind: 'file', path: disk, format: 'qcow2' }, readOnly: false },
      {
        id: 'tools',
        source: { kind: 'file', path: art.toolsImage, format: 'raw' },
        readOnly: true,
      },
    ];
    const network = { netns: NS, tap: 'tap0', mac: MAC };
    vm = await driver.boot({
      id: 'cycle-boot',
      vcpus: 1,
      memoryMiB: 256,
      kernel: art.kernel,
      initrd: art.initrd,
      guest: { address: `${GUEST}/30`, gateway: '10.207.0.1' },
      drives,
      network,
      runDir: join(work, 'run-boot'),
    });
    await waitForHttp(NS, url('/health'), 204, 90_000);
    await exec(
      `echo boot > /root/file; head -c 16M /dev/urandom > /dev/shm/blob; sync; ${COUNTER}`,
    );
    await new Promise((r) => setTimeout(r, 1500));
    let seen = await look();
    assert.equal(seen.state, 'ok');
    await vm.pause();
    let snap = join(work, 'snap-0');
    const template = await vm.snapshot({ dir: snap });
    const baseDigest = await sha256(join(snap, 'memory'));
    const costs: string[] = [];
    for (let i = 1; i <= CYCLES; i++) {
      const t0 = performance.now();
      vm = await driver.restore(
        { dir: snap },
        { id: `cycle-${i}`, drives, network, runDir: join(work, `run-${i}`) },
      );
      const restoreMs = performance.now() - t0;
      // the previous snapshot (the template too) is consumed: nothing needs it any more
      await rm(snap, { recursive: true, force: true });
      const back = await look();
      assert.equal(back.state, 'ok', `cycle ${i}: the counter's memory check`);
      assert.ok(
        back.count >= seen.count,
        `cycle ${i}: counter went back ${seen.count} -> ${back.count}`,
      );
      assert.equal(back.file, seen.file, `cycle ${i}: disk file`);
      assert.equal(back.shm, seen.shm, `cycle ${i}: tmpfs file`);
      await new Promise((r) => setTimeout(r, 300));
      const later = await look();
      assert.ok(later.count > back.count, `cycle ${i}: the counter runs on`);
      if (i % 2 === 0) {
        // an in-place pause too: the guest stops and continues
        await vm.pause();
        await vm.resume();
      }
      await exec(`echo cycle-${i} > /root/file; head -c 4M /dev/urandom > /dev/shm/blob; sync`);
      seen = await look();
      await vm.pause();
      const t1 = performance.now();
      snap = join(work, `snap-${i}`);
      const m = await vm.snapshot({ dir: snap });
      const snapshotMs = performance.now() - t1;
      assert.equal(m.memory.baseId, template.memory.baseId, 'every cycle shares the template base');
      assert.equal(m.memory.diff?.file, 'memory.diff');
      assert.ok((m.memory.diff?.bytes ?? 0) < 256 << 20);
      costs.push(
        `${i}: restore ${Math.round(restoreMs)} ms, snapshot ${Math.round(snapshotMs)} ms, diff ${((m.memory.diff?.bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
      );
    }
    console.log(costs.join('\n'));
    // the template's base file outlived its directory, unchanged, in the last snapshot
    assert.equal(await sha256(join(snap, 'memory')), baseDigest);
    await assert.rejects(stat(join(work, 'snap-0')));
  });
});
