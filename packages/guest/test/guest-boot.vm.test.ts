// Builds the guest artifacts for real (kernel from Debian's apt, busybox
// initramfs, static init, node runtime, erofs tools image, debootstrap base
// image) and boots them under QEMU TCG in a throwaway network namespace:
// the initramfs finds the drives, configures the network from the kernel
// command line, the init runs envd, reaps orphans and restarts envd; the
// base image has its user, sudo, python3, git and curl. With the envd
// stand-in for the init checks, then with the real envd bundle.
//
// Artifacts go to $AENV_TEST_CACHE when set (kept between runs: the base
// image takes about a minute to build), else to a temp dir removed after.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  ENVD_PORT,
  GUEST_STAGES,
  INIT_STARTED_MARKER,
  defaultEnvdBundle,
  prepareGuestArtifacts,
  type GuestArtifacts,
  type GuestProgressEvent,
} from '../src/index.js';
import { writeEnvdStandIn, STAND_IN_READY } from './fixtures/envd-stand-in.js';
import { createNetns, deleteNetns, httpInNetns, waitForHttp } from './fixtures/netns.js';
import { launchGuest, type LaunchedGuest } from './fixtures/qemu-launch.js';

const run = promisify(execFile);
const NS = `aenvg-${process.pid}`;
const GUEST = '10.200.0.2';
const url = (path: string): string => `http://${GUEST}:${ENVD_PORT}${path}`;

async function exec(cmd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const a = await httpInNetns(NS, url('/exec'), { method: 'POST', body: cmd, timeoutMs: 15_000 });
  assert.equal(a.status, 200, `exec ${cmd}: ${a.status} ${a.body}`);
  return JSON.parse(a.body) as { code: number; stdout: string; stderr: string };
}

