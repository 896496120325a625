/**
 * Tests of the jail decision and of the driver's jail configuration on a
 * stand-in cgroup tree.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import { vmmConfigSchema } from '../config.js';
import { VMM_JAIL_CHANNEL } from '../events.js';
import { jailDecision, qemuJailConfig } from './qemu-jail-config.js';

describe('jailDecision', () => {
  it('jails only as root on Linux, when enabled', () => {
    assert.deepEqual(jailDecision(true, { platform: 'linux', uid: 0 }), {
      on: true,
      reason: 'jail on',
    });
    assert.match(jailDecision(true, { platform: 'linux', uid: 1000 }).reason, /uid 1000, not root/);
    assert.match(jailDecision(true, { platform: 'darwin', uid: 0 }).reason, /not Linux/);
    assert.match(jailDecision(false, { platform: 'linux', uid: 0 }).reason, /vmm.jail is false/);
  });
});

describe('qemuJailConfig', async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-jailcfg-'));
  after(() => rm(work, { recursive: true, force: true }));

  it('turns the jail off as a non-root user and says why on the channel', async () => {
    const seen: unknown[] = [];
    const onEvent = (m: unknown): void => void seen.push(m);
    subscribe(VMM_JAIL_CHANNEL, onEvent);
    try {
      const config = loadConfig(vmmConfigSchema, { env: {} });
      const { jail, reason } = await qemuJailConfig(config, [], { platform: 'linux', uid: 1000 });
      assert.equal(jail, undefined);
      assert.match(reason, /not root/);
      assert.deepEqual(seen, [{ 'vmm.driver': 'qemu', enabled: false, reason }]);
    } finally {
      unsubscribe(VMM_JAIL_CHANNEL, onEvent);
    }
  });

  it('adds the home to the hidden directories and finds the cgroups', async () => {
    const cg = join(work, 'cg');
    await mkdir(cg);
    await writeFile(join(cg, 'cgroup.controllers'), 'cpu memory pids');
    const config = loadConfig(vmmConfigSchema, {
      env: { AENV_VMM_JAIL_UID_BASE: '300000', AENV_VMM_JAIL_HIDE: '/tmp,/root' },
    });
    const { jail, reason } = await qemuJailConfig(
      config,
      ['/srv/aenv'],
      { platform: 'linux', uid: 0 },
      cg,
    );
    assert.deepEqual(jail?.hide, ['/tmp', '/root', '/srv/aenv']);
    assert.deepEqual(jail?.cgroups, { version: 2, root: cg });
    assert.equal(jail?.pool.sharedGid, 300000);
    assert.match(reason, /jail on \(uids 300001\+4096, cgroup v2\)/);
  });
});
