/**
 * Pseudo-terminals through the e2b SDK: create, input, resize, kill, and
 * output arriving as `data.pty`.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CommandExitError, type Sandbox } from 'e2b';
import {
  IS_ROOT,
  USER_UID,
  processAlive,
  startFixture,
  waitFor,
  type EnvdFixture,
} from './helpers/envd-fixture.js';

const encoder = new TextEncoder();

describe('pty through the e2b SDK', () => {
  let fx: EnvdFixture;
  let sbx: Sandbox;
  before(async () => {
    fx = await startFixture();
    sbx = await fx.sandbox();
  });
  after(() => fx.close());

  it('runs an interactive shell: input, resize, exit', async () => {
    let output = '';
    const decoder = new TextDecoder();
    const term = await sbx.pty.create({
      cols: 80,
      rows: 24,
      onData: (d) => void (output += decoder.decode(d, { stream: true })),
    });
    await sbx.pty.sendInput(term.pid, encoder.encode('stty size; tty; echo "TERM=$TERM"; id -u\n'));
    await waitFor(
      () => output.includes('24 80') && output.includes('TERM=xterm-256color'),
      5000,
      'first output',
    );
    assert.match(output, /\/dev\/pts\/\d+/);
    if (IS_ROOT) assert.match(output, new RegExp(`\\r\\n${USER_UID}\\r\\n`));
    await sbx.pty.resize(term.pid, { cols: 100, rows: 40 });
    await sbx.pty.sendInput(term.pid, encoder.encode('stty size\n'));
    await waitFor(() => output.includes('40 100'), 5000, 'resized output');
    await sbx.pty.sendInput(term.pid, encoder.encode('exit 3\n'));
    await assert.rejects(
      term.wait(),
      (e: unknown) => e instanceof CommandExitError && e.exitCode === 3,
    );
  });

  it('kills a terminal and lists it while it runs', async () => {
    const term = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} });
    assert.ok((await sbx.commands.list()).some((p) => p.pid === term.pid));
    assert.equal(await sbx.pty.kill(term.pid), true);
    await assert.rejects(
      term.wait(),
      (e: unknown) => e instanceof CommandExitError && e.exitCode === -1,
    );
    await waitFor(() => !processAlive(term.pid), 5000, 'terminal gone');
    assert.equal(await sbx.pty.kill(term.pid), false);
  });

  it('reconnects to a terminal', async () => {
    const term = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} });
    await term.disconnect();
    let output = '';
    const again = await sbx.pty.connect(term.pid, {
      onData: (d) => void (output += Buffer.from(d).toString()),
    });
    await sbx.pty.sendInput(term.pid, encoder.encode('echo reattached\n'));
    await waitFor(() => output.includes('reattached'), 5000, 'output after reconnect');
    await sbx.pty.kill(term.pid);
    await again.wait().catch(() => undefined);
  });
});
