/**
 * Unit tests for the `envd` command line.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCli } from './cli-options.js';

describe('parseCli', () => {
  it('maps options to EnvdOptions', () => {
    const req = parseCli([
      '--port',
      '0',
      '--root',
      '/tmp/x',
      '--passwd',
      'p',
      '--group',
      'g',
      '--user',
      'u',
      '--set-clock',
      '--quiet',
    ]);
    assert.equal(req.kind, 'run');
    if (req.kind !== 'run') return;
    assert.equal(req.options.port, 0);
    assert.equal(req.options.root, '/tmp/x');
    assert.equal(req.options.passwdFile, 'p');
    assert.equal(req.options.groupFile, 'g');
    assert.equal(req.options.defaultUser, 'u');
    assert.equal(req.options.setClock, true);
    assert.equal(req.options.logger, null);
  });

  it('knows --help and --version, and refuses bad input', () => {
    assert.equal(parseCli(['--help']).kind, 'help');
    assert.equal(parseCli(['--version']).kind, 'version');
    assert.throws(() => parseCli(['--port', '70000']), /not a port/);
    assert.throws(() => parseCli(['--bogus']), /bogus/);
  });
});
