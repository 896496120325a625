/**
 * The option-haggling half of an NBD connection: given one option from the
 * client, what to send back and whether transmission starts. Pure
 * functions over buffers; `nbd-connection.ts` does the socket work.
 *
 * @module
 */
import type { NbdExport } from './nbd-export.js';
import { Info, MAX_PAYLOAD, OPT_REPLY_MAGIC, Opt, Rep, TxFlag } from './protocol.js';

/** What the connection should do after an option. */
export interface OptionOutcome {
  /** Bytes to send, in order. */
  readonly replies: Buffer[];
  /** The export transmission starts on, if it does. */
  readonly start?: NbdExport;
  /** Close the connection after sending. */
  readonly close?: boolean;
}

/** Looks exports up by name; `''` asks for the default export. */
export type ExportLookup = (name: string) => NbdExport | undefined;

/** Answers one option. */
export function answerOption(
  option: number,
  data: Buffer,
  lookup: ExportLookup,
  names: () => string[],
  noZeroes: boolean,
): OptionOutcome {
  switch (option) {
    case Opt.exportName:
      return exportName(data.toString('utf8'), lookup, noZeroes);
    case Opt.go:
    case Opt.info:
      return goOrInfo(option, data, lookup);
    case Opt.list:
      if (data.length !== 0) return { replies: [optReply(option, Rep.errInvalid)] };
      return {
        replies: [
          ...names().map((n) => optReply(option, Rep.server, listEntry(n))),
          optReply(option, Rep.ack),
        ],
      };
    case Opt.abort:
      return { replies: [optReply(option, Rep.ack)], close: true };
    default:
      // STARTTLS, STRUCTURED_REPLY, META_CONTEXT...: refused, clients fall back.
      return { replies: [optReply(option, Rep.errUnsup)] };
  }
}

/** Transmission flags of an export. */
export function transmissionFlags(exp: NbdExport): number {
  const base =
    TxFlag.hasFlags | TxFlag.sendFlush | TxFlag.sendFua | TxFlag.canMultiConn | TxFlag.sendCache;
  if (exp.provider.readOnly) return base | TxFlag.readOnly;
  return base | TxFlag.sendTrim | TxFlag.sendWriteZeroes | TxFlag.sendFastZero;
}

function exportName(name: string, lookup: ExportLookup, noZeroes: boolean): OptionOutcome {
  const exp = lookup(name);
  // EXPORT_NAME has no error reply: the only answer to an unknown name is to hang up.
  if (exp === undefined) return { replies: [], close: true };
  const r = Buffer.alloc(noZeroes ? 10 : 134);
  r.writeBigUInt64BE(BigInt(exp.provider.size), 0);
  r.writeUInt16BE(transmissionFlags(exp), 8);
  return { replies: [r], start: exp };
}

function goOrInfo(option: number, data: Buffer, lookup: ExportLookup): OptionOutcome {
  if (data.length < 6) return { replies: [optReply(option, Rep.errInvalid)] };
  const nameLength = data.readUInt32BE(0);
  if (4 + nameLength + 2 > data.length) return { replies: [optReply(option, Rep.errInvalid)] };
  const name = data.toString('utf8', 4, 4 + nameLength);
  const requests = data.readUInt16BE(4 + nameLength);
  if (data.length !== 4 + nameLength + 2 + requests * 2) {
    return { replies: [optReply(option, Rep.errInvalid)] };
  }
  const exp = lookup(name);
  if (exp === undefined) return { replies: [optReply(option, Rep.errUnknown)] };
  const info = Buffer.alloc(12);
  info.writeUInt16BE(Info.export, 0);
  info.writeBigUInt64BE(BigInt(exp.provider.size), 2);
  info.writeUInt16BE(transmissionFlags(exp), 10);
  // Any alignment is served (partial blocks are read-modify-written), so the minimum is 1.
  const sizes = Buffer.alloc(14);
  sizes.writeUInt16BE(Info.blockSize, 0);
  sizes.writeUInt32BE(1, 2);
  sizes.writeUInt32BE(exp.provider.blockSize, 6);
  sizes.writeUInt32BE(MAX_PAYLOAD, 10);
  const replies = [
    optReply(option, Rep.info, info),
    optReply(option, Rep.info, sizes),
    optReply(option, Rep.ack),
  ];
  return option === Opt.go ? { replies, start: exp } : { replies };
}

function listEntry(name: string): Buffer {
  const n = Buffer.from(name, 'utf8');
  const b = Buffer.alloc(4 + n.length);
  b.writeUInt32BE(n.length, 0);
  n.copy(b, 4);
  return b;
}

/** Encodes an option reply. */
export function optReply(option: number, type: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(20 + data.length);
  h.writeBigUInt64BE(OPT_REPLY_MAGIC, 0);
  h.writeUInt32BE(option, 8);
  h.writeUInt32BE(type >>> 0, 12);
  h.writeUInt32BE(data.length, 16);
  data.copy(h, 20);
  return h;
}
