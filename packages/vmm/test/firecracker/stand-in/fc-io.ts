/**
 * The stand-in's contact with the host (test code): resolving paths as a
 * (possibly jailed) Firecracker sees them, opening files the way
 * Firecracker does when a device is configured, checking that a tap exists
 * in the process's network namespace, the logger and metrics sinks, and
 * the vsock device's listening socket.
 *
 * @module
 */
import { closeSync, constants, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

/** Paths as the VMM sees them: inside `root` when jailed. */
export class PathView {
  readonly root: string | null;

  constructor(root: string | null) {
    this.root = root;
  }

  /** The host path of a path the VMM was given. */
  host(path: string): string {
    // inside a chroot, relative paths start at the root too (the jail's cwd)
    return this.root === null ? path : join(this.root, path);
  }

  /** Opens and closes `path` as Firecracker would; returns the OS error text, or undefined. */
  check(path: string, writable: boolean): string | undefined {
    try {
      closeSync(openSync(this.host(path), writable ? 'r+' : 'r'));
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }
}

/** Whether a network interface exists in this process's network namespace. */
export function tapExists(name: string): boolean {
  // /proc/self/net follows the reader's namespace (unlike /sys/class/net)
  const dev = readFileSync('/proc/self/net/dev', 'utf8');
  return dev.split('\n').some((line) => line.trim().startsWith(`${name}:`));
}

/** A log or metrics sink: a FIFO or file opened write-only, non-blocking (lines may drop). */
export class LineSink {
  readonly #fd: number;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** Opens `hostPath`; throws with the OS error (ENXIO when a FIFO has no reader). */
  static open(hostPath: string): LineSink {
    const flags = constants.O_WRONLY | constants.O_NONBLOCK | constants.O_APPEND;
    return new LineSink(openSync(hostPath, flags));
  }

  /** Writes one line; a full pipe drops it, as Firecracker's non-blocking writes do. */
  line(text: string): void {
    try {
      writeSync(this.#fd, `${text}\n`);
    } catch {
      // EAGAIN: dropped
    }
  }
}

/**
 * The vsock device's host socket: accepts `CONNECT <port>\n`, answers
 * `OK <n>\n` and then echoes (a stand-in for a guest service on that port).
 */
export function listenVsock(hostPath: string): Server {
  rmSync(hostPath, { force: true });
  const server = createServer((sock) => {
    let connected = false;
    sock.on('data', (chunk: Buffer) => {
      if (connected) {
        sock.write(chunk);
        return;
      }
      const m = /^CONNECT (\d+)\n/.exec(chunk.toString('utf8'));
      if (m === null) {
        sock.destroy();
        return;
      }
      connected = true;
      sock.write(`OK ${1_073_741_824 + Number(m[1])}\n`);
    });
    sock.on('error', () => undefined);
  });
  server.listen(hostPath);
  server.unref();
  return server;
}
