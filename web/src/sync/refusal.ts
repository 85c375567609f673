import { useEffect, useState } from 'preact/hooks';
import type { OpenDocument } from './connection';

export type Refusal = { message: string; /** The local copy holds the refused change (sent again at every reconnect): offer to discard it. */ discardable: boolean };

/**
 * What the server's sync refusals mean to the person editing. The server
 * closes a document's connection with a reason whose first word names the
 * ceiling it hit (src/sync/ceilings.ts, docs/LIMITS.md); anything else is
 * not a ceiling and shows nothing here.
 */
const REFUSALS: Record<string, Refusal> = {
  too_many_connections: {
    message: 'Not connected: this document has too many open connections. Your changes stay on this device; try again in a little while.',
    discardable: false,
  },
  update_too_large: {
    message:
      'Not saved: your last change is too large for the server to accept. Discard your unsaved changes to go on from the saved copy, and make the change in smaller steps.',
    discardable: true,
  },
  document_too_large: {
    message:
      'Not saved: this document has reached the largest size the server accepts. Discard your unsaved changes to go on from the saved copy, then remove content or move some to another document.',
    discardable: true,
  },
  too_many_documents: { message: 'Not connected: the server has too many documents open right now. Try again in a little while.', discardable: false },
};

export function refusalOf(reason: string | undefined | null): Refusal | null {
  const ceiling = reason?.split(':')[0];
  return ceiling && Object.hasOwn(REFUSALS, ceiling) ? REFUSALS[ceiling]! : null;
}

export function refusalMessage(reason: string | undefined | null): string | null {
  return refusalOf(reason)?.message ?? null;
}

/** The refusal the server closed this document's connection with, until it syncs again. */
export function useRefusal(document: OpenDocument | null): Refusal | null {
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  useEffect(() => {
    setRefusal(null);
    const provider = document?.provider;
    if (!provider) return;
    const show = (reason: string | undefined) => {
      const refused = refusalOf(reason);
      if (refused) setRefusal(refused);
    };
    const onClose = ({ event }: { event?: { reason?: string } }) => show(event?.reason);
    const onFailed = ({ reason }: { reason?: string }) => show(reason);
    const onSynced = () => setRefusal(null);
    provider.on('close', onClose);
    provider.on('authenticationFailed', onFailed);
    provider.on('synced', onSynced);
    return () => {
      provider.off('close', onClose);
      provider.off('authenticationFailed', onFailed);
      provider.off('synced', onSynced);
    };
  }, [document]);
  return refusal;
}
