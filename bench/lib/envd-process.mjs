/**
 * A minimal client of envd's `process.Process/Start` (Connect protocol,
 * server streaming, JSON codec) for benchmarks that must see the wire
 * themselves: through the node's proxy (`E2b-Sandbox-Id` header) or to a
 * guest's envd directly. It waits for the stream to end and returns the
 * exit code and stdout. Figures of the real `e2b` SDK come from the SDK
 * itself (throughput.mjs); this client avoids its per-call overhead where
 * only "the sandbox answers" matters.
 *
 * @module
 */

/** Frames of a Connect streaming body: 1 flag byte, 4 length bytes (big endian), payload. */
export function* connectFrames(buf) {
  let at = 0;
  while (at + 5 <= buf.length) {
    const flags = buf[at];
    const len = buf.readUInt32BE(at + 1);
    const payload = buf.subarray(at + 5, at + 5 + len);
    at += 5 + len;
    yield { end: (flags & 0x02) !== 0, json: len === 0 ? {} : JSON.parse(payload.toString()) };
  }
}

/** One request frame holding `message` as JSON. */
export function connectEnvelope(message) {
  const body = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/**
 * Reads a Start response body: exit code, stdout, and the error of the
 * end-of-stream frame if there was one.
 */
export function parseStartResponse(buf) {
  let exitCode;
  let stdout = '';
  let error;
  for (const f of connectFrames(buf)) {
    if (f.end) {
      if (f.json.error !== undefined) error = f.json.error.message ?? f.json.error.code;
      continue;
    }
    const ev = f.json.event ?? {};
    if (ev.data?.stdout !== undefined) stdout += Buffer.from(ev.data.stdout, 'base64').toString();
    if (ev.end !== undefined) exitCode = ev.end.exitCode ?? 0;
  }
  return { exitCode, stdout, error };
}

/**
 * Runs `/bin/bash -c cmd` (or `cmd` with `args` when given) and waits for
 * it to end.
 * @param {string} baseUrl the proxy (node URL) or envd itself
 * @param {{ cmd: string, args?: string[], headers?: Record<string, string>, timeoutMs?: number, user?: string }} o
 * @returns {Promise<{ exitCode: number, stdout: string }>}
 * @throws {Error} on an HTTP error, a Connect error or a missing end event.
 */
export async function startProcess(baseUrl, o) {
  const proc =
    o.args === undefined ? { cmd: '/bin/bash', args: ['-c', o.cmd] } : { cmd: o.cmd, args: o.args };
  const auth = o.user === undefined ? {} : { authorization: `Basic ${btoa(`${o.user}:`)}` };
  const res = await fetch(`${baseUrl}/process.Process/Start`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+json', ...auth, ...o.headers },
    body: connectEnvelope({ process: proc, stdin: false }),
    signal: AbortSignal.timeout(o.timeoutMs ?? 120_000),
  });
  const buf = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`process start: HTTP ${res.status} ${buf.toString()}`);
  const r = parseStartResponse(buf);
  if (r.error !== undefined) throw new Error(`process start: ${r.error}`);
  if (r.exitCode === undefined)
    throw new Error('process start: the stream ended without an end event');
  return { exitCode: r.exitCode, stdout: r.stdout };
}
