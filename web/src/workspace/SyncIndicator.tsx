import { useStore } from '../lib/store';
import { syncStatus } from '../sync/connection';
import { Icon } from '../ui/icons';

const LABELS = {
  online: { icon: 'cloud', text: 'Online', title: 'Every change is saved on the server.' },
  syncing: { icon: 'sync', text: 'Syncing', title: 'Sending and receiving changes…' },
  offline: { icon: 'cloudOff', text: 'Offline', title: 'Changes are kept on this device and sent when you reconnect.' },
} as const;

/** Online, syncing or offline: what happens to the edits being made right now. */
export function SyncIndicator() {
  const status = useStore(syncStatus);
  const label = LABELS[status];
  return (
    <span class={`sync-indicator sync-${status}`} data-status={status} title={label.title} role="status" aria-live="polite">
      <Icon name={label.icon} size={14} />
      <span>{label.text}</span>
    </span>
  );
}
