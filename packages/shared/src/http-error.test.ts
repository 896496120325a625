import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from './aenv-error.js';
import { ERROR_CATEGORIES, ERROR_CODES, type ErrorCode } from './error-codes.js';
import { HTTP_STATUS_BY_CATEGORY, httpStatusOf, toHttpError } from './http-error.js';

describe('HTTP error mapping', () => {
  it('maps every category to exactly one HTTP error status', () => {
    assert.deepEqual(Object.keys(HTTP_STATUS_BY_CATEGORY).sort(), [...ERROR_CATEGORIES].sort());
    for (const category of ERROR_CATEGORIES) {
      const status = httpStatusOf(category);
      assert.ok(
        Number.isInteger(status) && status >= 400 && status <= 599,
        `${category}: ${status}`,
      );
    }
  });

  it('uses the statuses the e2b SDKs rely on', () => {
    assert.equal(httpStatusOf('NotFound'), 404);
    assert.equal(httpStatusOf('FailedPrecondition'), 409);
    assert.equal(httpStatusOf('Unauthenticated'), 401);
    assert.equal(httpStatusOf('InvalidArgument'), 400);
    assert.equal(httpStatusOf('ResourceExhausted'), 429);
    assert.equal(httpStatusOf('Internal'), 500);
  });

  it('turns every registered code into a body whose code equals the status', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const { status, body } = toHttpError(new AenvError(code, `boom ${code}`));
      assert.equal(body.code, status);
      assert.equal(status, HTTP_STATUS_BY_CATEGORY[ERROR_CODES[code].category]);
      assert.equal(body.message, `boom ${code}`);
      assert.equal(body.error_code, code);
    }
  });

  it('hides the message of errors that are not AenvErrors', () => {
    const { status, body } = toHttpError(new Error('open /var/lib/aenv/secret failed'));
    assert.equal(status, 500);
    assert.deepEqual(body, { code: 500, message: 'internal error', error_code: 'INTERNAL' });
    assert.equal(toHttpError('a string').status, 500);
  });
});
