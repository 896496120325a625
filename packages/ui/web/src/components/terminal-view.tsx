/**
 * A terminal into a sandbox: xterm.js in the page, bytes over the
 * dashboard's WebSocket `/ui/terminal/{id}` (the server opens a PTY through
 * envd and relays; the page never sees a token). Binary frames are
 * terminal bytes both ways; text frames are JSON control messages
 * (`resize` from here; `ready`, `exit`, `error` from the server).
 *
 * @module
 */
import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';

interface Control {
  readonly type?: string;
  readonly message?: string;
  readonly status?: string;
  readonly exitCode?: number;
}

function socketUrl(id: string, cols: number, rows: number): string {
  const proto = window.location.protocol === 'https:' ? 'wss' : 'ws';
  const q = `cols=${cols}&rows=${rows}`;
  return `${proto}://${window.location.host}/ui/terminal/${encodeURIComponent(id)}?${q}`;
}

function describe(c: Control): string | undefined {
  if (c.type === 'ready') return 'connected';
  if (c.type === 'exit') return `shell ended (${c.status ?? 'exit'} ${c.exitCode ?? ''})`;
  if (c.type === 'error') return `error: ${c.message ?? 'terminal failed'}`;
  return undefined;
}

/** Opens the terminal while mounted; closing the page kills the shell. */
export function TerminalView({ sandboxId }: { sandboxId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState('connecting…');
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const term = new Terminal({ convertEol: false, cursorBlink: true, fontSize: 13 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();
    const ws = new WebSocket(socketUrl(sandboxId, term.cols, term.rows));
    ws.binaryType = 'arraybuffer';
    const encoder = new TextEncoder();
    ws.onmessage = (e: MessageEvent<ArrayBuffer | string>) => {
      if (typeof e.data !== 'string') return term.write(new Uint8Array(e.data));
      const shown = describe(JSON.parse(e.data) as Control);
      if (shown !== undefined) setStatus(shown);
    };
    ws.onclose = () => setStatus((s) => (s === 'connected' ? 'disconnected' : s));
    const input = term.onData((d) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(d));
    });
    const resized = term.onResize(({ cols, rows }) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols, rows }));
    });
    const onWindow = (): void => fit.fit();
    window.addEventListener('resize', onWindow);
    term.focus();
    return () => {
      window.removeEventListener('resize', onWindow);
      input.dispose();
      resized.dispose();
      ws.close();
      term.dispose();
    };
  }, [sandboxId]);
  return (
    <div className="terminal-panel">
      <div className="muted" data-testid="terminal-status">
        {status}
      </div>
      <div className="terminal" ref={box} data-testid="terminal" />
    </div>
  );
}
