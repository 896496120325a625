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
      const info: { category: keyof typeof HTTP_STATUS_BY_CATEGORY; httpStatus?: number } =
        ERROR_CODES[code];
      assert.equal(status, info.httpStatus ?? HTTP_STATUS_BY_CATEGORY[info.category]);
      assert.equal(body.message, `boom ${code}`);
      assert.equal(body.error_code, code);
    }
  });

  it('answers a full disk with 507, not the category 429', () => {
    assert.equal(toHttpError(new AenvError('STORAGE_NO_SPACE', 'full')).status, 507);
    assert.equal(toHttpError(new AenvError('ENVD_NO_SPACE', 'full')).status, 507);
  });

  it('sends Retry-After (whole seconds, rounded up) when the error names one', () => {
    const quota = new AenvError('TENANT_QUOTA_EXCEEDED', 'too fast', {
      fields: { retryAfterSeconds: 0.2 },
    });
    assert.deepEqual(toHttpError(quota).headers, { 'retry-after': '1' });
    assert.deepEqual(toHttpError(new AenvError('SBX_NOT_FOUND', 'x')).headers, {});
  });

  it('hides the message of errors that are not AenvErrors', () => {
    const { status, body } = toHttpError(new Error('open /var/lib/aenv/secret failed'));
    assert.equal(status, 500);
    assert.deepEqual(body, { code: 500, message: 'internal error', error_code: 'INTERNAL' });
    assert.equal(toHttpError('a string').status, 500);
  });
});
