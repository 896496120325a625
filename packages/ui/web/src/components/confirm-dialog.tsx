/**
 * A modal confirmation for actions that change or destroy something
 * (pause, fork, snapshot, kill, drain). Children add inputs (a snapshot
 * name); the action runs on Confirm and its error is shown in the dialog.
 *
 * @module
 */
import { useState, type ReactNode } from 'react';

/** The dialog. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger = false,
  onConfirm,
  onClose,
}: {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const confirm = (): void => {
    setBusy(true);
    setError(undefined);
    onConfirm().then(onClose, (err: unknown) => {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    });
  };
  return (
    <div className="modal-backdrop">
      <div className="modal" role="dialog" aria-label={title} data-testid="confirm-dialog">
        <h3>{title}</h3>
        <div className="modal-body">{children}</div>
        {error !== undefined && <div className="error">{error}</div>}
        <div className="modal-actions">
          <button type="button" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button
            type="button"
            className={danger ? 'danger' : 'primary'}
            onClick={confirm}
            disabled={busy}
            data-testid="confirm"
          >
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
