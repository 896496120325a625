/**
 * The messages between `NbdServer` (the caller's thread) and its worker
 * thread: calls with ids, their results or errors, and forwarded
 * diagnostics events. Errors cross as `{ code, message, fields }` and are
 * rebuilt as `AenvError`s with the same code.
 *
 * @module
 */
import { AenvError, isErrorCode, type ErrorFields } from '@aenv/shared';
import type { SealOptions } from '../image/image-device.js';
import type { ExportSpec } from './nbd-host.js';

/** A call into the worker. */
export type NbdCall =
  | { readonly op: 'addExport'; readonly name: string; readonly spec: ExportSpec }
  | { readonly op: 'removeExport'; readonly name: string }
  | { readonly op: 'sealExport'; readonly name: string; readonly options?: SealOptions }
  | { readonly op: 'flushExport'; readonly name: string }
  | { readonly op: 'stats' }
  | { readonly op: 'close' };

/** A call with its id. */
export interface CallMessage {
  readonly id: number;
  readonly call: NbdCall;
}

/** An error as it crosses threads. */
export interface SerializedError {
  readonly code: string;
  readonly message: string;
  readonly fields?: ErrorFields;
}

/** What the worker sends back. */
export type WorkerMessage =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: SerializedError }
  | { readonly event: string; readonly payload: unknown };

/** Flattens an error for `postMessage`. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof AenvError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const message = err.code === 'INTERNAL' ? `${err.message}${cause}` : err.message;
    return { code: err.code, message, fields: { ...err.fields } };
  }
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

/** Rebuilds an error that crossed threads. */
export function deserializeError(e: SerializedError): AenvError {
  const code = isErrorCode(e.code) ? e.code : 'INTERNAL';
  return new AenvError(code, e.message, { fields: e.fields ?? {} });
}
