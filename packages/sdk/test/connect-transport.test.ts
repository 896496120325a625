// The Connect client against a stand-in server on loopback: framing in odd
// chunkings, end-stream outcomes, error answers, headers, aborts.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConnectTransport } from '../src/connect/connect-transport.js';
import {
  ConnectionError,
  FileNotFoundError,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  SandboxNotFoundError,
} from '../src/errors.js';
import { closedPort, frame, startLoopback, type LoopbackServer } from './loopback-server.js';

const servers: LoopbackServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(handler: Parameters<typeof startLoopback>[0]): Promise<LoopbackServer> {
  const s = await startLoopback(handler);
  servers.push(s);
  return s;
}

function transport(url: string): ConnectTransport {
  return new ConnectTransport({
    baseUrl: `${url}/`,
    fetch: (input, init) => fetch(input, init),
    headers: () => ({ 'e2b-sandbox-id': 'sbx1', 'x-access-token': 'tok' }),
  });
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('Connect transport', () => {
  it('sends unary calls as JSON with the protocol headers and reads the answer', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"entry":{"name":"x"}}');
    });
    const out = await transport(s.url).unary<{ entry: { name: string } }>(
      'filesystem.Filesystem/Stat',
      { path: '/x' },
      { requestTimeoutMs: 5000, headers: { authorization: 'Basic dXNlcjo=' } },
    );
    assert.equal(out.entry.name, 'x');
    const r = s.received[0];
    assert.equal(r?.url, '/filesystem.Filesystem/Stat');
    assert.equal(r?.headers['content-type'], 'application/json');
    assert.equal(r?.headers['connect-protocol-version'], '1');
    assert.equal(r?.headers['connect-timeout-ms'], '5000');
    assert.equal(r?.headers['e2b-sandbox-id'], 'sbx1');
    assert.equal(r?.headers['x-access-token'], 'tok');
    assert.equal(r?.headers.authorization, 'Basic dXNlcjo=');
    assert.deepEqual(JSON.parse(r?.body.toString() ?? ''), { path: '/x' });
  });

  it('maps unary Connect errors, using the caller not-found class', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"code":"not_found","message":"path \'/x\' does not exist"}');
    });
    const t = transport(s.url);
    await assert.rejects(t.unary('filesystem.Filesystem/Stat', {}), (err: unknown) => {
      assert.ok(err instanceof NotFoundError && !(err instanceof FileNotFoundError));
      assert.match(err.message, /does not exist/);
      return true;
    });
    await assert.rejects(
      t.unary('filesystem.Filesystem/Stat', {}, { notFound: FileNotFoundError }),
      FileNotFoundError,
    );
  });

  it('streams messages split across chunks and ends on the end-stream frame', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      const bytes = Buffer.concat([
        frame(0, { event: { start: { pid: 7 } } }),
        frame(0, { event: { data: { stdout: 'aGkK' } } }),
        frame(0, { event: { end: { exited: true } } }),
        frame(2, {}),
      ]);
      // One byte, then a frame and a half, then the rest, with pauses.
      res.write(bytes.subarray(0, 1));
      setTimeout(() => res.write(bytes.subarray(1, 50)), 20);
      setTimeout(() => res.end(bytes.subarray(50)), 40);
      assert.equal(req.headers['content-type'], 'application/connect+json');
    });
    const messages = await collect(
      transport(s.url).stream<{ event: unknown }>(
        'process.Process/Start',
        { x: 1 },
        { timeoutMs: 1234 },
      ),
    );
    assert.equal(messages.length, 3);
    assert.deepEqual(messages[0], { event: { start: { pid: 7 } } });
    const r = s.received[0];
    assert.equal(r?.headers['connect-timeout-ms'], '1234');
    assert.equal(r?.headers['keepalive-ping-interval'], '50');
    assert.deepEqual([...(r?.body.subarray(0, 5) ?? [])], [0, 0, 0, 0, 7]);
    assert.equal(r?.body.subarray(5).toString(), '{"x":1}');
  });

  it('throws the end-stream error after the messages before it', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.end(
        Buffer.concat([
          frame(0, { n: 1 }),
          frame(2, { error: { code: 'invalid_argument', message: "cwd '/nope' does not exist" } }),
        ]),
      );
    });
    const seen: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const m of transport(s.url).stream('process.Process/Start', {})) seen.push(m);
      })(),
      (err: unknown) => err instanceof InvalidArgumentError && /cwd/.test(err.message),
    );
    assert.deepEqual(seen, [{ n: 1 }]);
  });

  it('fails a stream that ends without an end-stream frame', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.end(frame(0, { n: 1 }));
    });
    await assert.rejects(
      collect(transport(s.url).stream('process.Process/Start', {})),
      (err: unknown) => {
        return err instanceof InternalError && /without an end-stream/.test(err.message);
      },
    );
  });

  it('reads a proxy 502 on a stream as a sandbox that is gone', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"code":502,"message":"sandbox sbx1 is not running","error_code":"SBX_NOT_FOUND"}');
    });
    await assert.rejects(
      collect(transport(s.url).stream('process.Process/Start', {})),
      SandboxNotFoundError,
    );
  });

  it('names the address and the system error when nothing listens', async () => {
    const port = await closedPort();
    await assert.rejects(
      transport(`http://127.0.0.1:${port}`).unary('process.Process/List', {}),
      (err: unknown) => {
        assert.ok(err instanceof ConnectionError);
        assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
        return true;
      },
    );
  });

  it('stops reading when the caller aborts, with the caller reason', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.write(frame(0, { event: { start: { pid: 1 } } }));
      // never ends
    });
    const abort = new AbortController();
    const stream = transport(s.url).stream('process.Process/Start', {}, { signal: abort.signal });
    assert.deepEqual((await stream.next()).value, { event: { start: { pid: 1 } } });
    const reason = new Error('user stop');
    abort.abort(reason);
    await assert.rejects(stream.next(), (err: unknown) => err === reason);
  });
});
