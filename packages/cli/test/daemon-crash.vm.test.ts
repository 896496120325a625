// `aenv server` killed with kill -9 while one sandbox runs and another is
// paused: after a restart on the same home, the paused one resumes with its
// files and memory state, the one that was running is reported failed with
// the reason (its machine died with the daemon) until it is killed, and
// nothing of either run is left on the host.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Sandbox } from 'e2b';
import {
  api,
  homeEntries,
  networkLeftovers,
  newDaemonHome,
  removeHome,
  startDaemon,
  stopDaemon,
  vmmProcesses,
} from './helpers/crash-daemon.js';

const h = newDaemonHome('10.253.0.0/24');

after(() => removeHome(h));

/** No QEMU, netns, link, nft table, sandbox dir or NBD socket of this home is left. */
function assertNothingLeft(): void {
  assert.deepEqual(vmmProcesses(h), []);
  assert.deepEqual(networkLeftovers(h), { netns: [], links: [], nft: [] });
  for (const sub of ['sandboxes', 'nbd']) assert.deepEqual(homeEntries(h, sub), [], sub);
}

describe('aenv server killed with kill -9 (real microVMs)', { timeout: 600_000 }, () => {
  it('brings paused sandboxes back with their data and leaks nothing', async () => {
    const first = await startDaemon(h);
    const opts = { apiKey: first.apiKey, apiUrl: first.url, sandboxUrl: first.url };
    const running = await Sandbox.create('base', opts);
    const paused = await Sandbox.create('base', opts);
    await running.files.write('/home/user/f', 'running');
    await paused.files.write('/home/user/f', 'paused');
    await paused.commands.run('echo $RANDOM > /tmp/in-memory');
    const inMemory = await paused.files.read('/tmp/in-memory');
    assert.equal(await paused.pause(), true);

    await stopDaemon(first, 'SIGKILL');

    const second = await startDaemon(h);
    const opts2 = { apiKey: second.apiKey, apiUrl: second.url, sandboxUrl: second.url };
    try {
      const info = await Sandbox.getInfo(paused.sandboxId, opts2);
      assert.equal(info.state, 'paused');
      const back = await Sandbox.connect(paused.sandboxId, opts2);
      assert.equal(await back.files.read('/home/user/f'), 'paused');
      assert.equal(
        await back.files.read('/tmp/in-memory'),
        inMemory,
        'memory state (tmpfs) survived',
      );
      const lost = await api(second, 'GET', `/sandboxes/${running.sandboxId}`);
      assert.equal(lost.status, 200);
      assert.match(String(lost.json.failureReason), /lost with the previous node process/);
      assert.equal((await api(second, 'DELETE', `/sandboxes/${running.sandboxId}`)).status, 204);
      await assert.rejects(Sandbox.getInfo(running.sandboxId, opts2), /not found/i);
      await back.kill();
    } finally {
      await stopDaemon(second, 'SIGTERM');
    }
    assertNothingLeft();
  });
});
