// The lifecycle with real microVMs and the real, unmodified e2b SDK:
// create from the base template (a snapshot restore), then pause and
// connect (resume) many times while a background process appends a counter
// every 100 ms; after each resume every file is byte-identical and the
// counter process still runs (same pid, counting on). The number of
// cycles is AENV_PAUSE_CYCLES (default 100).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Sandbox } from 'e2b';
import { startTestNode, type TestNode } from './node-harness.js';

const CYCLES = Number(process.env.AENV_PAUSE_CYCLES ?? 100);
let t: TestNode;

before(async () => {
  t = await startTestNode();
});

after(async () => {
  await t?.close();
});

async function counterState(sbx: Sandbox): Promise<{ pid: string; lines: number }> {
  const out = await sbx.commands.run('cat /tmp/counter.pid; wc -l < /home/user/counter.log');
  const [pid, lines] = out.stdout.trim().split('\n');
  return { pid: pid ?? '', lines: Number(lines) };
}

describe('lifecycle with the e2b SDK (real microVMs)', { timeout: 1_800_000 }, () => {
  it(`keeps files and a running process through ${CYCLES} pause/resume cycles`, async () => {
    const sbx = await Sandbox.create('base', { ...t.sdk, timeoutMs: 600_000 });
    try {
      const payload = Buffer.from(Array.from({ length: 65536 }, (_, i) => (i * 31 + 7) % 256));
      await sbx.files.write('/home/user/data.bin', payload.buffer.slice(0));
      await sbx.files.write('/home/user/notes.txt', 'hello across pauses\n');
      await sbx.commands.run(
        "nohup bash -c 'echo $$ > /tmp/counter.pid; i=0; while true; do i=$((i+1)); echo $i >> /home/user/counter.log; sleep 0.1; done' >/dev/null 2>&1 &",
      );
      await new Promise((r) => setTimeout(r, 500));
      let last = await counterState(sbx);
      assert.ok(last.lines > 0, 'the counter runs');
      const started = performance.now();
      for (let i = 0; i < CYCLES; i++) {
        assert.equal(await sbx.pause(), true, `pause ${i}`);
        assert.equal((await Sandbox.getInfo(sbx.sandboxId, { ...t.sdk })).state, 'paused');
        await sbx.connect({ ...t.sdk, timeoutMs: 600_000 });
        const bytes = Buffer.from(await sbx.files.read('/home/user/data.bin', { format: 'bytes' }));
        assert.ok(bytes.equals(payload), `data.bin changed after resume ${i}`);
        assert.equal(await sbx.files.read('/home/user/notes.txt'), 'hello across pauses\n');
        await new Promise((r) => setTimeout(r, 250));
        const now = await counterState(sbx);
        assert.equal(now.pid, last.pid, `the counter process survived resume ${i}`);
        assert.ok(now.lines > last.lines, `the counter counts on after resume ${i}`);
        last = now;
      }
      const perCycle = (performance.now() - started) / Math.max(1, CYCLES);
      console.log(`pause+resume+checks: ${perCycle.toFixed(0)} ms per cycle over ${CYCLES} cycles`);
    } finally {
      await sbx.kill();
    }
  });
});
