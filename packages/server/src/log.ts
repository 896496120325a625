/**
 * The daemon's structured logger: one JSON object per line on stderr, with
 * the field names of `LOG_FIELDS`. Library packages never log; the daemon
 * turns their diagnostics-channel events into these lines.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Log levels in increasing severity. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Fields of a log line, keyed by `LOG_FIELDS` values. */
export type LogRecord = Record<string, unknown>;

/** A structured logger. */
export interface Logger {
  debug(msg: string, fields?: LogRecord): void;
  info(msg: string, fields?: LogRecord): void;
  warn(msg: string, fields?: LogRecord): void;
  error(msg: string, fields?: LogRecord): void;
}

/** Turns an error into log fields, keeping the code and cause chain. */
export function errorFields(err: unknown): LogRecord {
  if (err instanceof AenvError) return { 'error.code': err.code, error: err.toJSON() };
  if (err instanceof Error) return { 'error.message': err.message, stack: err.stack };
  return { 'error.message': String(err) };
}

/** A logger writing JSON lines to `write` (default: stderr) at `level` and above. */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const at =
    (lvl: LogLevel) =>
    (msg: string, fields: LogRecord = {}): void => {
      if (ORDER[lvl] < ORDER[level]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('error', () => undefined);
