import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CliContext } from '../cli-context.js';
import { formatTable, listFormat, printList } from './table.js';

function fakeContext(isTTY: boolean): { ctx: CliContext; text: () => string } {
  let text = '';
  const stdout = { isTTY, write: (s: string | Uint8Array) => (text += String(s)) };
  const ctx = { stdout, out: (l: string) => (text += `${l}\n`) } as unknown as CliContext;
  return { ctx, text: () => text };
}

describe('lists', () => {
  it('align columns with three spaces and no trailing blanks', () => {
    const text = formatTable(
      ['ID', 'STATE', 'NOTE'],
      [
        ['a', 'running', ''],
        ['bbbbbb', 'paused', 'x'],
      ],
    );
    assert.equal(text, 'ID       STATE     NOTE\na        running\nbbbbbb   paused    x\n');
  });

  it('print a table on a terminal, JSON on a pipe, ids with -q, as asked', () => {
    const items = [{ id: 'a', n: 1 }];
    const how = {
      columns: [{ header: 'ID', cell: (i: { id: string }) => i.id }],
      id: (i: { id: string }) => i.id,
    };
    const tty = fakeContext(true);
    printList(tty.ctx, items, { ...how, format: listFormat(tty.ctx, undefined, false) });
    assert.equal(tty.text(), 'ID\na\n');
    const pipe = fakeContext(false);
    printList(pipe.ctx, items, { ...how, format: listFormat(pipe.ctx, undefined, false) });
    assert.deepEqual(JSON.parse(pipe.text()), items);
    const quiet = fakeContext(true);
    printList(quiet.ctx, items, { ...how, format: listFormat(quiet.ctx, 'json', true) });
    assert.equal(quiet.text(), 'a\n');
    assert.equal(listFormat(pipe.ctx, 'table', false), 'table');
  });
});
