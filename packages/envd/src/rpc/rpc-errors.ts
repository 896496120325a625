/**
 * Wraps RPC implementations so every failure leaves as a ConnectError with
 * the right code, and unexpected ones are logged once.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import { ConnectError, type HandlerContext } from '@connectrpc/connect';
import { toConnectError } from '../errors.js';
import { errorFields, type EnvdLogger } from '../logger.js';

function convert(err: unknown, logger: EnvdLogger, method: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (!(err instanceof AenvError) || err.category === 'Internal') {
    logger.log('error', `rpc ${method} failed`, errorFields(err));
  }
  return toConnectError(err);
}

/** A unary implementation whose errors are converted. */
export function unary<I, O>(
  logger: EnvdLogger,
  method: string,
  fn: (req: I, ctx: HandlerContext) => Promise<O> | O,
): (req: I, ctx: HandlerContext) => Promise<O> {
  return async (req, ctx) => {
    try {
      return await fn(req, ctx);
    } catch (err) {
      throw convert(err, logger, method);
    }
  };
}

/** A server-streaming implementation whose errors are converted. */
export function serverStream<I, O>(
  logger: EnvdLogger,
  method: string,
  fn: (req: I, ctx: HandlerContext) => AsyncIterable<O>,
): (req: I, ctx: HandlerContext) => AsyncIterable<O> {
  return async function* wrapped(req, ctx) {
    try {
      yield* fn(req, ctx);
    } catch (err) {
      throw convert(err, logger, method);
    }
  };
}
