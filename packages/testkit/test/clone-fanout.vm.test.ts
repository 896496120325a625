// Sixteen clones of one snapshot (issue #7), with the qemu driver under TCG
// and the real envd: a VM writes a 100 MiB file into tmpfs (guest RAM) and
// is snapshotted; 16 clones are restored at once, each in its own network
// and on its own disk; every clone answers, overwrites its own MiB of the
// file, and sees its own copy (16 distinct digests, the untouched part
// identical to the source's). The memory the 16 VMMs take together (the sum
// of their Pss: a page shared by n processes counts 1/n in each) and the
// drop of MemAvailable are printed; the Pss total must be far below
// 16 × the guest's RAM, since clones share the snapshot's pages.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import { createVmmDriver, vmmConfigSchema } from '@aenv/vmm';
import {
  SuiteVm,
  TapNetworks,
  memAvailable,
  mib,
  qcow2Disks,
  qemuVmSkipReason,
  testGuestArtifacts,
  totalPss,
  type SuiteNetwork,
  type SuiteVmContext,
  type TestGuestArtifacts,
} from '../src/index.js';

const CLONES = 16;
const FILE_MIB = 100;
const MEMORY_MIB = 1024;
const BIG = '/dev/shm/aenv-big';
// the part no clone writes: everything after the first CLONES MiB
const TAIL_DIGEST = `tail -c +$((${CLONES} * 1048576 + 1)) ${BIG} | sha256sum | cut -c1-64`;
const FULL_DIGEST = `sha256sum ${BIG} | cut -c1-64`;

async function why(): Promise<string | TestGuestArtifacts> {
  return (await qemuVmSkipReason()) ?? testGuestArtifacts();
}

describe(`${CLONES} clones of one snapshot (qemu)`, { timeout: 900_000 }, async () => {
  const found = await why();
  const skip = typeof found === 'string' ? found : false;
  if (skip !== false) console.log(`# clone fan-out skipped: ${skip}`);
  let work = '';
  let networks: TapNetworks;
  let ctx: SuiteVmContext;
  const premade = new Map<string, SuiteNetwork>();
  const vms: SuiteVm[] = [];

  before(async () => {
    if (skip !== false) return;
    const a = found as TestGuestArtifacts;
    work = await mkdtemp(join(tmpdir(), 'aenv-fanout-'));
    networks = new TapNetworks(join(work, 'net'), `tkc${process.pid}`);
    const config = loadConfig(vmmConfigSchema, { env: { AENV_VMM_DRIVER: 'qemu' } });
    ctx = {
      driver: (await createVmmDriver(config)).driver,
      guest: {
        kernel: a.kernel,
        initrd: a.initrd,
        toolsImage: a.toolsImage,
        driveIds: a.driveIds,
        disks: qcow2Disks(join(work, 'disks'), a.baseImage),
        network: async (label) => premade.get(label) ?? networks.create(label),
      },
      workDir: work,
      idPrefix: `fo${process.pid}`,
      vcpus: 1,
      memoryMiB: MEMORY_MIB,
    };
  });

  after(async () => {
    for (const v of vms) await v.close().catch(() => undefined);
    if (skip !== false) return;
    assert.deepEqual(await networks.leftovers(), [], 'every network was removed with its VM');
    await networks.close();
    await rm(work, { recursive: true, force: true });
  });

  it(
    `all ${CLONES} answer and change their own copy of a ${FILE_MIB} MiB tmpfs file, sharing the rest`,
    { skip },
    async () => {
      const src = await SuiteVm.boot(ctx, 'src');
      vms.push(src);
      await src.waitForEnvd();
      await src.sh(`head -c ${FILE_MIB}M /dev/urandom > ${BIG} && sync`);
      const [tail, full] = (await src.sh(`${TAIL_DIGEST}; ${FULL_DIGEST}`)).trim().split('\n');
      await src.vm.pause();
      const dir = join(work, 'snapshot');
      await src.vm.snapshot({ dir });
      const labels = Array.from({ length: CLONES }, (_, i) => `c${i}`);
      for (const l of labels) premade.set(l, await networks.create(l));
      const avail0 = await memAvailable();
      const t0 = performance.now();
      const clones = await Promise.all(labels.map((l) => SuiteVm.restore(ctx, l, dir, src.rootfs)));
      vms.push(...clones);
      const running = performance.now() - t0;
      await Promise.all(clones.map((c) => c.waitForEnvd()));
      console.log(
        `# ${CLONES} restores at once: running after ${Math.round(running)} ms, all envd healthy after ${Math.round(performance.now() - t0)} ms`,
      );
      const digests = await Promise.all(
        clones.map(async (c, i) => {
          const own = `head -c 1M /dev/urandom | dd of=${BIG} bs=1M seek=${i} count=1 conv=notrunc status=none`;
          const out = await c.sh(`${own} && ${TAIL_DIGEST} && ${FULL_DIGEST}`);
          return out.trim().split('\n');
        }),
      );
      const pss = await totalPss(clones.map((c) => c.vm.pid as number));
      const drop = avail0 - (await memAvailable());
      const ram = CLONES * MEMORY_MIB * 2 ** 20;
      console.log(
        `# host memory of ${CLONES} clones of a ${MEMORY_MIB} MiB guest holding ${FILE_MIB} MiB in tmpfs: ` +
          `Pss total ${mib(pss)} (${mib(pss / CLONES)} each), MemAvailable down ${mib(drop)}; ` +
          `${CLONES} × guest RAM = ${mib(ram)} (${(ram / pss).toFixed(1)}× the Pss total)`,
      );
      for (const [i, [cloneTail, cloneFull]] of digests.entries()) {
        assert.equal(cloneTail, tail, `c${i}: the part it did not write is the source's`);
        assert.notEqual(cloneFull, full, `c${i}: its copy changed`);
      }
      assert.equal(new Set(digests.map((d) => d[1])).size, CLONES, 'every clone has its own copy');
      assert.ok(pss < ram / 4, `the clones take ${mib(pss)}, not far below ${mib(ram)}`);
      await Promise.all(clones.map((c) => c.close()));
      await src.close();
    },
  );
});
