/**
 * What the VM suites run inside a guest, as shell text, and the parsers of
 * what they print. Everything runs as root through envd and detaches with
 * `setsid`, so it outlives the envd request that started it.
 *
 * - the **counter**: increments `/tmp/aenv-counter` every 100 ms of guest
 *   time; a paused guest must not count;
 * - the **memory holder**: a python process that keeps 4 MiB of random
 *   bytes in its heap and, every 500 ms, writes its pid, a round number,
 *   the digest it took at the start and whether the bytes still match it
 *   (`ok`/`CORRUPT`) to `/tmp/aenv-mem`: after a restore the same process
 *   must go on, with the same memory;
 * - the **fingerprint**: hostname, a token on disk, the digest of a file in
 *   tmpfs (guest RAM), the memory holder's line and the counter's pid.
 *
 * @module
 */

/** Where the counter writes. */
export const COUNTER_FILE = '/tmp/aenv-counter';
/** Where the memory holder writes. */
export const MEMORY_FILE = '/tmp/aenv-mem';
/** A token on the rootfs. */
export const DISK_FILE = '/home/user/aenv-disk-token';
/** A file in tmpfs, that is in guest RAM. */
export const TMPFS_FILE = '/dev/shm/aenv-blob';

/** Starts the counter; its pid goes to `<COUNTER_FILE>.pid`. */
export const START_COUNTER = `setsid sh -c '
n=0
while :; do n=$((n+1)); echo $n > ${COUNTER_FILE}.tmp; mv ${COUNTER_FILE}.tmp ${COUNTER_FILE}; sleep 0.1; done
' </dev/null >/dev/null 2>&1 & echo $! > ${COUNTER_FILE}.pid`;

/** Starts the memory holder. */
export const START_MEMORY_HOLDER = `setsid python3 -c '
import hashlib, os, time
blob = bytearray(os.urandom(4 << 20))
want = hashlib.sha256(blob).hexdigest()
n = 0
while True:
    n += 1
    ok = hashlib.sha256(blob).hexdigest() == want
    with open("${MEMORY_FILE}.tmp", "w") as f:
        f.write("%d %d %s %s\\n" % (os.getpid(), n, want, "ok" if ok else "CORRUPT"))
    os.rename("${MEMORY_FILE}.tmp", "${MEMORY_FILE}")
    time.sleep(0.5)
' </dev/null >/dev/null 2>&1 &`;

/** Reads the counter and the guest's uptime (CLOCK_BOOTTIME) on one line each. */
export const READ_COUNTER_AND_CLOCK = `cat ${COUNTER_FILE} /proc/uptime`;

/** Writes a token to disk and `mib` MiB of random bytes into tmpfs, durable on disk. */
export function writeState(token: string, mib: number): string {
  return [
    `mkdir -p $(dirname ${DISK_FILE})`,
    `echo ${token} > ${DISK_FILE}`,
    `head -c ${mib}M /dev/urandom > ${TMPFS_FILE}`,
    'sync',
  ].join(' && ');
}

/** Prints the fingerprint lines (see {@link parseFingerprint}). */
export const READ_FINGERPRINT = [
  'uname -n',
  `cat ${DISK_FILE}`,
  `sha256sum ${TMPFS_FILE} | cut -d" " -f1`,
  `cat ${MEMORY_FILE} 2>/dev/null || echo none`,
  `cat ${COUNTER_FILE}.pid 2>/dev/null || echo none`,
].join('; ');

/** The counter and the guest clock at one moment. */
export interface CounterReading {
  readonly count: number;
  /** Guest uptime in ms (10 ms resolution). */
  readonly uptimeMs: number;
}

/** What the memory holder last wrote. */
export interface MemoryHolderState {
  readonly pid: number;
  readonly round: number;
  readonly digest: string;
  readonly ok: boolean;
}

/** What must survive a snapshot and restore. */
export interface GuestFingerprint {
  readonly hostname: string;
  readonly diskToken: string;
  readonly tmpfsDigest: string;
  readonly memory: MemoryHolderState | undefined;
  readonly counterPid: number | undefined;
}

function lines(text: string, want: number, what: string): string[] {
  const out = text.trim().split('\n');
  if (out.length < want)
    throw new Error(`${what}: expected ${want} lines, got ${JSON.stringify(text)}`);
  return out;
}

function integer(s: string | undefined, what: string): number {
  const n = Number(s);
  if (s === undefined || s === '' || !Number.isSafeInteger(n)) {
    throw new Error(`${what}: not an integer: ${JSON.stringify(s)}`);
  }
  return n;
}

/** Parses the output of {@link READ_COUNTER_AND_CLOCK}. */
export function parseCounterReading(text: string): CounterReading {
  const [count, uptime] = lines(text, 2, 'counter reading');
  const seconds = Number(uptime?.split(' ')[0]);
  if (!Number.isFinite(seconds)) throw new Error(`uptime: ${JSON.stringify(uptime)}`);
  return { count: integer(count, 'counter'), uptimeMs: Math.round(seconds * 1000) };
}

/** Parses a memory-holder line; undefined for `none`. */
export function parseMemoryHolder(line: string): MemoryHolderState | undefined {
  if (line.trim() === 'none') return undefined;
  const [pid, round, digest, ok] = line.trim().split(' ');
  if (digest === undefined || !/^[0-9a-f]{64}$/.test(digest)) {
    throw new Error(`memory holder: ${JSON.stringify(line)}`);
  }
  return {
    pid: integer(pid, 'memory holder pid'),
    round: integer(round, 'memory holder round'),
    digest,
    ok: ok === 'ok',
  };
}

/** Parses the output of {@link READ_FINGERPRINT}. */
export function parseFingerprint(text: string): GuestFingerprint {
  const [hostname, diskToken, tmpfsDigest, memory, counter] = lines(text, 5, 'fingerprint');
  return {
    hostname: hostname as string,
    diskToken: diskToken as string,
    tmpfsDigest: tmpfsDigest as string,
    memory: parseMemoryHolder(memory as string),
    counterPid: counter === 'none' ? undefined : integer(counter, 'counter pid'),
  };
}
