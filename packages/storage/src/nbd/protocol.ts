/**
 * NBD wire constants and layouts: the subset this server speaks. The
 * normative text is the NBD protocol specification,
 * https://github.com/NetworkBlockDevice/nbd/blob/master/doc/proto.md
 * All integers are big-endian.
 *
 * Handshake (fixed newstyle only):
 * ```
 * S: u64 NBDMAGIC  u64 IHAVEOPT  u16 handshake flags (FIXED_NEWSTYLE | NO_ZEROES)
 * C: u32 client flags
 * C: u64 IHAVEOPT  u32 option  u32 length  [length bytes]       (repeated)
 * S: u64 REPLY_MAGIC  u32 option  u32 reply type  u32 length  [data]
 * ```
 * NBD_OPT_GO / NBD_OPT_INFO data: u32 name length, name, u16 n, n × u16
 * info requests. Replies: NBD_REP_INFO(NBD_INFO_EXPORT: u16 0, u64 size,
 * u16 transmission flags), NBD_REP_INFO(NBD_INFO_BLOCK_SIZE: u16 3, u32 min,
 * u32 preferred, u32 max payload), then NBD_REP_ACK. NBD_OPT_EXPORT_NAME
 * replies with u64 size, u16 flags (and 124 zero bytes unless NO_ZEROES).
 *
 * Transmission (simple replies only; structured replies are refused, so
 * clients fall back):
 * ```
 * C: u32 REQUEST_MAGIC  u16 command flags  u16 type  u64 cookie  u64 offset  u32 length  [data for WRITE]
 * S: u32 SIMPLE_REPLY_MAGIC  u32 error (errno)  u64 cookie  [data for a successful READ]
 * ```
 *
 * @module
 */

/** `NBDMAGIC`. */
export const NBD_MAGIC = 0x4e42444d41474943n;
/** `IHAVEOPT`. */
export const IHAVEOPT = 0x49484156454f5054n;
/** Magic of option replies. */
export const OPT_REPLY_MAGIC = 0x3e889045565a9n;
/** Magic of transmission requests. */
export const REQUEST_MAGIC = 0x25609513;
/** Magic of simple replies. */
export const SIMPLE_REPLY_MAGIC = 0x67446698;

/** Handshake flags (server). */
export const HandshakeFlag = Object.freeze({ fixedNewstyle: 1, noZeroes: 2 });
/** Client flags. */
export const ClientFlag = Object.freeze({ fixedNewstyle: 1, noZeroes: 2 });

/** Option types. */
export const Opt = Object.freeze({
  exportName: 1,
  abort: 2,
  list: 3,
  startTls: 5,
  info: 6,
  go: 7,
  structuredReply: 8,
});

/** Option reply types. */
export const Rep = Object.freeze({
  ack: 1,
  server: 2,
  info: 3,
  errUnsup: 0x80000001,
  errPolicy: 0x80000002,
  errInvalid: 0x80000003,
  errUnknown: 0x80000006,
  errShutdown: 0x80000007,
});

/** `NBD_INFO_*` types. */
export const Info = Object.freeze({ export: 0, name: 1, description: 2, blockSize: 3 });

/** Transmission flags. */
export const TxFlag = Object.freeze({
  hasFlags: 1 << 0,
  readOnly: 1 << 1,
  sendFlush: 1 << 2,
  sendFua: 1 << 3,
  sendTrim: 1 << 5,
  sendWriteZeroes: 1 << 6,
  canMultiConn: 1 << 8,
  sendCache: 1 << 10,
  sendFastZero: 1 << 11,
});

/** Command types. */
export const Cmd = Object.freeze({
  read: 0,
  write: 1,
  disc: 2,
  flush: 3,
  trim: 4,
  cache: 5,
  writeZeroes: 6,
});

/** Command flags. */
export const CmdFlag = Object.freeze({ fua: 1, noHole: 2, df: 4, reqOne: 8, fastZero: 16 });

/** Errno values sent in replies. */
export const Errno = Object.freeze({
  EPERM: 1,
  EIO: 5,
  ENOMEM: 12,
  EINVAL: 22,
  ENOSPC: 28,
  EOVERFLOW: 75,
  ENOTSUP: 95,
  ESHUTDOWN: 108,
});

/** Largest READ/WRITE payload this server accepts (and advertises). */
export const MAX_PAYLOAD = 32 << 20;
/** Largest option payload accepted during the handshake. */
export const MAX_OPTION_LENGTH = 64 << 10;
/** Size of a transmission request header. */
export const REQUEST_SIZE = 28;

/** The `nbd+unix://` URI `qemu-img`/`qemu-io` accept for an export. */
export function nbdUnixUri(socketPath: string, exportName: string): string {
  const esc = (s: string) =>
    s.replace(/[%&#?\s]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `nbd+unix:///${encodeURIComponent(exportName)}?socket=${esc(socketPath)}`;
}

/** The `-drive`/`-blockdev` options QEMU's built-in NBD client takes for an export. */
export function qemuNbdDriveOptions(socketPath: string, exportName: string): string {
  const esc = (s: string) => s.replaceAll(',', ',,');
  return `driver=nbd,server.type=unix,server.path=${esc(socketPath)},export=${esc(exportName)}`;
}
