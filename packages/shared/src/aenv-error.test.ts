import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError, toAenvError } from './aenv-error.js';

class SandboxGoneError extends AenvError {
  constructor(id: string) {
    super('INVALID_ARGUMENT', `sandbox ${id} gone`, { fields: { sandboxId: id } });
  }
}

describe('AenvError', () => {
  it('derives the category from the code and keeps fields and cause', () => {
    const cause = new Error('disk');
    const err = new AenvError('CONFIG_FILE_UNREADABLE', 'no file', {
      cause,
      fields: { path: '/x' },
    });
    assert.equal(err.category, 'InvalidArgument');
    assert.equal(err.cause, cause);
    assert.deepEqual(err.fields, { path: '/x' });
    assert.ok(Object.isFrozen(err.fields));
    assert.equal(err.name, 'AenvError');
    assert.deepEqual(err.toJSON().cause, { name: 'Error', message: 'disk' });
  });

  it('recognises instances from another copy of the class by brand', () => {
    const foreign = Object.create(null) as Record<symbol, unknown>;
    Object.defineProperty(foreign, Symbol.for('aenv.error'), { value: true });
    assert.ok(foreign instanceof AenvError);
    assert.ok(!(new Error('x') instanceof AenvError));
  });

  it('keeps prototype semantics for subclasses', () => {
    const err = new SandboxGoneError('abc');
    assert.ok(err instanceof SandboxGoneError);
    assert.ok(err instanceof AenvError);
    assert.equal(err.name, 'SandboxGoneError');
    assert.ok(!(new AenvError('INTERNAL', 'x') instanceof SandboxGoneError));
  });

  it('wraps foreign errors with context and leaves AenvErrors alone', () => {
    const original = new AenvError('ID_INVALID', 'bad id');
    assert.equal(toAenvError(original), original);
    const wrapped = toAenvError(new Error('EACCES'), 'INTERNAL', 'opening socket');
    assert.equal(wrapped.message, 'opening socket: EACCES');
    assert.equal(wrapped.code, 'INTERNAL');
    assert.ok(wrapped.cause instanceof Error);
  });
});
