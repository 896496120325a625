/**
 * The control plane's structured logger: one JSON object per line on
 * stderr, with the field names of `LOG_FIELDS` (the same lines the node
 * daemon writes).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** Log levels in increasing severity. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A structured logger. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Log fields of an error, keeping its code and cause chain. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof AenvError) return { 'error.code': err.code, error: err.toJSON() };
  if (err instanceof Error) return { 'error.message': err.message };
  return { 'error.message': String(err) };
}

/** A logger writing JSON lines to `write` (default stderr) at `level` and above. */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const at =
    (lvl: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}): void => {
      if (ORDER[lvl] < ORDER[level]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('error', () => undefined);
