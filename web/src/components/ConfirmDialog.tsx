// A modal question before something that cannot be undone (revoke a key, remove a member). The native
// <dialog> traps focus, closes on Escape and returns focus to what opened it.
import { useEffect, useRef, type ReactNode } from 'react';
import { useMessages } from '../i18n';

export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const m = useMessages();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal?.();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="confirm-title" onCancel={props.onCancel} onClose={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div className="dialog-actions">
        <button type="button" className="button secondary" onClick={props.onCancel} autoFocus>
          {m.common.cancel}
        </button>
        <button type="button" className="button danger" onClick={props.onConfirm} disabled={props.busy}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
