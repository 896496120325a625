// The VMM's log and metrics FIFOs, with real named pipes: lines written by
// a non-blocking writer (as Firecracker opens them) arrive, partial lines
// wait for their end, metrics lines are parsed, and closing removes both.
import assert from 'node:assert/strict';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { directLayout } from './vmm-layout.js';
import { VmmTelemetry } from './vmm-telemetry.js';

describe('VmmTelemetry', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-fct-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads the log and the latest metrics from FIFOs, then removes them', async () => {
    const layout = directLayout(dir);
    const t = await VmmTelemetry.open(layout, join(dir, 'firecracker.log'));
    const writer = (path: string) => openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    const log = writer(layout.logFifo.host);
    const metrics = writer(layout.metricsFifo.host);
    const next = t.nextMetrics(2000);
    writeSync(log, 'first line\nsecond ');
    writeSync(metrics, 'not json\n{"vmm":{"panic_count":0},"utc_timestamp_ms":1}\n');
    assert.deepEqual(await next, { vmm: { panic_count: 0 }, utc_timestamp_ms: 1 });
    writeSync(log, 'line\n');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(t.logTail(), 'first line\nsecond line\n');
    assert.equal(t.latest?.utc_timestamp_ms, 1);
    await assert.rejects(
      t.nextMetrics(20),
      (e: Error & { code?: string }) => e.code === 'VMM_TIMEOUT',
    );
    closeSync(log);
    closeSync(metrics);
    await t.close();
    await t.close();
    await assert.rejects(access(layout.logFifo.host));
    await assert.rejects(access(layout.metricsFifo.host));
    assert.equal(await readFile(join(dir, 'firecracker.log'), 'utf8'), 'first line\nsecond line\n');
  });
});
