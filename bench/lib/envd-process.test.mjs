/**
 * Tests of the Connect `process.Process/Start` client against a loopback
 * HTTP server playing envd (a stand-in: it answers with fixed frames).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  connectEnvelope,
  connectFrames,
  parseStartResponse,
  startProcess,
} from './envd-process.mjs';

const frame = (msg, flags = 0) => {
  const b = connectEnvelope(msg);
  b[0] = flags;
  return b;
};

describe('Connect frames', () => {
  it('reads back what it writes, end-of-stream flag included', () => {
    const buf = Buffer.concat([frame({ a: 1 }), frame({}, 0x02)]);
    assert.deepEqual(
      [...connectFrames(buf)],
      [
        { end: false, json: { a: 1 } },
        { end: true, json: {} },
      ],
    );
  });

  it('collects stdout and the exit code (absent means 0)', () => {
    const buf = Buffer.concat([
      frame({ event: { start: { pid: 7 } } }),
      frame({ event: { data: { stdout: Buffer.from('hi ').toString('base64') } } }),
      frame({ event: { data: { stdout: Buffer.from('there').toString('base64') } } }),
      frame({ event: { end: { exited: true, status: 'exit status 0' } } }),
      frame({}, 0x02),
    ]);
    assert.deepEqual(parseStartResponse(buf), {
      exitCode: 0,
      stdout: 'hi there',
      error: undefined,
    });
  });
});

describe('startProcess', () => {
  let server;
  let url;
  let seen;
  before(async () => {
    server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const [msg] = [...connectFrames(Buffer.concat(chunks))];
        seen = { headers: req.headers, body: msg.json, path: req.url };
        res.setHeader('content-type', 'application/connect+json');
        if (msg.json.process.cmd === '/fail') {
          res.end(frame({ error: { code: 'not_found', message: 'no such command' } }, 0x02));
          return;
        }
        res.end(Buffer.concat([frame({ event: { end: { exitCode: 3 } } }), frame({}, 0x02)]));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${server.address().port}`;
  });
  after(() => server.close());

  it('sends bash -c with the headers and the user, and returns the exit code', async () => {
    const r = await startProcess(url, {
      cmd: 'echo hi',
      headers: { 'e2b-sandbox-id': 'abc' },
      user: 'root',
    });
    assert.equal(r.exitCode, 3);
    assert.equal(seen.path, '/process.Process/Start');
    assert.deepEqual(seen.body.process, { cmd: '/bin/bash', args: ['-c', 'echo hi'] });
    assert.equal(seen.headers['e2b-sandbox-id'], 'abc');
    assert.equal(seen.headers.authorization, `Basic ${btoa('root:')}`);
  });

  it('throws the Connect error of the end-of-stream frame', async () => {
    await assert.rejects(startProcess(url, { cmd: '/fail', args: [] }), /no such command/);
  });
});
