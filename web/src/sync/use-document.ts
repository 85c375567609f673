import { useEffect, useState } from 'preact/hooks';
import { openDocument, peersOf, type OpenDocument } from './connection';

/** Opens a sync document for as long as the component shows it. */
export function useOpenDocument(name: string | null): OpenDocument | null {
  const [document, setDocument] = useState<OpenDocument | null>(null);
  useEffect(() => {
    if (!name) {
      setDocument(null);
      return;
    }
    const opened = openDocument(name);
    setDocument(opened);
    return () => opened.release();
  }, [name]);
  return document && document.name === name ? document : null;
}

/** The other people on a document, re-read whenever awareness changes. */
export function usePeers(document: OpenDocument | null) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const awareness = document?.provider.awareness;
    if (!awareness) return;
    const onChange = () => setTick((tick) => tick + 1);
    awareness.on('change', onChange);
    return () => awareness.off('change', onChange);
  }, [document]);
  return document ? peersOf(document) : [];
}
