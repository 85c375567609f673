import { h, type ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Button, Spinner } from './primitives';

export type LazyComponent<P> = ComponentType<P> & {
  /** Starts fetching the code now (it is then ready, or on its way, when first drawn). */
  preload(): Promise<unknown>;
};

/**
 * A component whose code is fetched the first time it is drawn: each
 * `import()` is a file of its own in the build (docs/WEB.md "Loading"), so
 * the first page carries only what it shows. A spinner stands in while it
 * comes; a failed fetch (offline before the service worker had it) says so
 * and offers to try again.
 */
export function lazy<P>(load: () => Promise<ComponentType<P>>, what: string): LazyComponent<P> {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  const fetchCode = () =>
    (pending ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        pending = null;
        throw error;
      },
    ));

  function Lazy(props: P) {
    const [failed, setFailed] = useState(false);
    const [, setReady] = useState(0);
    const drawn = loaded !== null;
    useEffect(() => {
      if (drawn || failed) return;
      let live = true;
      // Re-drawn once the code is here, even when it came (a preload) between this drawing and this effect.
      fetchCode().then(
        () => live && setReady((n) => n + 1),
        () => live && setFailed(true),
      );
      return () => {
        live = false;
      };
    }, [drawn, failed]);
    if (loaded) return h(loaded as ComponentType<any>, props as any);
    if (failed) {
      return (
        <div class="lazy-failed" role="alert">
          <span>{what} could not be loaded.</span>
          <Button variant="ghost" onClick={() => setFailed(false)}>
            Try again
          </Button>
        </div>
      );
    }
    return <Spinner />;
  }
  return Object.assign(Lazy, { preload: () => fetchCode().catch(() => undefined) });
}
