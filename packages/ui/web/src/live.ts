/**
 * The live state of the dashboard: one `EventSource` on `/ui/events`
 * (server-sent events) feeding sandboxes, nodes, templates, snapshots and
 * the metrics history into React state. The browser reconnects by itself
 * after a network error; when the server ends the stream because the
 * session is gone (`unauthorized`, or a 401 at connect), the app is told.
 *
 * @module
 */
import { useEffect, useState } from 'react';
import { currentSession, sessionLost } from './api.js';
import type { HistoryPoint, NodeView, TemplateView, UiSandbox, UiSnapshot } from './types.js';

/** Everything the pages show live. */
export interface LiveState {
  readonly connected: boolean;
  /** The first `sandboxes` event arrived. */
  readonly loaded: boolean;
  readonly sandboxes: readonly UiSandbox[];
  readonly nodes: readonly NodeView[];
  readonly templates: readonly TemplateView[];
  readonly snapshots: readonly UiSnapshot[];
  readonly history: readonly HistoryPoint[];
  readonly historyIntervalMs: number | null;
  /** The last feed failure, cleared when it recovers. */
  readonly error: string | undefined;
}

const EMPTY: LiveState = {
  connected: false,
  loaded: false,
  sandboxes: [],
  nodes: [],
  templates: [],
  snapshots: [],
  history: [],
  historyIntervalMs: null,
  error: undefined,
};

/** Most points kept (an hour at 5 s, with room). */
const MAX_POINTS = 1000;
const HOUR_MS = 3600_000;

type Update = (s: LiveState) => LiveState;

function handlers(update: (fn: Update) => void): Record<string, (data: unknown) => void> {
  return {
    hello: (d) => {
      const h = d as { historyIntervalMs?: number | null };
      update((s) => ({ ...s, connected: true, historyIntervalMs: h.historyIntervalMs ?? null }));
    },
    history: (d) => update((s) => ({ ...s, history: d as HistoryPoint[] })),
    metrics: (d) =>
      update((s) => {
        const p = d as HistoryPoint;
        const kept = s.history.filter((h) => h.t >= p.t - HOUR_MS).slice(-MAX_POINTS + 1);
        return { ...s, history: [...kept, p] };
      }),
    sandboxes: (d) => update((s) => ({ ...s, loaded: true, sandboxes: d as UiSandbox[] })),
    nodes: (d) => update((s) => ({ ...s, nodes: d as NodeView[] })),
    templates: (d) => update((s) => ({ ...s, templates: d as TemplateView[] })),
    snapshots: (d) => update((s) => ({ ...s, snapshots: d as UiSnapshot[] })),
    'feed-error': (d) => update((s) => ({ ...s, error: (d as { message?: string }).message })),
    'feed-ok': () => update((s) => ({ ...s, error: undefined })),
    unauthorized: () => sessionLost(),
  };
}

/** Subscribes to the live events while mounted. */
export function useLive(): LiveState {
  const [state, setState] = useState<LiveState>(EMPTY);
  useEffect(() => {
    const source = new EventSource('/ui/events');
    for (const [event, handle] of Object.entries(handlers(setState))) {
      source.addEventListener(event, (e) => {
        handle(JSON.parse((e as MessageEvent<string>).data) as unknown);
      });
    }
    source.onerror = () => {
      setState((s) => ({ ...s, connected: false }));
      // A closed source was refused (401): check whether the session is gone.
      if (source.readyState === EventSource.CLOSED) {
        void currentSession().then((s) => s === undefined && sessionLost());
      }
    };
    return () => source.close();
  }, []);
  return state;
}
