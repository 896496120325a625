import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AenvError } from './aenv-error.js';
import { field } from './config-field.js';
import { describeConfig, loadConfig } from './config-loader.js';

const schema = {
  home: field.path({ default: '/var/lib/aenv', env: 'T_HOME', doc: 'state directory' }),
  logLevel: field.oneOf(['debug', 'info', 'warn'], {
    default: 'info',
    env: 'T_LOG',
    doc: 'log level',
  }),
  api: {
    host: field.string({ default: '127.0.0.1', env: 'T_HOST', doc: 'listen address' }),
    port: field.integer({ default: 8000, min: 0, max: 65535, env: 'T_PORT', doc: 'listen port' }),
    tls: field.boolean({ default: false, env: 'T_TLS', doc: 'serve TLS' }),
    cert: field.optionalPath({ default: undefined, doc: 'certificate' }),
  },
  registries: field.list({ default: ['docker.io'], env: 'T_REGISTRIES', doc: 'allowed' }),
};

const dir = mkdtempSync(join(tmpdir(), 'aenv-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function writeJson(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

function loadError(fn: () => unknown): AenvError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AenvError, `expected AenvError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected an error');
}

describe('loadConfig', () => {
  it('returns the declared defaults, typed and frozen', () => {
    const cfg = loadConfig(schema, { env: {} });
    assert.equal(cfg.home, '/var/lib/aenv');
    assert.equal(cfg.logLevel, 'info');
    assert.deepEqual(cfg.api, { host: '127.0.0.1', port: 8000, tls: false, cert: undefined });
    assert.deepEqual(cfg.registries, ['docker.io']);
    assert.ok(Object.isFrozen(cfg) && Object.isFrozen(cfg.api) && Object.isFrozen(cfg.registries));
    assert.throws(() => {
      (cfg.api as { port: number }).port = 1;
    }, TypeError);
  });

  it('layers the file over defaults and the environment over the file', () => {
    const file = writeJson('layer.json', {
      api: { port: 9000, host: '0.0.0.0' },
      logLevel: 'warn',
    });
    const cfg = loadConfig(schema, {
      file,
      env: { T_PORT: '9100', T_TLS: 'yes', T_REGISTRIES: 'ghcr.io, quay.io', T_LOG: '' },
    });
    assert.equal(cfg.api.port, 9100);
    assert.equal(cfg.api.host, '0.0.0.0');
    assert.equal(cfg.api.tls, true);
    assert.equal(cfg.logLevel, 'warn', 'an empty env var does not override');
    assert.deepEqual(cfg.registries, ['ghcr.io', 'quay.io']);
  });

  it('resolves paths against the file directory or the cwd', () => {
    const file = writeJson('paths.json', { home: 'state', api: { cert: './tls/cert.pem' } });
    const cfg = loadConfig(schema, { file, env: {}, cwd: '/somewhere' });
    assert.equal(cfg.home, join(dir, 'state'));
    assert.equal(cfg.api.cert, join(dir, 'tls/cert.pem'));
    const fromEnv = loadConfig(schema, { env: { T_HOME: 'rel/home' }, cwd: '/srv' });
    assert.equal(fromEnv.home, '/srv/rel/home');
  });

  it('rejects an unknown key with a message naming it and the known keys', () => {
    const file = writeJson('unknown.json', { api: { prot: 80 } });
    const err = loadError(() => loadConfig(schema, { file, env: {} }));
    assert.equal(err.code, 'CONFIG_UNKNOWN_KEY');
    assert.equal(err.category, 'InvalidArgument');
    assert.match(err.message, /unknown config key 'api\.prot'/);
    assert.match(err.message, /known keys under 'api': host, port, tls, cert/);
    assert.ok(err.message.includes(file));
    const top = loadError(() =>
      loadConfig(schema, { file: writeJson('t.json', { hme: 1 }), env: {} }),
    );
    assert.match(top.message, /'hme'.*at the top level: home, logLevel, api, registries/);
  });

  it('rejects bad values naming the key and where the value came from', () => {
    const badEnv = loadError(() => loadConfig(schema, { env: { T_PORT: '70000' } }));
    assert.equal(badEnv.code, 'CONFIG_INVALID_VALUE');
    assert.match(badEnv.message, /'api\.port' \(env T_PORT\): expected an integer in \[0, 65535\]/);
    const badFile = writeJson('bad.json', { logLevel: 'loud' });
    const err = loadError(() => loadConfig(schema, { file: badFile, env: {} }));
    assert.match(
      err.message,
      /'logLevel' \(file .*bad\.json\): expected one of 'debug', 'info', 'warn'/,
    );
    const badBool = loadError(() => loadConfig(schema, { env: { T_TLS: 'maybe' } }));
    assert.match(badBool.message, /expected a boolean/);
    const section = loadError(() =>
      loadConfig(schema, { file: writeJson('s.json', { api: 3 }), env: {} }),
    );
    assert.match(section.message, /'api'.*expected a section/);
  });

  it('reports missing and malformed files', () => {
    const missing = loadError(() => loadConfig(schema, { file: join(dir, 'nope.json'), env: {} }));
    assert.equal(missing.code, 'CONFIG_FILE_UNREADABLE');
    const malformed = loadError(() =>
      loadConfig(schema, { file: writeJson('m.json', '{oops'), env: {} }),
    );
    assert.match(malformed.message, /is not JSON/);
    const array = loadError(() => loadConfig(schema, { file: writeJson('a.json', '[]'), env: {} }));
    assert.match(array.message, /must hold a JSON object/);
  });

  it('describes every field for help output', () => {
    const docs = describeConfig(schema);
    assert.deepEqual(
      docs.map((d) => d.key),
      ['home', 'logLevel', 'api.host', 'api.port', 'api.tls', 'api.cert', 'registries'],
    );
    const port = docs.find((d) => d.key === 'api.port');
    assert.deepEqual(port, {
      key: 'api.port',
      env: 'T_PORT',
      type: 'integer [0, 65535]',
      default: 8000,
      doc: 'listen port',
    });
  });
});
