export type SseFrame = { id?: string; event?: string; data: any };

/** A real SSE client over fetch: collects frames until closed. */
export function openSse(url: string, headers: Record<string, string> = {}) {
  const frames: SseFrame[] = [];
  const controller = new AbortController();
  let status = 0;
  let onEnded!: () => void;
  const ended = new Promise<void>((resolve) => (onEnded = resolve));
  const ready = fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal }).then(async (response) => {
    status = response.status;
    if (!response.ok || !response.body) return;
    void (async () => {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const frame: Partial<SseFrame> & { lines: string[] } = { lines: [] };
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) frame.id = line.slice(4);
              else if (line.startsWith('event: ')) frame.event = line.slice(7);
              else if (line.startsWith('data: ')) frame.lines.push(line.slice(6));
            }
            if (frame.lines.length) frames.push({ id: frame.id, event: frame.event, data: JSON.parse(frame.lines.join('\n')) });
          }
        }
      } catch {
        // aborted
      } finally {
        onEnded();
      }
    })();
  });
  return {
    frames,
    ready: ready.then(() => status),
    /** Resolves when the server ends the stream (or it is aborted). */
    ended,
    close: () => controller.abort(),
  };
}
