/**
 * Regression tests for what fuzzing envd found (see envd-fuzz.test.ts):
 * each was a client mistake answered as envd's own failure (`internal`,
 * 500 or a stream's end frame); each now answers `invalid_argument`.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { callStream, decodeFrames } from './helpers/connect-wire.js';
import { startFixture, type EnvdFixture } from './helpers/envd-fixture.js';

describe('fuzz findings', () => {
  let fx: EnvdFixture;
  before(async () => {
    fx = await startFixture();
  });
  after(() => fx.close());

  it('answers a unary body that is not protobuf with 400 invalid_argument, not 500', async () => {
    const res = await fetch(`${fx.url}/filesystem.Filesystem/Stat`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto', 'connect-protocol-version': '1' },
      body: Buffer.from([0x0a, 0xff, 0xff]),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { code: string; message: string };
    assert.equal(body.code, 'invalid_argument');
    assert.match(body.message, /parse binary/);
  });

  it('ends a stream whose envelope claims compression nobody negotiated with invalid_argument', async () => {
    const json = Buffer.from(JSON.stringify({ process: { pid: 1 } }));
    const head = Buffer.alloc(5);
    head.writeUInt8(1, 0); // the compressed flag, without Connect-Content-Encoding
    head.writeUInt32BE(json.length, 1);
    const res = await fetch(`${fx.url}/process.Process/Connect`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+json', 'connect-protocol-version': '1' },
      body: Buffer.concat([head, json]),
    });
    const frames = decodeFrames(Buffer.from(await res.arrayBuffer()));
    const end = frames.find((f) => (f.flags & 2) !== 0);
    assert.equal((end?.json.error as { code: string } | undefined)?.code, 'invalid_argument');
  });

  it('refuses NUL bytes in a command environment and in /init env vars', async () => {
    const started = await callStream(fx.url, 'process.Process/Start', {
      process: { cmd: '/bin/true', args: [], envs: { 'A\u0000': 'x' } },
    });
    const end = started.frames.find((f) => (f.flags & 2) !== 0);
    assert.equal((end?.json.error as { code: string } | undefined)?.code, 'invalid_argument');
    const args = await callStream(fx.url, 'process.Process/Start', {
      process: { cmd: '/bin/echo', args: ['a\u0000b'] },
    });
    const argsEnd = args.frames.find((f) => (f.flags & 2) !== 0);
    assert.equal((argsEnd?.json.error as { code: string } | undefined)?.code, 'invalid_argument');
    const init = await fetch(`${fx.url}/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ envVars: { B: 'x\u0000y' } }),
    });
    assert.equal(init.status, 400);
    const ok = await callStream(fx.url, 'process.Process/Start', {
      process: { cmd: '/bin/true', args: [] },
    });
    assert.ok(
      ok.frames.every((f) => f.json.error === undefined),
      'envd still starts processes',
    );
  });
});
