/**
 * envd's structured log: one JSON object per line on stderr.
 *
 * envd is a process (not a library), so it logs; field names come from
 * `LOG_FIELDS`. Tests pass `logger: null` to keep their output clean.
 *
 * @module
 */
import { LOG_FIELDS } from '@aenv/shared';

/** Severity of a log line. */
export type LogLevel = 'info' | 'warn' | 'error';

/** Where envd writes its log lines. */
export interface EnvdLogger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

/** A logger writing JSON lines to a stream (stderr by default). */
export function jsonLogger(out: NodeJS.WritableStream = process.stderr): EnvdLogger {
  return {
    log(level, msg, fields) {
      out.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
    },
  };
}

/** A logger that drops everything. */
export const silentLogger: EnvdLogger = { log() {} };

/** Log fields describing an error. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return {
      [LOG_FIELDS.errorMessage]: err.message,
      ...(typeof code === 'string' ? { [LOG_FIELDS.errorCode]: code } : {}),
    };
  }
  return { [LOG_FIELDS.errorMessage]: String(err) };
}
