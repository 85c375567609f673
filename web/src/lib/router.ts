import { h, type ComponentChildren } from 'preact';
import { createStore, useStore } from './store';

/**
 * A small history router: the location is a store, links push state, and
 * pages match on path segments. App paths are `/{orgSlug}`,
 * `/{orgSlug}/{workspaceSlug}[/{surfaceSlug}]`, `/signin`, `/settings`, `/settings/billing`, `/settings/webhooks`,
 * `/invites/{token}` and `/org-invites/{token}` (the server answers the
 * app's HTML for any of them).
 */
const location = createStore(currentLocation());

function currentLocation() {
  return { path: window.location.pathname, search: window.location.search, hash: window.location.hash };
}

window.addEventListener('popstate', () => location.set(currentLocation()));

export function navigate(to: string, options: { replace?: boolean } = {}) {
  if (to === window.location.pathname + window.location.search + window.location.hash) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  location.set(currentLocation());
  window.scrollTo(0, 0);
}

export function useLocation() {
  return useStore(location);
}

export function segmentsOf(path: string): string[] {
  return path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
}

export function Link(props: { href: string; class?: string; children: ComponentChildren; title?: string; 'aria-current'?: string }) {
  return h(
    'a',
    {
      ...props,
      onClick: (event: MouseEvent) => {
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(props.href);
      },
    },
    props.children,
  );
}
