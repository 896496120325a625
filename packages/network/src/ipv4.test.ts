/**
 * Tests of IPv4 parsing, formatting and range arithmetic.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  contains,
  formatCidr,
  formatIpv4,
  formatRange,
  maskOf,
  mergeRanges,
  overlaps,
  parseCidr,
  parseIpv4,
  rangeOf,
} from './ipv4.js';

describe('parseIpv4 / formatIpv4', () => {
  it('round-trips addresses at the edges of the range', () => {
    for (const text of ['0.0.0.0', '255.255.255.255', '10.200.0.2', '169.254.100.1']) {
      const n = parseIpv4(text);
      assert.notEqual(n, undefined, text);
      assert.equal(formatIpv4(n as number), text);
    }
    assert.equal(parseIpv4('255.255.255.255'), 0xffffffff);
  });

  it('rejects malformed text, octets above 255 and leading zeros', () => {
    for (const text of [
      '',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '01.2.3.4',
      '1.2.3.-4',
      'a.b.c.d',
      '1..2.3',
      ' 1.2.3.4',
    ]) {
      assert.equal(parseIpv4(text), undefined, text);
    }
  });
});

describe('parseCidr', () => {
  it('reads a bare address as a /32 and clears host bits unless strict', () => {
    assert.deepEqual(parseCidr('8.8.8.8'), { base: parseIpv4('8.8.8.8'), prefix: 32 });
    assert.equal(formatCidr(parseCidr('10.1.2.3/8') as never), '10.0.0.0/8');
    assert.equal(parseCidr('10.1.2.3/8', true), undefined);
    assert.equal(formatCidr(parseCidr('10.0.0.0/8', true) as never), '10.0.0.0/8');
  });

  it('accepts /0 and /32 and rejects other prefix forms', () => {
    assert.deepEqual(parseCidr('0.0.0.0/0'), { base: 0, prefix: 0 });
    assert.equal(formatCidr(parseCidr('1.2.3.4/32') as never), '1.2.3.4/32');
    for (const text of ['1.2.3.4/33', '1.2.3.4/', '1.2.3.4/08', '1.2.3.4/-1', '1.2.3.4/a']) {
      assert.equal(parseCidr(text), undefined, text);
    }
  });
});

describe('ranges', () => {
  it('computes masks and ranges', () => {
    assert.equal(maskOf(0), 0);
    assert.equal(maskOf(32), 0xffffffff);
    assert.equal(maskOf(30), 0xfffffffc);
    const r = rangeOf(parseCidr('10.200.0.4/30') as never);
    assert.equal(formatIpv4(r.first), '10.200.0.4');
    assert.equal(formatIpv4(r.last), '10.200.0.7');
    assert.equal(rangeOf({ base: 0, prefix: 0 }).last, 0xffffffff);
  });

  it('detects overlap and containment', () => {
    const a = parseCidr('10.0.0.0/8') as never;
    const b = parseCidr('10.99.0.0/16') as never;
    const c = parseCidr('11.0.0.0/8') as never;
    assert.ok(overlaps(a, b) && overlaps(b, a));
    assert.ok(!overlaps(a, c));
    assert.ok(contains(a, b) && !contains(b, a));
  });

  it('merges overlapping and adjacent ranges and keeps disjoint ones', () => {
    const r = (a: string, b: string) => ({
      first: parseIpv4(a) as number,
      last: parseIpv4(b) as number,
    });
    const merged = mergeRanges([
      r('10.0.0.8', '10.0.0.15'),
      r('10.0.0.0', '10.0.0.7'),
      r('10.0.0.4', '10.0.0.5'),
      r('10.0.1.0', '10.0.1.0'),
    ]);
    assert.deepEqual(merged.map(formatRange), ['10.0.0.0-10.0.0.15', '10.0.1.0']);
    assert.deepEqual(mergeRanges([]), []);
  });
});
