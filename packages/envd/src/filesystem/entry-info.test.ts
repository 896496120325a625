/**
 * Unit tests for the Go-compatible permission strings of {@link goModeString}.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goModeString } from './entry-info.js';

describe('goModeString', () => {
  it('formats files, directories and symlinks as Go does', () => {
    assert.equal(goModeString(0o100644n), '-rw-r--r--');
    assert.equal(goModeString(0o040755n), 'drwxr-xr-x');
    assert.equal(goModeString(0o120777n), 'Lrwxrwxrwx');
  });

  it('puts special bits and device letters where Go does', () => {
    assert.equal(goModeString(0o041777n), 'dtrwxrwxrwx');
    assert.equal(goModeString(0o104755n), 'urwxr-xr-x');
    assert.equal(goModeString(0o020666n), 'Dcrw-rw-rw-');
    assert.equal(goModeString(0o010600n), 'prw-------');
    assert.equal(goModeString(0o140755n), 'Srwxr-xr-x');
  });
});
