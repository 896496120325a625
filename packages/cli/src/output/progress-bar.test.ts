import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeProgress, progressBar, renderBar } from './progress-bar.js';

describe('progress bars', () => {
  it('draw a bar for a fraction, clamped', () => {
    assert.equal(renderBar(0.5, 10), '[#####.....]');
    assert.equal(renderBar(2, 4), '[####]');
    assert.equal(renderBar(Number.NaN, 4), '[....]');
    assert.equal(
      describeProgress({ stage: 'layer 1/2', bytes: 3 * 2 ** 20, totalBytes: 12 * 2 ** 20 }),
      `layer 1/2  ${renderBar(0.25)}   25%  3.0/12.0 MiB`,
    );
  });

  it('redraw one line per stage on a terminal', () => {
    let out = '';
    const bar = progressBar({ isTTY: true, write: (s) => (out += String(s)) });
    bar({ stage: 'a', bytes: 1, totalBytes: 2 });
    bar({ stage: 'a', bytes: 2, totalBytes: 2 });
    bar({ stage: 'a', status: 'done' });
    bar({ stage: 'b', status: 'start' });
    assert.equal(out.split('\n').length, 2, 'stage a ended its line');
    assert.ok(out.startsWith('\r\x1b[K'));
  });

  it('print stage starts, ends and at most one progress line per 5 s on a pipe', () => {
    const lines: string[] = [];
    let now = 0;
    const bar = progressBar({ write: (s) => lines.push(String(s)) }, () => now);
    bar({ stage: 'pull', status: 'start' });
    bar({ stage: 'pull', bytes: 1 });
    now = 6000;
    bar({ stage: 'pull', bytes: 2 });
    bar({ stage: 'pull', status: 'done' });
    assert.deepEqual(lines, ['pull\n', 'pull  0.0 MiB\n', 'pull  done\n']);
  });

  it('print every build output line, above a bar being drawn', () => {
    let out = '';
    const bar = progressBar({ write: (s) => (out += String(s)), isTTY: true });
    bar({ stage: 'layer 1/1 abc', bytes: 1, totalBytes: 2 });
    bar({ stage: 'build', status: 'progress', message: 'Step 1/2: RUN make' });
    bar({ stage: 'build', status: 'progress', message: '[run] ok' });
    assert.ok(out.endsWith('\r\x1b[KStep 1/2: RUN make\n[run] ok\n'), JSON.stringify(out));
    const lines: string[] = [];
    const pipe = progressBar({ write: (s) => lines.push(String(s)) }, () => 0);
    for (const m of ['a', 'b', 'c']) pipe({ stage: 'build', status: 'progress', message: m });
    assert.deepEqual(lines, ['a\n', 'b\n', 'c\n']);
  });
});
