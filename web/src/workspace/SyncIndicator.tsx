import { useStore } from '../lib/store';
import { syncStatus, unsavedEdits } from '../sync/connection';
import { Icon } from '../ui/icons';

/**
 * "Saved" is said only once the server confirmed it holds every change made
 * here (docs/WEB.md); while connected and not confirmed yet it is "Saving…"
 * when this device has edits in flight, "Syncing…" when it is only catching up.
 */
function labelFor(status: 'saved' | 'saving' | 'offline', unsaved: boolean) {
  if (status === 'saved') return { icon: 'cloud', text: 'Saved', title: 'The server has every change made here.' } as const;
  if (status === 'saving')
    return unsaved
      ? ({ icon: 'sync', text: 'Saving…', title: 'Sending changes; the server has not confirmed them all yet.' } as const)
      : ({ icon: 'sync', text: 'Syncing…', title: 'Checking with the server.' } as const);
  return unsaved
    ? ({ icon: 'cloudOff', text: 'Offline — unsaved', title: 'Offline: the changes made here are kept on this device and sent when you reconnect.' } as const)
    : ({ icon: 'cloudOff', text: 'Offline', title: 'Not connected. Changes made now are kept on this device and sent when you reconnect.' } as const);
}

/** Saved, saving or offline: what happens to the edits being made right now. */
export function SyncIndicator() {
  const status = useStore(syncStatus);
  const unsaved = useStore(unsavedEdits);
  const label = labelFor(status, unsaved);
  return (
    <span class={`sync-indicator sync-${status}`} data-status={status} data-unsaved={unsaved ? 'true' : 'false'} title={label.title} role="status" aria-live="polite">
      <Icon name={label.icon} size={14} />
      <span>{label.text}</span>
    </span>
  );
}
