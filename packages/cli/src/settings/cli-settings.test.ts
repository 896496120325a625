import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CliError } from '../cli-error.js';
import {
  DEFAULT_NODE_URL,
  isLoopbackUrl,
  readSettings,
  removeSettings,
  resolveConnection,
  settingsPath,
  writeSettings,
} from './cli-settings.js';

const dir = mkdtempSync(join(tmpdir(), 'aenv-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('CLI settings', () => {
  it('live in AENV_CLI_CONFIG, XDG_CONFIG_HOME or ~/.config', () => {
    assert.equal(settingsPath({ AENV_CLI_CONFIG: '/x.json' }), '/x.json');
    assert.equal(settingsPath({ XDG_CONFIG_HOME: '/xdg' }), '/xdg/aenv/cli.json');
    assert.equal(settingsPath({ HOME: '/home/u' }), '/home/u/.config/aenv/cli.json');
  });

  it('are written 0600 and read back; a broken file says how to fix it', () => {
    const path = join(dir, 'sub', 'cli.json');
    assert.deepEqual(readSettings(path), {});
    writeSettings(path, { url: 'http://n:8000', key: 'e2b_1' });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readSettings(path), { url: 'http://n:8000', key: 'e2b_1' });
    writeFileSync(path, 'nope');
    assert.throws(
      () => readSettings(path),
      (err: unknown) => err instanceof CliError && /aenv auth login/.test(err.hint ?? ''),
    );
    assert.equal(removeSettings(path), true);
    assert.equal(removeSettings(path), false);
  });

  it('resolve flags, then AENV_*, then E2B_*, then stored settings, then the local node', () => {
    const stored = { url: 'http://stored:1', key: 'k-stored', sandboxUrl: 'http://sbx:2' };
    const env = { E2B_API_URL: 'http://e2b:3', E2B_API_KEY: 'k-e2b' };
    assert.deepEqual(resolveConnection({}, {}, stored), {
      url: 'http://stored:1',
      key: 'k-stored',
      sandboxUrl: 'http://sbx:2',
      urlSource: 'aenv auth',
      keySource: 'aenv auth',
    });
    const fromEnv = resolveConnection({}, env, stored);
    assert.equal(fromEnv.url, 'http://e2b:3');
    assert.equal(fromEnv.key, 'k-e2b');
    assert.equal(
      fromEnv.sandboxUrl,
      'http://e2b:3',
      'stored sandbox URL belongs to the stored node',
    );
    const flags = resolveConnection(
      { url: 'http://flag:4/', key: 'k-flag' },
      { ...env, AENV_API_URL: 'http://a:5' },
      stored,
    );
    assert.deepEqual(
      [flags.url, flags.key, flags.sandboxUrl],
      ['http://flag:4', 'k-flag', 'http://flag:4'],
    );
  });

  it('send the local node key only to a loopback URL', () => {
    const home = join(dir, 'node');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'api-key'), 'e2b_local\n');
    const local = resolveConnection({}, { AENV_HOME: home }, {});
    assert.equal(local.url, DEFAULT_NODE_URL);
    assert.equal(local.key, 'e2b_local');
    assert.equal(local.keySource, join(home, 'api-key'));
    const remote = resolveConnection({ url: 'http://10.1.2.3:8000' }, { AENV_HOME: home }, {});
    assert.equal(remote.key, undefined);
    assert.ok(
      isLoopbackUrl('http://localhost:1') &&
        isLoopbackUrl('http://127.0.0.2') &&
        !isLoopbackUrl('http://example.com'),
    );
  });
});
