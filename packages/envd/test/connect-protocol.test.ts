/**
 * The Connect protocol as envd speaks it, checked on the wire: unary JSON
 * bodies and error mapping, streaming envelopes and end-stream frames,
 * errors before the first message, Connect-Timeout-Ms, keepalives, the
 * binary codec, HTTP/2 (h2c) and client streaming.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConnectError, Code } from '@connectrpc/connect';
import { processAlive, startFixture, waitFor, type EnvdFixture } from './helpers/envd-fixture.js';
import { callStream, callUnary } from './helpers/connect-wire.js';
import { filesystemClient, processClient } from './helpers/rpc-clients.js';

const bash = (cmd: string, extra: Record<string, unknown> = {}) => ({
  process: { cmd: '/bin/bash', args: ['-l', '-c', cmd] },
  stdin: false,
  ...extra,
});

describe('the Connect protocol on the wire', () => {
  let fx: EnvdFixture;
  before(async () => (fx = await startFixture()));
  after(() => fx.close());

  it('answers unary JSON with proto3 JSON (int64 as string, enum names, RFC 3339)', async () => {
    writeFileSync(join(fx.home, 'three'), 'abc');
    const res = await callUnary(fx.url, 'filesystem.Filesystem/Stat', {
      path: 'three',
      unknownFieldFromNewerClient: 1,
    });
    assert.equal(res.status, 200);
    assert.match(res.contentType ?? '', /^application\/json/);
    const entry = res.json.entry as Record<string, unknown>;
    assert.equal(entry.size, '3');
    assert.equal(entry.type, 'FILE_TYPE_FILE');
    assert.equal(entry.path, join(fx.home, 'three'));
    assert.match(String(entry.modifiedTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it('maps errors to Connect codes and HTTP statuses', async () => {
    const missing = await callUnary(fx.url, 'filesystem.Filesystem/Stat', { path: 'nope' });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'not_found');
    assert.equal(typeof missing.json.message, 'string');
    const exists = await callUnary(fx.url, 'filesystem.Filesystem/MakeDir', { path: fx.home });
    assert.deepEqual([exists.status, exists.json.code], [409, 'already_exists']);
    const badJson = await callUnary(fx.url, 'filesystem.Filesystem/Stat', '{not json');
    assert.deepEqual([badJson.status, badJson.json.code], [400, 'invalid_argument']);
    const badUser = await callUnary(
      fx.url,
      'filesystem.Filesystem/Stat',
      { path: '.' },
      {
        authorization: `Basic ${Buffer.from('ghost:').toString('base64')}`,
      },
    );
    assert.deepEqual([badUser.status, badUser.json.code], [401, 'unauthenticated']);
    const unknownMethod = await fetch(`${fx.url}/process.Process/Nope`, {
      method: 'POST',
      body: '{}',
    });
    assert.equal(unknownMethod.status, 404);
  });

  it('streams start, data, end, then an empty end-stream frame', async () => {
    const res = await callStream(
      fx.url,
      'process.Process/Start',
      bash('echo hi; echo oops >&2; exit 2'),
    );
    assert.equal(res.status, 200);
    assert.equal(res.contentType, 'application/connect+json');
    const frames = res.frames;
    const last = frames.at(-1);
    assert.equal(last?.flags, 2);
    assert.deepEqual(last?.json, {});
    const events = frames.slice(0, -1).map((f) => {
      assert.equal(f.flags, 0);
      return f.json.event as Record<string, Record<string, unknown>>;
    });
    assert.ok(typeof events[0]?.start?.pid === 'number', 'start comes first');
    const out = events.filter((e) => e.data !== undefined).map((e) => e.data);
    assert.equal(
      Buffer.from(String(out.find((d) => 'stdout' in (d ?? {}))?.stdout), 'base64').toString(),
      'hi\n',
    );
    assert.equal(
      Buffer.from(String(out.find((d) => 'stderr' in (d ?? {}))?.stderr), 'base64').toString(),
      'oops\n',
    );
    assert.deepEqual(events.at(-1)?.end, {
      exitCode: 2,
      exited: true,
      status: 'exit status 2',
      error: 'exit status 2',
    });
  });

  it('sends errors before the first message as HTTP 200 with an end-stream error', async () => {
    const cwd = join(fx.dir, 'nope');
    const res = await callStream(
      fx.url,
      'process.Process/Start',
      bash('true', { process: { cmd: '/bin/bash', cwd } }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.frames.length, 1);
    assert.equal(res.frames[0]?.flags, 2);
    const error = res.frames[0]?.json.error as Record<string, string>;
    assert.equal(error.code, 'invalid_argument');
    assert.equal(error.message, `cwd '${cwd}' does not exist`);
  });

  it('fails clearly, without hanging, when the command binary is missing', async () => {
    const res = await callStream(fx.url, 'process.Process/Start', {
      process: { cmd: '/no/such/bash', args: ['-l', '-c', 'true'] },
    });
    const error = res.frames[0]?.json.error as Record<string, string>;
    assert.equal(error.code, 'invalid_argument');
    assert.match(error.message ?? '', /executable not found/);
  });

  it('ends Start with deadline_exceeded at Connect-Timeout-Ms and kills the process; 0 means no limit', async () => {
    const res = await callStream(fx.url, 'process.Process/Start', bash('echo $$; sleep 30'), {
      'connect-timeout-ms': '500',
    });
    const end = res.frames.at(-1);
    assert.equal((end?.json.error as Record<string, string>).code, 'deadline_exceeded');
    const data =
      (res.frames[1]?.json.event as Record<string, Record<string, string>>).data?.stdout ?? '';
    const pid = Number(Buffer.from(data, 'base64').toString().trim());
    await waitFor(() => !processAlive(pid), 5000, 'process killed at its deadline');
    const unlimited = await callStream(
      fx.url,
      'process.Process/Start',
      bash('sleep 0.2; echo done'),
      { 'connect-timeout-ms': '0' },
    );
    assert.deepEqual(unlimited.frames.at(-1)?.json, {});
  });

  it('emits keepalive events after each idle Keepalive-Ping-Interval', async () => {
    const res = await callStream(fx.url, 'process.Process/Start', bash('sleep 1.1'), {
      'keepalive-ping-interval': '0.3',
    });
    const keepalives = res.frames.filter(
      (f) => (f.json.event as Record<string, unknown> | undefined)?.keepalive !== undefined,
    );
    assert.ok(keepalives.length >= 2, `saw ${keepalives.length} keepalives`);
    assert.deepEqual(res.frames.at(-1)?.json, {});
  });

  it('speaks the binary codec and HTTP/2 (h2c), including client streaming', async () => {
    for (const opts of [{ binary: true }, { http2: true }, { http2: true, binary: true }]) {
      const proc = processClient(fx.url, opts);
      const events: string[] = [];
      for await (const r of proc.start({
        process: { cmd: '/bin/echo', args: ['over', 'h2'] },
        stdin: false,
      })) {
        events.push(r.event?.event.case ?? '?');
      }
      assert.deepEqual([events[0], events.at(-1)], ['start', 'end'], JSON.stringify(opts));
      const { entries } = await filesystemClient(fx.url, opts).listDir({ path: fx.dir });
      assert.ok(entries.some((e) => e.name === 'home'));
    }
    const proc = processClient(fx.url, { http2: true });
    const stream = proc.start({
      process: { cmd: '/bin/bash', args: ['-c', 'read x; echo "in:$x"'] },
      stdin: true,
    });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(first.value?.event?.event.case, 'start');
    const pid = first.value?.event?.event.case === 'start' ? first.value.event.event.value.pid : 0;
    // eslint-disable-next-line @typescript-eslint/require-await -- an async iterable of two fixed messages
    async function* input() {
      yield {
        event: {
          case: 'start' as const,
          value: { process: { selector: { case: 'pid' as const, value: pid } } },
        },
      };
      yield {
        event: {
          case: 'data' as const,
          value: { input: { input: { case: 'stdin' as const, value: Buffer.from('streamed\n') } } },
        },
      };
    }
    await proc.streamInput(input());
    let out = '';
    for (let r = await it.next(); r.done !== true; r = await it.next()) {
      const ev = r.value.event?.event;
      if (ev?.case === 'data' && ev.value.output.case === 'stdout')
        out += Buffer.from(ev.value.output.value).toString();
    }
    assert.equal(out, 'in:streamed\n');
  });

  it('selects processes by tag: List shows it, Connect and SendSignal accept it', async () => {
    const proc = processClient(fx.url);
    const stream = proc.start({
      process: { cmd: '/bin/sleep', args: ['5'], cwd: fx.dir },
      tag: 'my-tag',
      stdin: false,
    });
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    const { processes } = await proc.list({});
    const listed = processes.find((p) => p.tag === 'my-tag');
    assert.equal(listed?.config?.cmd, '/bin/sleep');
    assert.equal(listed?.config?.cwd, fx.dir);
    const attached = proc.connect({ process: { selector: { case: 'tag', value: 'my-tag' } } });
    const first = await attached[Symbol.asyncIterator]().next();
    assert.equal(first.value?.event?.event.case, 'start');
    await proc.sendSignal({ process: { selector: { case: 'tag', value: 'my-tag' } }, signal: 9 });
    for (let r = await it.next(); r.done !== true; r = await it.next()) {
      if (r.value.event?.event.case === 'end')
        assert.equal(r.value.event.event.value.status, 'signal: killed');
    }
    const gone = proc.connect({ process: { selector: { case: 'tag', value: 'my-tag' } } });
    await assert.rejects(gone[Symbol.asyncIterator]().next(), /not found/);
  });

  it('refuses signals other than SIGTERM/SIGKILL as unimplemented', async () => {
    const proc = processClient(fx.url);
    const stream = proc.start({ process: { cmd: '/bin/sleep', args: ['5'] }, stdin: false });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    const pid = first.value?.event?.event.case === 'start' ? first.value.event.event.value.pid : 0;
    await assert.rejects(
      proc.sendSignal({ process: { selector: { case: 'pid', value: pid } }, signal: 0 }),
      (e: unknown) => e instanceof ConnectError && e.code === Code.Unimplemented,
    );
    await proc.sendSignal({ process: { selector: { case: 'pid', value: pid } }, signal: 15 });
    for (let r = await it.next(); r.done !== true; r = await it.next()) {
      const ev = r.value.event?.event;
      if (ev?.case === 'end') assert.equal(ev.value.status, 'signal: terminated');
    }
  });
});
