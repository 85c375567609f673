import { useEffect, useState } from 'preact/hooks';
import type { OpenDocument } from './connection';

/**
 * What the server's sync refusals mean to the person editing. The server
 * closes a document's connection with a reason whose first word names the
 * ceiling it hit (src/sync/ceilings.ts, docs/LIMITS.md); anything else is
 * not a ceiling and shows nothing here.
 */
export function refusalMessage(reason: string | undefined | null): string | null {
  switch (reason?.split(':')[0]) {
    case 'too_many_connections':
      return 'Not connected: this document has too many open connections. Your changes stay on this device; try again in a little while.';
    case 'update_too_large':
      return 'Not saved: your last change is too large for the server to accept. Discard your unsaved changes to go on from the saved copy, and make the change in smaller steps.';
    case 'document_too_large':
      return 'Not saved: this document has reached the largest size the server accepts. Discard your unsaved changes to go on from the saved copy, then remove content or move some to another document.';
    case 'too_many_documents':
      return 'Not connected: the server has too many documents open right now. Try again in a little while.';
    default:
      return null;
  }
}

/** Refusals of a change this device holds: it is sent again at every reconnect until the local copy is discarded. */
const REFUSED_CHANGES = new Set(['update_too_large', 'document_too_large']);

export type Refusal = { message: string; /** The local copy holds the refused change: offer to discard it. */ discardable: boolean };

/** The refusal the server closed this document's connection with, until it syncs again. */
export function useRefusal(document: OpenDocument | null): Refusal | null {
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  useEffect(() => {
    setRefusal(null);
    const provider = document?.provider;
    if (!provider) return;
    const show = (reason: string | undefined) => {
      const message = refusalMessage(reason);
      if (message) setRefusal({ message, discardable: REFUSED_CHANGES.has(reason!.split(':')[0]!) });
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
