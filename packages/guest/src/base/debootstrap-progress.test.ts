import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DebootstrapProgress } from './debootstrap-progress.js';

describe('DebootstrapProgress', () => {
  it('rises monotonically through the phases and ignores other lines', () => {
    const p = new DebootstrapProgress();
    const seen: number[] = [];
    const feed = (line: string): void => {
      const u = p.line(line);
      if (u !== undefined) seen.push(u.percent);
    };
    feed('W: something');
    feed('I: Retrieving InRelease');
    for (let i = 0; i < 140; i++) feed(`I: Retrieving pkg${i} 1.0`);
    for (let i = 0; i < 140; i++) feed(`I: Validating pkg${i} 1.0`);
    for (let i = 0; i < 88; i++) feed(`I: Extracting pkg${i}...`);
    for (let i = 0; i < 140; i++) feed(`I: Unpacking pkg${i}...`);
    for (let i = 0; i < 140; i++) feed(`I: Configuring pkg${i}...`);
    feed('I: Base system installed successfully.');
    assert.ok(seen.every((v, i) => i === 0 || v >= (seen[i - 1] as number)));
    assert.ok((seen[0] as number) <= 3);
    assert.ok((seen.at(-1) as number) >= 85 && (seen.at(-1) as number) <= 88, String(seen.at(-1)));
    assert.equal(p.line('plain')?.percent, undefined);
    assert.match(p.line('I: Configuring x...')?.message ?? '', /^debootstrap: Configuring x/);
  });
});