describe('guest artifacts boot under QEMU TCG', { timeout: 600_000 }, () => {
  let work = '';
  let cacheDir = '';
  let artifacts: GuestArtifacts;
  const events: GuestProgressEvent[] = [];
  const guests: LaunchedGuest[] = [];

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-guest-vm-'));
    cacheDir = process.env.AENV_TEST_CACHE ?? join(work, 'cache');
    const envd = await writeEnvdStandIn(join(work, 'envd-stand-in'));
    const started = performance.now();
    artifacts = await prepareGuestArtifacts({ cacheDir, envd, onProgress: (e) => events.push(e) });
    console.log(
      `# artifacts ready in ${Math.round(performance.now() - started)} ms (cache ${cacheDir})`,
    );
    await createNetns(NS, '10.200.0.1/30');
  });

  after(async () => {
    for (const g of guests) await g.kill();
    await deleteNetns(NS);
    await rm(work, { recursive: true, force: true });
  });

  async function boot(toolsImage: string, name: string): Promise<LaunchedGuest> {
    const rootfs = join(work, `${name}.qcow2`);
    await run('qemu-img', [
      'create',
      '-q',
      '-f',
      'qcow2',
      '-b',
      artifacts.baseImage as string,
      '-F',
      'raw',
      rootfs,
    ]);
    const guest = await launchGuest({
      kernel: artifacts.kernel,
      initrd: artifacts.initrd,
      rootfs,
      tools: toolsImage,
      netns: NS,
      mac: '02:00:00:00:00:02',
      params: [
        `aenv.hostname=${name}`,
        `aenv.ip=${GUEST}/30`,
        'aenv.gw=10.200.0.1',
        'aenv.dns=10.200.0.1,192.0.2.53',
      ],
    });
    guests.push(guest);
    return guest;
  }

  it('reported every stage, and a second call is served from the cache', async () => {
    for (const stage of GUEST_STAGES) {
      const mine = events.filter((e) => e.stage === stage).map((e) => e.status);
      assert.ok(
        mine.includes('cached') || (mine[0] === 'start' && mine.at(-1) === 'done'),
        `${stage}: ${mine.join(',')}`,
      );
    }
    const again: GuestProgressEvent[] = [];
    const second = await prepareGuestArtifacts({
      cacheDir,
      envd: await writeEnvdStandIn(join(work, 'envd-stand-in')),
      onProgress: (e) => again.push(e),
    });
    assert.deepEqual(second, artifacts);
    assert.deepEqual(
      again.map((e) => `${e.stage}:${e.status}`),
      GUEST_STAGES.map((s) => `${s}:cached`),
    );
    assert.match(artifacts.digests.kernel, /^sha256:[0-9a-f]{64}$/);
    assert.match(artifacts.kernelRelease, /-cloud-amd64$/);
  });

  it('boots to envd: the init starts it and /health answers 204 on the configured address', async () => {
    const started = performance.now();
    const guest = await boot(artifacts.toolsImage, 'sbx-one');
    await guest.waitFor(new RegExp(INIT_STARTED_MARKER), 30_000);
    await guest.waitFor(new RegExp(STAND_IN_READY), 30_000);
    await waitForHttp(NS, url('/health'), 204, 10_000);
    console.log(
      `# cold boot to stand-in envd healthy: ${Math.round(performance.now() - started)} ms`,
    );
  });

  it('configured hostname, DNS and mounts from the command line and the drives', async () => {
    const r = await exec(
      'hostname; cat /etc/hostname; cat /etc/resolv.conf; grep sbx-one /etc/hosts; cat /proc/mounts',
    );
    assert.equal(r.code, 0, r.stderr);
    const [host, hostFile] = r.stdout.split('\n');
    assert.equal(host, 'sbx-one');
    assert.equal(hostFile, 'sbx-one');
    assert.match(r.stdout, /nameserver 10\.200\.0\.1\nnameserver 192\.0\.2\.53\n/);
    assert.match(r.stdout, /127\.0\.1\.1\tsbx-one/);
    for (const m of [
      /^\/dev\/vda \/ ext4 rw/m,
      /^\/dev\/vdb \/run\/aenv\/tools erofs ro/m,
      /^\S+ \/tmp tmpfs/m,
      /^\S+ \/dev\/pts devpts/m,
      /^\S+ \/proc proc/m,
      /^\S+ \/sys sysfs/m,
      /^\S+ \/dev\/shm tmpfs/m,
    ]) {
      assert.match(r.stdout, m);
    }
  });

  it('runs envd as root in the image, and the base image has its user, sudo and tools', async () => {
    const r = await exec(
      'id -u; id user; ls -d /home/user; sudo -u user sudo -n id -u; python3 -c "print(6*7)"; git --version; curl --version | head -1',
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], '0');
    assert.match(
      lines[1] ?? '',
      /^uid=1000\(user\) gid=1000\(user\) groups=1000\(user\),27\(sudo\)/,
    );
    assert.equal(lines[2], '/home/user');
    assert.equal(lines[3], '0');
    assert.equal(lines[4], '42');
    assert.match(lines[5] ?? '', /^git version/);
    assert.match(lines[6] ?? '', /^curl /);
  });

  it('reaps orphans (no zombies) and restarts envd when it dies', async () => {
    for (let i = 0; i < 5; i++) await exec('(sleep 0.1 &) ; true');
    await new Promise((r) => setTimeout(r, 600));
    const z = await exec('cat /proc/[0-9]*/stat 2>/dev/null | awk \'$3 == "Z"\' | wc -l');
    assert.equal(z.stdout.trim(), '0');
    const before = (await httpInNetns(NS, url('/pid'))).body;
    await httpInNetns(NS, url('/exit'), { method: 'POST' });
    await waitForHttp(NS, url('/health'), 204, 10_000);
    const afterPid = (await httpInNetns(NS, url('/pid'))).body;
    assert.notEqual(afterPid, before);
    assert.match(
      guests[0]?.output() ?? '',
      /aenv-init: .* exited \(status 3\), restarting in 100 ms/,
    );
  });

  it('powers the VM off on SIGTERM to PID 1', async () => {
    const guest = guests[0] as LaunchedGuest;
    await httpInNetns(NS, url('/exec'), { method: 'POST', body: 'kill -TERM 1', timeoutMs: 1000 });
    const code = await Promise.race([
      guest.exited,
      new Promise((r) => setTimeout(() => r('timeout'), 15_000)),
    ]);
    assert.equal(code, 0);
    assert.match(guest.output(), /aenv-init: shutting down/);
  });

  it('reaches the real envd from @aenv/envd: GET /health → 204', async (t) => {
    let envd;
    try {
      envd = await defaultEnvdBundle();
      await prepareGuestArtifacts({ cacheDir, envd, baseImage: false });
    } catch (err) {
      t.skip(`the envd package is not built: ${(err as Error).message}`);
      return;
    }
    const real = await prepareGuestArtifacts({ cacheDir, envd });
    assert.equal(real.envdVersion, envd.version);
    const started = performance.now();
    await boot(real.toolsImage, 'sbx-real');
    await waitForHttp(NS, url('/health'), 204, 60_000);
    console.log(
      `# cold boot to real envd ${real.envdVersion} healthy: ${Math.round(performance.now() - started)} ms`,
    );
  });
});
