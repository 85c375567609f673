import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { Button, EmptyState } from '../ui/primitives';

/**
 * What a page shows when what it needs never reached this device and the
 * server cannot be reached: said plainly, with a retry, and retried by
 * itself when the browser says it is back online.
 */
export function OfflineNotice(props: { what: string; onRetry: () => void; action?: ComponentChildren }) {
  useEffect(() => {
    window.addEventListener('online', props.onRetry);
    return () => window.removeEventListener('online', props.onRetry);
  }, [props.onRetry]);
  return (
    <div class="page offline-page" role="status">
      <EmptyState
        icon="cloudOff"
        title="You are offline"
        action={
          <div class="offline-actions">
            <Button onClick={props.onRetry}>Try again</Button>
            {props.action}
          </div>
        }
      >
        {props.what} It opens as soon as the connection is back.
      </EmptyState>
    </div>
  );
}
