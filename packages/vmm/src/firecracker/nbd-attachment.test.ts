// NBD attachment with a fake sysfs tree and a STAND-IN for nbd-client (a
// shell script): this host has no nbd kernel module, so a real attach
// cannot run here; what is tested is the command line, the choice of free
// devices, retrying past a busy one, detaching, and the refusal that says
// what the host lacks.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NbdAttacher, freeNbdDevices, nbdClientArgs } from './nbd-attachment.js';

describe('NBD attachment', () => {
  let dir = '';
  const sysfs = () => join(dir, 'sys');
  const device = async (name: string, size: string, pid = false) => {
    await mkdir(join(sysfs(), 'block', name), { recursive: true });
    await writeFile(join(sysfs(), 'block', name, 'size'), `${size}\n`);
    if (pid) await writeFile(join(sysfs(), 'block', name, 'pid'), '42\n');
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-nbd-'));
    await device('nbd0', '0');
    await device('nbd1', '2048');
    await device('nbd2', '0', true);
    await device('nbd10', '0');
    await device('nbd3', '0');
    await device('loop0', '0');
    await mkdir(join(sysfs(), 'module', 'nbd'), { recursive: true });
    // nbd-client stand-in: logs its arguments; /dev/nbd0 is "busy"
    await writeFile(
      join(dir, 'nbd-client'),
      `#!/bin/sh\necho "$@" >> '${join(dir, 'calls')}'\ncase "$3" in */nbd0) echo "Error: Device busy" >&2; exit 1;; esac\n`,
    );
    await chmod(join(dir, 'nbd-client'), 0o755);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('builds the nbd-client command line', () => {
    assert.deepEqual(
      nbdClientArgs({ socket: '/run/s.sock', export: 'sbx1' }, '/dev/nbd4', {
        timeoutS: 30,
        readOnly: true,
      }),
      [
        '-unix',
        '/run/s.sock',
        '/dev/nbd4',
        '-name',
        'sbx1',
        '-block-size',
        '4096',
        '-timeout',
        '30',
        '-readonly',
      ],
    );
  });

  it('lists free devices lowest first, skipping connected and reserved ones', async () => {
    assert.deepEqual(await freeNbdDevices(sysfs(), new Set()), ['nbd0', 'nbd3', 'nbd10']);
    assert.deepEqual(await freeNbdDevices(sysfs(), new Set(['nbd0'])), ['nbd3', 'nbd10']);
    assert.deepEqual(await freeNbdDevices(join(dir, 'none'), new Set()), []);
  });

  it('says what the host lacks', async () => {
    const bare = new NbdAttacher({ sysfs: join(dir, 'none'), nbdClient: 'no-such-client' });
    assert.deepEqual(await bare.probe(), {
      usable: false,
      reason: 'the nbd kernel module is not loaded and nbd-client is not installed',
    });
    await assert.rejects(
      bare.attach({ socket: '/s', export: 'e' }, false),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_NOT_SUPPORTED' &&
        /modprobe nbd/.test(e.message) &&
        /apt-get install nbd-client/.test(e.message),
    );
    const noClient = new NbdAttacher({ sysfs: sysfs(), nbdClient: 'no-such-client' });
    assert.equal((await noClient.probe()).reason, 'no-such-client is not installed');
  });

  it('attaches to the next free device when one is busy, and detaches', async () => {
    const nbd = new NbdAttacher({
      sysfs: sysfs(),
      dev: '/dev',
      nbdClient: join(dir, 'nbd-client'),
      timeoutS: 15,
    });
    assert.equal((await nbd.probe()).usable, true);
    const [a, b] = await Promise.all([
      nbd.attach({ socket: '/s1', export: 'e1' }, false),
      nbd.attach({ socket: '/s2', export: 'e2' }, true),
    ]);
    assert.deepEqual([a?.path, b?.path].sort(), ['/dev/nbd10', '/dev/nbd3']);
    await a?.detach();
    await a?.detach();
    const calls = (await readFile(join(dir, 'calls'), 'utf8')).trim().split('\n');
    assert.ok(
      calls.some(
        (c) => c.startsWith('-unix /s1 /dev/nbd0 ') || c.startsWith('-unix /s2 /dev/nbd0 '),
      ),
      'tried the busy device first',
    );
    assert.ok(calls.includes(`-d ${a?.path}`));
    assert.equal(calls.filter((c) => c.startsWith('-d')).length, 1, 'detach is idempotent');
  });

  it('fails with VMM_DRIVE_ATTACH_FAILED when no device is free', async () => {
    const nbd = new NbdAttacher({
      sysfs: sysfs(),
      nbdClient: join(dir, 'nbd-client'),
      attempts: 2,
    });
    const held = [
      await nbd.attach({ socket: '/a', export: 'a' }, false),
      await nbd.attach({ socket: '/b', export: 'b' }, false),
    ];
    await assert.rejects(
      nbd.attach({ socket: '/c', export: 'c' }, false),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_DRIVE_ATTACH_FAILED' && /no free \/dev\/nbdN/.test(e.message),
    );
    for (const h of held) await h.detach();
  });
});
