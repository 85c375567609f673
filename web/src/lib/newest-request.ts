import { useMemo, useRef } from 'preact/hooks';

/**
 * Tickets for a component's requests of which only the newest may show its
 * answer: an older one (another tab, folder or query, or a reload an event
 * scheduled before the user switched) can answer last and would otherwise
 * overwrite the newer answer.
 */
export function useNewestRequest() {
  const newest = useRef(0);
  return useMemo(
    () => ({
      start: () => ++newest.current,
      isNewest: (ticket: number) => ticket === newest.current,
    }),
    [],
  );
}
