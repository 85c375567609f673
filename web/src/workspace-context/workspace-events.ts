import { useEffect, useRef } from 'preact/hooks';
import { EVENT_NAMES } from '../../../src/model/event-names';
import { workspacePath } from '../lib/api';
import type { Event } from '../../../src/model/schemas/events';
import type { Workspace } from './types';

/**
 * One record of the workspace's event stream (the same record the audit log
 * and webhooks carry): the API's `Event`, its `data` read loosely because
 * each event name carries its own payload (docs/EVENTS.md).
 */
export type WorkspaceEvent = Omit<Event, 'data'> & { data: Record<string, any> };

type Listener = (event: WorkspaceEvent) => void;

/** One stream per workspace, shared by every component listening to it (a page holds several: the inbox, panels, the files view), so the browser's few connections per origin are not spent on copies. */
const streams = new Map<string, { source: EventSource; listeners: Set<Listener>; openListeners: Set<() => void> }>();

function subscribe(path: string, listener: Listener, onOpen?: () => void): () => void {
  let stream = streams.get(path);
  if (!stream) {
    const source = new EventSource(path);
    const listeners = new Set<Listener>();
    const openListeners = new Set<() => void>();
    // On the first open and on every reconnection: what happened before it reached no one.
    source.onopen = () => {
      for (const each of [...openListeners]) each();
    };
    const dispatch = (message: MessageEvent) => {
      let record: WorkspaceEvent;
      try {
        record = JSON.parse(message.data) as WorkspaceEvent;
      } catch {
        return; // not an event record (a ping)
      }
      if (record && typeof record.event === 'string') for (const each of [...listeners]) each(record);
    };
    source.onmessage = dispatch;
    for (const name of EVENT_NAMES) source.addEventListener(name, dispatch as EventListener);
    stream = { source, listeners, openListeners };
    streams.set(path, stream);
  }
  stream.listeners.add(listener);
  if (onOpen) stream.openListeners.add(onOpen);
  const mine = stream;
  return () => {
    mine.listeners.delete(listener);
    if (onOpen) mine.openListeners.delete(onOpen);
    if (mine.listeners.size === 0) {
      mine.source.close();
      if (streams.get(path) === mine) streams.delete(path);
    }
  };
}

/**
 * Listens to the workspace's live events (`GET .../subscribe`, SSE) while the
 * component is mounted; `onEvent` sees the records `accept` lets through.
 * The server sends every record as a named SSE event, so the stream listens
 * for each name the service can emit (one list, `src/model/event-names.ts`).
 * `onOpen` is called each time the stream opens or reconnects, for a
 * component that must catch up on what happened before.
 */
export function useWorkspaceEvents(workspace: Workspace, accept: (name: string) => boolean, onEvent: (event: WorkspaceEvent) => void, onOpen?: () => void) {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const filter = useRef(accept);
  filter.current = accept;
  const opened = useRef(onOpen);
  opened.current = onOpen;
  const wantsOpen = onOpen !== undefined;
  useEffect(
    () =>
      subscribe(
        workspacePath(workspace.org.slug, workspace.slug, '/subscribe'),
        (record) => {
          if (filter.current(record.event)) handler.current(record);
        },
        wantsOpen ? () => opened.current?.() : undefined,
      ),
    [workspace.id, wantsOpen],
  );
}

/**
 * Reloads a listing when the events it shows arrive, once they pause for
 * `quietMs` (a folder archive is many events). The reload is the
 * component's `load` as it is when the timer fires: the tab, folder or query
 * shown then, not the one shown when the event came.
 */
export function useReloadOnEvents(
  workspace: Workspace,
  accept: (name: string) => boolean,
  load: () => Promise<unknown>,
  options: { quietMs: number; concerns?: (event: WorkspaceEvent) => boolean },
) {
  const currentLoad = useRef(load);
  currentLoad.current = load;
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useWorkspaceEvents(workspace, accept, (event) => {
    if (options.concerns && !options.concerns(event)) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void currentLoad.current(), options.quietMs);
  });
  useEffect(() => () => clearTimeout(timer.current), []);
}
