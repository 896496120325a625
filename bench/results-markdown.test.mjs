/**
 * Keeps docs/performance.md honest: its results block must be exactly what
 * the results file it names renders to (bench/results-markdown.mjs), so
 * every figure there comes from a committed results file.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BEGIN, END, replaceBlock, resultsMarkdown } from './results-markdown.mjs';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

describe('docs/performance.md', () => {
  it('quotes a committed results file, unchanged', async () => {
    const doc = await readFile(join(root, 'docs/performance.md'), 'utf8');
    const block = doc.slice(doc.indexOf(BEGIN) + BEGIN.length, doc.indexOf(END)).trim();
    const file = /^Results file: `([^`]+)`/.exec(block)?.[1];
    assert.ok(file?.startsWith('bench/results/'), 'the block names its results file');
    const run = JSON.parse(await readFile(join(root, file), 'utf8'));
    assert.equal(block, await resultsMarkdown(run, file));
  });
});

describe('replaceBlock', () => {
  it('replaces only what stands between the markers', () => {
    const text = `a\n${BEGIN}\nold\n${END}\nb\n`;
    assert.equal(replaceBlock(text, 'new'), `a\n${BEGIN}\n\nnew\n\n${END}\nb\n`);
    assert.throws(() => replaceBlock('no markers', 'x'), /no <!-- results:begin -->/);
  });
});
