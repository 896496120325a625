/**
 * The actions of a sandbox — pause, resume, fork, snapshot, kill — each
 * behind a confirmation dialog. Results show up through the live feed (no
 * reload); a fork opens the child's page, a kill returns to the list.
 *
 * @module
 */
import { useState } from 'react';
import { api } from '../api.js';
import { navigate } from '../router.js';
import type { UiSandbox } from '../types.js';
import { ConfirmDialog } from './confirm-dialog.js';

type Action = 'pause' | 'resume' | 'fork' | 'snapshot' | 'kill';

/** One entry of a fork's answer: the child, or why it failed. */
interface ForkResult {
  readonly sandbox?: { readonly sandboxID: string };
  readonly error?: { readonly message?: string };
}

async function fork(base: string): Promise<void> {
  const [first] = await api<ForkResult[]>('POST', `${base}/fork`, { count: 1 });
  if (first?.sandbox === undefined) throw new Error(first?.error?.message ?? 'the fork failed');
  navigate('sandboxes', first.sandbox.sandboxID);
}

function run(s: UiSandbox, action: Action, name: string): Promise<unknown> {
  const base = `/sandboxes/${encodeURIComponent(s.sandboxID)}`;
  switch (action) {
    case 'pause':
      return api('POST', `${base}/pause`);
    case 'resume':
      return api('POST', `${base}/resume`, {});
    case 'fork':
      return fork(base);
    case 'snapshot':
      return api('POST', `${base}/snapshots`, name.trim() === '' ? {} : { name: name.trim() });
    case 'kill':
      return api('DELETE', base).then(() => navigate('sandboxes'));
  }
}

const TEXT: Readonly<Record<Action, string>> = {
  pause: 'Pause the sandbox? Its memory and disk are saved; the machine stops.',
  resume: 'Resume the sandbox on a new machine from its saved state?',
  fork: 'Fork the sandbox? A child starts from a copy of its memory and disk.',
  snapshot: 'Take a snapshot? New sandboxes can start from it later.',
  kill: 'Kill the sandbox? Its state is deleted; this cannot be undone.',
};

/** The action buttons and their dialog. */
export function SandboxActions({ sandbox }: { sandbox: UiSandbox }) {
  const [open, setOpen] = useState<Action | undefined>(undefined);
  const [name, setName] = useState('');
  const running = sandbox.state === 'running';
  const shown: Action[] = running ? ['pause', 'fork', 'snapshot', 'kill'] : ['resume', 'kill'];
  return (
    <div className="actions">
      {shown.map((a) => (
        <button
          key={a}
          type="button"
          className={a === 'kill' ? 'danger' : ''}
          onClick={() => setOpen(a)}
          data-testid={`action-${a}`}
        >
          {a}
        </button>
      ))}
      {open !== undefined && (
        <ConfirmDialog
          title={`${open} ${sandbox.sandboxID}`}
          confirmLabel={open}
          danger={open === 'kill'}
          onConfirm={() => run(sandbox, open, name)}
          onClose={() => setOpen(undefined)}
        >
          <p>{TEXT[open]}</p>
          {open === 'snapshot' && (
            <input
              placeholder="name (optional)"
              value={name}
              onChange={(e) => setName(e.target.value)}
              data-testid="snapshot-name"
            />
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
