import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memAvailable, mib, parseKbField, processPss } from './host-memory.js';

describe('host memory', () => {
  it('parses kB fields of smaps_rollup and meminfo', () => {
    const text = 'Rss:              12 kB\nPss:               7 kB\nPss_Anon:          3 kB\n';
    assert.equal(parseKbField(text, 'Pss'), 7 * 1024);
    assert.equal(parseKbField(text, 'Pss_Anon'), 3 * 1024);
    assert.equal(parseKbField(text, 'Swap'), undefined);
  });

  it('reads this process and the host', async () => {
    const pss = await processPss(process.pid);
    assert.ok(pss > 1 << 20 && pss < 4 * 2 ** 30, `Pss ${mib(pss)}`);
    assert.ok((await memAvailable()) > 0);
    await assert.rejects(processPss(2 ** 30));
  });
});
