/**
 * What a restored guest is told through the real envd's `/init` (the daemon
 * does this after every restore): two clones of one snapshot get their own
 * entropy and the time, and then read different `/dev/urandom` bytes and
 * show the new time. (Right after boot the kernel reseeds every few
 * seconds, so this snapshot's clones may differ even before /init;
 * docs/snapshots.md has the measurement with a long-running guest, where
 * they do not.)
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
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
import { envdInit, envdRun } from './fixtures/envd-client.js';
import { guestArtifacts, type TestGuestArtifacts } from './fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, waitForHttp } from './fixtures/netns.js';

const run = promisify(execFile);
const GUEST = '10.208.0.2';
const BASE = `http://${GUEST}:49983`;
const MAC = '02:00:00:00:00:02';
const URANDOM = 'head -c 16 /dev/urandom | od -An -tx1 | tr -d " \\n"';

describe(
  'a restored guest told its entropy and time by the real envd',
  { timeout: 300_000 },
  async () => {
    const work = await mkdtemp(join(tmpdir(), 'aenv-vmm-identity-'));
    const cacheDir = process.env.AENV_TEST_CACHE ?? join(work, 'cache');
    const real = await guestArtifacts(cacheDir);
    const skip = typeof real === 'string' ? `real envd unavailable: ${real}` : false;
    const art = real as TestGuestArtifacts;
    const namespaces = ['src', 'c1', 'c2'].map((n) => `aenvi-${process.pid}-${n}`);
    const vms: Vm[] = [];
    let driver: VmmDriver;

    before(async () => {
      if (skip !== false) return;
      for (const ns of namespaces) await createNetns(ns, '10.208.0.1/30');
      const env = { AENV_QEMU_HELPER_DIR: join(work, 'helpers') };
      driver = (await createVmmDriver(loadConfig(vmmConfigSchema, { env }))).driver;
    });

    after(async () => {
      for (const vm of vms) await vm.stop({ graceMs: 0 }).catch(() => undefined);
      for (const ns of namespaces) await deleteNetns(ns);
      await rm(work, { recursive: true, force: true });
    });

    it(
      'gives two clones of one snapshot different random bytes and the time',
      { skip },
      async () => {
        const [src, ...clones] = namespaces as [string, string, string];
        const overlay = async (name: string, backing: string, format: string): Promise<string> => {
          const path = join(work, `${name}.qcow2`);
          await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', backing, '-F', format, path]);
          return path;
        };
        const drives = (rootfs: string): DriveSpec[] => [
          {
            id: 'rootfs',
            source: { kind: 'file', path: rootfs, format: 'qcow2' },
            readOnly: false,
          },
          {
            id: 'tools',
            source: { kind: 'file', path: art.toolsImage, format: 'raw' },
            readOnly: true,
          },
        ];
        const disk = await overlay('src', art.baseImage, 'raw');
        const vm = await driver.boot({
          id: 'identity-src',
          vcpus: 1,
          memoryMiB: 512,
          kernel: art.kernel,
          initrd: art.initrd,
          guest: { address: `${GUEST}/30`, gateway: '10.208.0.1' },
          drives: drives(disk),
          network: { netns: src, tap: 'tap0', mac: MAC },
          runDir: join(work, 'run-src'),
        });
        vms.push(vm);
        await waitForHttp(src, `${BASE}/health`, 204, 90_000);
        await vm.pause();
        await vm.snapshot({ dir: join(work, 'snap') });
        const pair = await Promise.all(
          clones.map(async (ns, i) =>
            driver.restore(
              { dir: join(work, 'snap') },
              {
                id: `identity-c${i}`,
                drives: drives(await overlay(`c${i}`, disk, 'qcow2')),
                network: { netns: ns, tap: 'tap0', mac: MAC },
                runDir: join(work, `run-c${i}`),
              },
            ),
          ),
        );
        vms.push(...pair);
        await Promise.all(clones.map((ns) => waitForHttp(ns, `${BASE}/health`, 204, 20_000)));
        const later = Math.floor(Date.now() / 1000) + 3600;
        for (const ns of clones) {
          const body = {
            entropy: randomBytes(64).toString('base64'),
            timestamp: new Date(later * 1000).toISOString(),
          };
          assert.equal(await envdInit(ns, BASE, body), 204);
        }
        const bytes = await Promise.all(clones.map((ns) => envdRun(ns, BASE, URANDOM)));
        assert.match(bytes[0] ?? '', /^[0-9a-f]{32}$/);
        assert.notEqual(bytes[0], bytes[1], 'the clones read different random bytes');
        for (const ns of clones) {
          const clock = Number(await envdRun(ns, BASE, 'date +%s'));
          assert.ok(Math.abs(clock - later) < 30, `the guest clock was set: ${clock} vs ${later}`);
        }
        assert.equal(await envdInit(clones[0], BASE, { entropy: 'not base64!' }), 400);
      },
    );
  },
);
