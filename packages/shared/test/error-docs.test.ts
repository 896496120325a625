// Keeps docs/errors.md and the error-code registry in sync: a code added
// without documentation, or documented without existing, fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_CATEGORIES, ERROR_CODES } from '../src/error-codes.js';
import { httpStatusOf } from '../src/http-error.js';

const docPath = new URL('../../../../docs/errors.md', import.meta.url);
const ROW = /^\|\s*`([A-Z0-9_]+)`\s*\|\s*(\w+)\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|\s*$/;

interface DocRow {
  readonly category: string;
  readonly status: number;
  readonly meaning: string;
}

function documentedCodes(): Map<string, DocRow> {
  const rows = new Map<string, DocRow>();
  for (const line of readFileSync(docPath, 'utf8').split('\n')) {
    const m = ROW.exec(line);
    if (m === null) continue;
    const [, code, category, status, meaning] = m as unknown as [
      string,
      string,
      string,
      string,
      string,
    ];
    assert.ok(!rows.has(code), `${code} is documented twice`);
    rows.set(code, { category, status: Number(status), meaning });
  }
  return rows;
}

describe('docs/errors.md', () => {
  const documented = documentedCodes();

  it('documents every registered code', () => {
    const missing = Object.keys(ERROR_CODES).filter((c) => !documented.has(c));
    assert.deepEqual(missing, [], `add these codes to docs/errors.md: ${missing.join(', ')}`);
  });

  it('documents no code that does not exist', () => {
    const extra = [...documented.keys()].filter((c) => !Object.hasOwn(ERROR_CODES, c));
    assert.deepEqual(extra, [], `remove these codes from docs/errors.md: ${extra.join(', ')}`);
  });

  it('states the right category, HTTP status and a meaning for each code', () => {
    for (const [code, row] of documented) {
      const info = ERROR_CODES[code as keyof typeof ERROR_CODES];
      assert.equal(row.category, info.category, `${code}: category`);
      assert.ok((ERROR_CATEGORIES as readonly string[]).includes(row.category));
      assert.equal(
        row.status,
        (info as { httpStatus?: number }).httpStatus ?? httpStatusOf(info.category),
        `${code}: HTTP status`,
      );
      assert.ok(row.meaning.length > 10, `${code}: meaning is too short`);
    }
  });
});
