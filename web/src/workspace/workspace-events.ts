import { useEffect, useRef } from 'preact/hooks';
import { EVENT_NAMES } from '../../../src/events/names';
import { workspacePath } from '../lib/api';
import type { Principal } from '../session';
import type { Workspace } from './types';

/** One record of the workspace's event stream (the same record the audit log and webhooks carry). */
export interface WorkspaceEvent {
  eventId: string;
  event: string;
  ts: string;
  principal: Principal;
  surface?: { id: string; slug: string };
  data: Record<string, any>;
}

/**
 * Listens to the workspace's live events (`GET .../subscribe`, SSE) while the
 * component is mounted; `onEvent` sees the records `accept` lets through.
 * The server sends every record as a named SSE event, so a listener is added
 * for each name the service can emit (one list, `src/events/names.ts`).
 */
export function useWorkspaceEvents(workspace: Workspace, accept: (name: string) => boolean, onEvent: (event: WorkspaceEvent) => void) {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const filter = useRef(accept);
  filter.current = accept;
  useEffect(() => {
    const source = new EventSource(workspacePath(workspace.org.slug, workspace.slug, '/subscribe'));
    const listener = (message: MessageEvent) => {
      let record: WorkspaceEvent;
      try {
        record = JSON.parse(message.data) as WorkspaceEvent;
      } catch {
        return; // not an event record (a ping)
      }
      if (record && typeof record.event === 'string' && filter.current(record.event)) handler.current(record);
    };
    source.onmessage = listener;
    for (const name of EVENT_NAMES) source.addEventListener(name, listener as EventListener);
    return () => source.close();
  }, [workspace.id]);
}
