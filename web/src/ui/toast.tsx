import { createStore, useStore } from '../lib/store';
import { messageOf } from '../lib/api';
import { Icon } from './icons';

export interface Toast {
  id: number;
  kind: 'error' | 'info' | 'success';
  message: string;
}

const toasts = createStore<Toast[]>([]);
let nextId = 1;

/** Shows a message for a while; returns its id, to take it down sooner with `dismissToast`. */
export function showToast(message: string, kind: Toast['kind'] = 'info', ttlMs = kind === 'error' ? 7000 : 3500): number {
  const id = nextId++;
  toasts.update((list) => [...list.slice(-3), { id, kind, message }]);
  setTimeout(() => dismissToast(id), ttlMs);
  return id;
}

/** Every failed action ends here: the user sees what went wrong. */
export function showError(error: unknown) {
  showToast(messageOf(error), 'error');
}

export function dismissToast(id: number) {
  toasts.update((list) => list.filter((toast) => toast.id !== id));
}

export function Toasts() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((toast) => (
        <div key={toast.id} class={`toast toast-${toast.kind}`} role={toast.kind === 'error' ? 'alert' : undefined}>
          <span>{toast.message}</span>
          <button class="icon-button" aria-label="Dismiss" onClick={() => dismissToast(toast.id)}>
            <Icon name="x" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}
