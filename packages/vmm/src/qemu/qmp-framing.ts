/**
 * QMP wire framing: the QEMU Machine Protocol sends one JSON object per
 * line (`\r\n`-terminated) on its socket. Every message is one of a
 * greeting (`{"QMP": ...}`), a command reply (`{"return": ...}` or
 * `{"error": {"class", "desc"}}`, carrying the `id` the command was sent
 * with) or an asynchronous event (`{"event", "data", "timestamp"}`).
 * Reference: QEMU `docs/interop/qmp-spec.txt`.
 *
 * @module
 */
import { StringDecoder } from 'node:string_decoder';

/** A reply to a command. */
export interface QmpReply {
  readonly kind: 'reply';
  readonly id: unknown;
  readonly ok: boolean;
  /** `return` on success. */
  readonly value?: unknown;
  /** `error.class` and `error.desc` on failure. */
  readonly errorClass?: string;
  readonly errorDesc?: string;
}

/** An asynchronous event. */
export interface QmpEvent {
  readonly kind: 'event';
  readonly event: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The server greeting. */
export interface QmpGreeting {
  readonly kind: 'greeting';
  readonly version: unknown;
}

/** Any QMP message. */
export type QmpMessage = QmpReply | QmpEvent | QmpGreeting;

/** Classifies one parsed JSON object; throws on anything that is not QMP. */
export function classifyQmp(obj: unknown): QmpMessage {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw new Error(`QMP message is not an object: ${JSON.stringify(obj)}`);
  }
  const m = obj as Record<string, unknown>;
  if ('QMP' in m) return { kind: 'greeting', version: (m.QMP as Record<string, unknown>)?.version };
  if (typeof m.event === 'string') {
    const data = typeof m.data === 'object' && m.data !== null ? m.data : {};
    return { kind: 'event', event: m.event, data: data as Record<string, unknown> };
  }
  if ('return' in m) return { kind: 'reply', id: m.id, ok: true, value: m.return };
  if (typeof m.error === 'object' && m.error !== null) {
    const e = m.error as Record<string, unknown>;
    return {
      kind: 'reply',
      id: m.id,
      ok: false,
      errorClass: String(e.class),
      errorDesc: String(e.desc),
    };
  }
  throw new Error(`unrecognised QMP message: ${JSON.stringify(obj).slice(0, 200)}`);
}

/** Splits a byte stream into QMP messages. */
export class QmpLineReader {
  #pending = '';
  readonly #decoder = new StringDecoder('utf8');

  /** Feeds bytes; returns the complete messages they finish. */
  push(chunk: Buffer | string): QmpMessage[] {
    this.#pending += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const out: QmpMessage[] = [];
    let nl = this.#pending.indexOf('\n');
    while (nl !== -1) {
      const line = this.#pending.slice(0, nl).trim();
      this.#pending = this.#pending.slice(nl + 1);
      if (line !== '') out.push(classifyQmp(JSON.parse(line)));
      nl = this.#pending.indexOf('\n');
    }
    return out;
  }

  /** Bytes received after the last complete line. */
  get buffered(): number {
    return this.#pending.length;
  }
}

/** Encodes one command (a line of JSON). */
export function encodeQmpCommand(command: string, args: object | undefined, id: number): string {
  const msg: Record<string, unknown> = { execute: command, id };
  if (args !== undefined) msg.arguments = args;
  return `${JSON.stringify(msg)}\r\n`;
}
