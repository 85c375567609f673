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

export function showToast(message: string, kind: Toast['kind'] = 'info', ttlMs = kind === 'error' ? 7000 : 3500) {
  const id = nextId++;
  toasts.update((list) => [...list.slice(-3), { id, kind, message }]);
  setTimeout(() => dismiss(id), ttlMs);
}

/** Every failed action ends here: the user sees what went wrong. */
export function showError(error: unknown) {
  showToast(messageOf(error), 'error');
}

function dismiss(id: number) {
  toasts.update((list) => list.filter((toast) => toast.id !== id));
}

export function Toasts() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((toast) => (
        <div key={toast.id} class={`toast toast-${toast.kind}`} role={toast.kind === 'error' ? 'alert' : undefined}>
          <span>{toast.message}</span>
          <button class="icon-button" aria-label="Dismiss" onClick={() => dismiss(toast.id)}>
            <Icon name="x" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}
